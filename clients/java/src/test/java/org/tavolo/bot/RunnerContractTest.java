package org.tavolo.bot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tavolo.v1.Referee.Action;
import tavolo.v1.Referee.ActionKind;
import tavolo.v1.Referee.DecisionRequest;
import tavolo.v1.Referee.Event;
import tavolo.v1.Referee.GameStarted;
import tavolo.v1.Referee.MatchOver;
import tavolo.v1.Referee.Observation;
import tavolo.v1.Referee.PlayRequest;
import tavolo.v1.Referee.PlayResponse;
import tavolo.v1.Referee.Welcome;
import tavolo.v1.RefereeServiceGrpc;

/**
 * The contract every SDK keeps: which refusals end a stream at once and which are retried, one bot
 * per ticket, and the seed texts.
 */
class RunnerContractTest {
  // The referee's details texts (docs/protocol.md 4.6): a reason word, then the explanation.
  static final String UNKNOWN_TICKET = "unknown_ticket: unknown ticket";
  static final String TICKET_USED = "ticket_used: this ticket has been used and its seat is closed";
  static final String SEAT_TAKEN = "seat_taken: a connection for this seat is already open";
  static final String WRONG_SOCKET = "wrong_socket: this ticket works only on its own slot's socket";
  static final String PROCESS_GONE = "process_gone: the bot process this ticket was made for has ended";

  private Server server;

  @AfterEach
  void stopServer() throws InterruptedException {
    if (server != null) {
      server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  /**
   * A referee that plays a one-decision match on each stream of a known ticket. {@code refusal}
   * maps the number of a ticket's stream (from 1) to the status that refuses it, or null; with
   * {@code breakFirst}, the first stream it lets through breaks (UNAVAILABLE) after its request.
   */
  static final class FakeReferee extends RefereeServiceGrpc.RefereeServiceImplBase {
    final List<String> tickets;
    final IntFunction<Status> refusal;
    final boolean breakFirst;
    /** Streams opened with a Hello, per ticket, refused ones included. */
    final Map<String, AtomicInteger> attempts = new ConcurrentHashMap<>();
    /** Streams let through, per ticket. */
    final Map<String, AtomicInteger> played = new ConcurrentHashMap<>();

    FakeReferee(List<String> tickets, IntFunction<Status> refusal, boolean breakFirst) {
      this.tickets = tickets;
      this.refusal = refusal;
      this.breakFirst = breakFirst;
    }

    int attempts(String ticket) {
      return attempts.getOrDefault(ticket, new AtomicInteger()).get();
    }

    int played(String ticket) {
      return played.getOrDefault(ticket, new AtomicInteger()).get();
    }

    @Override
    public StreamObserver<PlayRequest> play(StreamObserver<PlayResponse> out) {
      return new StreamObserver<>() {
        @Override
        public void onNext(PlayRequest message) {
          if (message.hasHello()) {
            String ticket = message.getHello().getTicket();
            int attempt = attempts.computeIfAbsent(ticket, t -> new AtomicInteger()).incrementAndGet();
            if (!tickets.contains(ticket)) {
              out.onError(Status.UNAUTHENTICATED.withDescription(UNKNOWN_TICKET).asRuntimeException());
              return;
            }
            Status refused = refusal.apply(attempt);
            if (refused != null) {
              out.onError(refused.asRuntimeException());
              return;
            }
            int stream = played.computeIfAbsent(ticket, t -> new AtomicInteger()).incrementAndGet();
            Action card = Action.newBuilder().setId(7).setKind(ActionKind.ACTION_KIND_PLAY).setCard("AS").setText("AS").build();
            DecisionRequest request =
                DecisionRequest.newBuilder()
                    .setRequestId(1)
                    .setDeadlineMs(1000)
                    .setObservation(Observation.newBuilder().setSeat(0).setPlayers(4).addHand("AS"))
                    .addLegalActions(card)
                    .build();
            PlayResponse.Builder first = PlayResponse.newBuilder().setRequest(request);
            first.addEvents(Event.newBuilder().setWelcome(Welcome.newBuilder().setMatchId("m1")));
            if (stream == 1) {
              first.addEvents(Event.newBuilder().setGameStarted(GameStarted.newBuilder().setGame(1)));
            }
            out.onNext(first.build());
            if (breakFirst && stream == 1) {
              out.onError(Status.UNAVAILABLE.withDescription("referee restarting").asRuntimeException());
            }
          } else if (message.hasDecision()) {
            Event over = Event.newBuilder().setMatchOver(MatchOver.newBuilder().setMatchId("m1")).build();
            out.onNext(PlayResponse.newBuilder().addEvents(over).build());
            out.onCompleted();
          }
        }

        @Override
        public void onError(Throwable t) {}

        @Override
        public void onCompleted() {}
      };
    }
  }

  private String serve(FakeReferee referee) throws Exception {
    server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).addService(referee).build().start();
    return "127.0.0.1:" + ((InetSocketAddress) server.getListenSockets().get(0)).getPort();
  }

  private static Runner.Settings settings(String referee, String tickets, String... more) throws Runner.ConfigException {
    Map<String, String> env = new HashMap<>();
    env.put("TAVOLO_REFEREE", referee);
    env.put("TAVOLO_TICKET", tickets);
    env.put("TAVOLO_RECONNECT_SECONDS", "5");
    for (int i = 0; i < more.length; i += 2) {
      env.put(more[i], more[i + 1]);
    }
    return Runner.Settings.from(env);
  }

  /** A run's exit code, what it wrote to stderr, and how long it took. */
  record Outcome(int code, List<String> lines, long millis) {}

  /** Runs the bots, catching what they say on stderr (RunnerTlsTest uses it too). */
  static Outcome run(Bot.Factory factory, Runner.Settings settings) {
    PrintStream saved = System.err;
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    long start = System.nanoTime();
    int code;
    try {
      System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
      code = Runner.run(factory, settings);
    } finally {
      System.setErr(saved);
    }
    long millis = (System.nanoTime() - start) / 1_000_000;
    String text = err.toString(StandardCharsets.UTF_8);
    return new Outcome(code, text.isEmpty() ? List.of() : List.of(text.split("\n")), millis);
  }

  private static Bot.Factory firstLegal() {
    return slot -> turn -> turn.legal().get(0).getId();
  }

  private void assertEndsAtOnce(Status refusal, String reason) throws Exception {
    FakeReferee referee = new FakeReferee(List.of("tk"), attempt -> attempt == 1 ? refusal : null, false);
    Outcome out = run(firstLegal(), settings(serve(referee), "tk"));
    stopServer();
    assertEquals(Runner.EXIT_FAILED, out.code());
    assertEquals(1, referee.attempts("tk"), "one connection attempt, no retry: " + reason);
    assertTrue(out.millis() < 3000, "ended at once: " + out.millis() + " ms");
    assertEquals(1, out.lines().size(), out.lines().toString());
    String line = out.lines().get(0);
    assertTrue(line.startsWith("tavolo-bot: the referee at 127.0.0.1:"), line);
    assertTrue(line.contains("ended the stream: " + refusal.getCode().name() + ": " + refusal.getDescription()), line);
    assertTrue(line.contains(reason), line);
  }

  @Test
  void finalRefusalsEndTheStreamAtOnce() throws Exception {
    assertEndsAtOnce(Status.ALREADY_EXISTS.withDescription(TICKET_USED), "ticket_used");
    assertEndsAtOnce(Status.PERMISSION_DENIED.withDescription(WRONG_SOCKET), "wrong_socket");
    assertEndsAtOnce(Status.PERMISSION_DENIED.withDescription(PROCESS_GONE), "process_gone");
    assertEndsAtOnce(Status.UNAUTHENTICATED.withDescription(UNKNOWN_TICKET), "unknown_ticket");
  }

  @Test
  void ticketUsedAfterABreakIsNotRetried() throws Exception {
    // The stream breaks, and the reconnection finds the match over: no more attempts.
    Status used = Status.ALREADY_EXISTS.withDescription(TICKET_USED);
    FakeReferee referee = new FakeReferee(List.of("tk"), attempt -> attempt == 2 ? used : null, true);
    Outcome out = run(firstLegal(), settings(serve(referee), "tk"));
    assertEquals(Runner.EXIT_FAILED, out.code());
    assertEquals(2, referee.attempts("tk"));
    assertEquals(1, referee.played("tk"));
    assertTrue(out.millis() < 3000, out.millis() + " ms");
    assertEquals(1, out.lines().size(), out.lines().toString());
    assertTrue(out.lines().get(0).contains("ALREADY_EXISTS: ticket_used"), out.lines().get(0));
    assertTrue(out.lines().get(0).contains("(the match of this ticket is over)"), out.lines().get(0));
  }

  @Test
  void seatTakenIsRetried() throws Exception {
    Status taken = Status.ALREADY_EXISTS.withDescription(SEAT_TAKEN);
    FakeReferee referee = new FakeReferee(List.of("tk"), attempt -> attempt <= 2 ? taken : null, false);
    Outcome out = run(firstLegal(), settings(serve(referee), "tk"));
    assertEquals(Runner.EXIT_OK, out.code(), out.lines().toString());
    assertEquals(3, referee.attempts("tk"));
    assertEquals(1, referee.played("tk"));
  }

  @Test
  void seatTakenIsRetriedOnlyWithinTheWindow() throws Exception {
    Status taken = Status.ALREADY_EXISTS.withDescription(SEAT_TAKEN);
    FakeReferee referee = new FakeReferee(List.of("tk"), attempt -> taken, false);
    // A 2 s window: the retries (100 ms, then doubling) make five attempts in it, so three
    // still fit when a loaded machine slows each attempt down. It gives up only once the
    // next wait (at most 1 s) would pass the window's end: after 1 s at least.
    Outcome out = run(firstLegal(), settings(serve(referee), "tk", "TAVOLO_RECONNECT_SECONDS", "2"));
    assertEquals(Runner.EXIT_FAILED, out.code());
    assertTrue(referee.attempts("tk") > 2, "attempts: " + referee.attempts("tk"));
    assertTrue(out.millis() >= 1000 && out.millis() < 10000, out.millis() + " ms");
    assertEquals(1, out.lines().size(), out.lines().toString());
    String line = out.lines().get(0);
    assertTrue(line.contains("ALREADY_EXISTS: " + SEAT_TAKEN) && line.contains("gave up after retrying"), line);
  }

  /** A bot that remembers its slot and what it heard. */
  static final class Recording implements Bot {
    final Bot.Slot slot;
    final List<Event.EventCase> events = Collections.synchronizedList(new ArrayList<>());
    final AtomicInteger over = new AtomicInteger();

    Recording(Bot.Slot slot) {
      this.slot = slot;
    }

    @Override
    public int choose(Turn turn) {
      return turn.legal().get(0).getId();
    }

    @Override
    public void onEvent(Event event) {
      events.add(event.getEventCase());
    }

    @Override
    public void onMatchOver() {
      over.incrementAndGet();
    }
  }

  private void assertOneBotPerTicket(String seed) throws Exception {
    FakeReferee referee = new FakeReferee(List.of("tk-a", "tk-b"), attempt -> null, true);
    List<Recording> made = Collections.synchronizedList(new ArrayList<>());
    Bot.Factory factory = slot -> {
      Recording bot = new Recording(slot);
      made.add(bot);
      return bot;
    };
    Runner.Settings settings =
        seed == null ? settings(serve(referee), "tk-a,tk-b") : settings(serve(referee), "tk-a,tk-b", "TAVOLO_SEED", seed);
    Outcome out = run(factory, settings);
    stopServer();
    assertEquals(Runner.EXIT_OK, out.code(), out.lines().toString());
    // Each stream broke once and reconnected: the reconnection kept its bot.
    assertEquals(2, referee.attempts("tk-a"));
    assertEquals(2, referee.attempts("tk-b"));
    assertEquals(2, made.size());
    assertNotSame(made.get(0), made.get(1));
    List<String> tickets = List.of("tk-a", "tk-b");
    for (int i = 0; i < 2; i++) {
      Recording bot = made.get(i);
      String ticket = tickets.get(i);
      assertEquals(new Bot.Slot(ticket, i, 2, (seed == null ? ticket : seed) + "/" + i), bot.slot);
      assertEquals(1, bot.over.get());
      assertEquals(1, Collections.frequency(bot.events, Event.EventCase.GAME_STARTED), bot.events.toString());
      assertEquals(1, Collections.frequency(bot.events, Event.EventCase.MATCH_OVER), bot.events.toString());
    }
  }

  @Test
  void eachTicketGetsOneBotOfItsOwn() throws Exception {
    assertOneBotPerTicket(null);
    assertOneBotPerTicket("s");
  }

  @Test
  void settingsSeedIsTavoloSeedAsGiven() throws Exception {
    assertEquals("", settings("h:1", "t").seed());
    assertEquals("s", settings("h:1", "t", "TAVOLO_SEED", "s").seed());
    assertEquals(" s ", settings("h:1", "t", "TAVOLO_SEED", " s ").seed());
    assertEquals("", new Runner.Settings("h:1", List.of("t"), null, 10, null).seed());
  }

  @Test
  void streamSeedsAndGameSeeds() throws Exception {
    assertEquals("tk", Bot.Slot.streamSeed("", "tk", 0, 1));
    assertEquals("tk", Bot.Slot.streamSeed(null, "tk", 0, 1));
    assertEquals("s", Bot.Slot.streamSeed("s", "tk", 0, 1));
    assertEquals("tk/1", Bot.Slot.streamSeed("", "tk", 1, 2));
    assertEquals("s/0", Bot.Slot.streamSeed("s", "tk", 0, 3));
    assertEquals("s/1/game/4", Bot.Slot.gameSeed("s/1", 4));
    Bot.Slot slot = new Bot.Slot("tk", 2, 3, "s/2");
    assertEquals("s/2/game/7", slot.gameSeed(7));
    assertEquals(slot.gameRandom(7).nextLong(), new Bot.Slot("x", 0, 1, "s/2/game/7").random().nextLong());
    assertFalse(slot.gameRandom(7).nextLong() == slot.gameRandom(8).nextLong());
    // The runner gives each bot its stream seed.
    FakeReferee referee = new FakeReferee(List.of("tk"), attempt -> null, false);
    List<Bot.Slot> slots = Collections.synchronizedList(new ArrayList<>());
    Outcome out = run(s -> {
      slots.add(s);
      return turn -> turn.legal().get(0).getId();
    }, settings(serve(referee), "tk"));
    assertEquals(Runner.EXIT_OK, out.code(), out.lines().toString());
    assertEquals(List.of(new Bot.Slot("tk", 0, 1, "tk")), slots);
  }
}
