package org.tavolo.bot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tavolo.v1.Referee.Action;
import tavolo.v1.Referee.ActionKind;
import tavolo.v1.Referee.CardPlayed;
import tavolo.v1.Referee.DecisionRequest;
import tavolo.v1.Referee.Event;
import tavolo.v1.Referee.GameStarted;
import tavolo.v1.Referee.Hello;
import tavolo.v1.Referee.KeyAccepted;
import tavolo.v1.Referee.MatchOver;
import tavolo.v1.Referee.MatchStarted;
import tavolo.v1.Referee.Observation;
import tavolo.v1.Referee.PlayRequest;
import tavolo.v1.Referee.PlayResponse;
import tavolo.v1.Referee.Welcome;
import tavolo.v1.RefereeServiceGrpc;

/**
 * Key mode (TAVOLO_KEY) against a scripted referee over real gRPC on loopback: each stream is
 * seated in match after match with a fresh bot, reconnects with the same key, and ends with the
 * referee's OK.
 */
class RunnerKeyTest {
  static final String KEY = "key-1";
  static final String UNKNOWN_KEY = "unknown_key: no entrant has this key";
  static final String KEY_REVOKED = "key_revoked: the organiser revoked this key";

  private Server server;

  @AfterEach
  void stopServer() throws InterruptedException {
    if (server != null) {
      server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      server = null;
    }
  }

  /** What the scripted referee does; every field but {@code matches} is optional. */
  static final class Script {
    /** The matches to seat, in order, shared by every stream of the key. */
    List<String> matches = List.of();
    /** KeyAccepted.streams_per_table. */
    int streamsPerTable = 1;
    /** Break the stream (UNAVAILABLE) when the first answer to request 2 of this match arrives. */
    String breakIn;
    /** With breakIn: the reconnection is seated in the match's other slot (the partner's). */
    boolean otherSlot;
    /** Break the stream (UNAVAILABLE) right after this match's MatchOver, before the next Welcome. */
    String breakAfter;
    /** End the stream with this status right after {@code endAfterMatch}'s MatchOver. */
    String endAfterMatch;
    Status endAfter;
    /** End the stream with OK in the middle of this match (after its first request is answered). */
    String okIn;
    /** Refuse the Hello of the key with this status. */
    Status refuse;

    static Script of(String... matches) {
      Script script = new Script();
      script.matches = List.of(matches);
      return script;
    }
  }

  /** One match in play on a stream: its slot and the last response that carried a request. */
  static final class Seat {
    final String matchId;
    final int slot;
    PlayResponse pending;

    Seat(String matchId, int slot) {
      this.matchId = matchId;
      this.slot = slot;
    }
  }

  /**
   * A referee for one entrant key. Each match has two requests, ids 1 and 2 (request ids are unique
   * only within a match, so every match reuses them); an answer to request 2 ends it.
   */
  static final class KeyReferee extends RefereeServiceGrpc.RefereeServiceImplBase {
    final Script script;
    final List<Hello> hellos = Collections.synchronizedList(new ArrayList<>());
    /** Every Decision received, as "match:request=action". */
    final List<String> decisions = Collections.synchronizedList(new ArrayList<>());
    private int next;
    /** Matches whose stream broke before they ended: the next stream of the key resumes them. */
    private final Deque<Seat> interrupted = new ArrayDeque<>();
    private final List<String> broken = new ArrayList<>();

    KeyReferee(Script script) {
      this.script = script;
    }

    @Override
    public StreamObserver<PlayRequest> play(StreamObserver<PlayResponse> out) {
      return new StreamObserver<>() {
        private Seat seat;

        private void send(PlayResponse response) {
          if (seat != null && response.hasRequest()) {
            seat.pending = response;
          }
          out.onNext(response);
        }

        private void fail(Status status, boolean keep) {
          if (keep && seat != null) {
            synchronized (KeyReferee.this) {
              interrupted.add(seat);
            }
          }
          seat = null;
          out.onError(status.asRuntimeException());
        }

        private void seatNext() {
          synchronized (KeyReferee.this) {
            Seat resumed = interrupted.poll();
            if (resumed != null) {
              seat = script.otherSlot ? new Seat(resumed.matchId, 1 - resumed.slot) : resumed;
              seat.pending = resumed.pending;
              out.onNext(PlayResponse.newBuilder().addEvents(welcome(seat)).build());
              if (seat.pending != null) {
                out.onNext(seat.pending);
              }
              return;
            }
            if (next >= script.matches.size()) {
              out.onCompleted(); // the entrant has no match left: status OK
              return;
            }
            String matchId = script.matches.get(next);
            seat = new Seat(matchId, next++ % 2);
          }
          send(PlayResponse.newBuilder()
              .addEvents(welcome(seat))
              .addEvents(Event.newBuilder().setMatchStarted(MatchStarted.newBuilder().setMatchId(seat.matchId)))
              .addEvents(Event.newBuilder().setGameStarted(GameStarted.newBuilder().setGame(1).setSeat(seat.slot)))
              .setRequest(request(1))
              .build());
        }

        @Override
        public void onNext(PlayRequest message) {
          if (message.hasHello()) {
            hellos.add(message.getHello());
            if (!message.getHello().getKey().equals(KEY)) {
              fail(Status.UNAUTHENTICATED.withDescription(UNKNOWN_KEY), false);
              return;
            }
            if (script.refuse != null) {
              fail(script.refuse, false);
              return;
            }
            int left;
            synchronized (KeyReferee.this) {
              left = script.matches.size() - next + interrupted.size();
            }
            KeyAccepted accepted =
                KeyAccepted.newBuilder()
                    .setEntrant("ent")
                    .setStreamsPerTable(script.streamsPerTable)
                    .setMatchesLeft(left)
                    .build();
            out.onNext(PlayResponse.newBuilder().addEvents(Event.newBuilder().setKeyAccepted(accepted)).build());
            seatNext();
            return;
          }
          if (!message.hasDecision() || seat == null) {
            return;
          }
          String matchId = seat.matchId;
          long requestId = message.getDecision().getRequestId();
          decisions.add(matchId + ":" + requestId + "=" + message.getDecision().getActionId());
          synchronized (KeyReferee.this) {
            if (requestId == 2 && matchId.equals(script.breakIn) && !broken.contains(matchId)) {
              broken.add(matchId);
              fail(Status.UNAVAILABLE.withDescription("referee restarting"), true);
              return;
            }
          }
          if (requestId == 1) {
            if (matchId.equals(script.okIn)) {
              seat = null;
              out.onCompleted();
              return;
            }
            Event played = Event.newBuilder().setCardPlayed(CardPlayed.newBuilder().setSeat(1).setCard("4B")).build();
            send(PlayResponse.newBuilder().addEvents(played).setRequest(request(2)).build());
            return;
          }
          seat = null;
          out.onNext(PlayResponse.newBuilder()
              .addEvents(Event.newBuilder().setMatchOver(MatchOver.newBuilder().setMatchId(matchId)))
              .build());
          if (matchId.equals(script.breakAfter)) {
            fail(Status.UNAVAILABLE.withDescription("referee restarting"), false);
          } else if (matchId.equals(script.endAfterMatch)) {
            fail(script.endAfter, false);
          } else {
            seatNext();
          }
        }

        @Override
        public void onError(Throwable t) {}

        @Override
        public void onCompleted() {}
      };
    }
  }

  static Event welcome(Seat seat) {
    return Event.newBuilder().setWelcome(Welcome.newBuilder().setMatchId(seat.matchId).setSlot(seat.slot)).build();
  }

  static DecisionRequest request(long id) {
    return DecisionRequest.newBuilder()
        .setRequestId(id)
        .setDeadlineMs(1000)
        .setObservation(Observation.newBuilder().setSeat(0).setPlayers(4).addHand("6C").addHand("QD"))
        .addLegalActions(Action.newBuilder().setId(17).setKind(ActionKind.ACTION_KIND_PLAY).setCard("6C").setText("6C"))
        .addLegalActions(Action.newBuilder().setId(23).setKind(ActionKind.ACTION_KIND_PLAY).setCard("QD").setText("QD"))
        .build();
  }

  private String serve(KeyReferee referee) throws Exception {
    server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).addService(referee).build().start();
    return "127.0.0.1:" + ((InetSocketAddress) server.getListenSockets().get(0)).getPort();
  }

  private static Map<String, String> env(String referee, String... more) {
    Map<String, String> env = new HashMap<>();
    env.put("TAVOLO_REFEREE", referee);
    env.put("TAVOLO_KEY", KEY);
    env.put("TAVOLO_RECONNECT_SECONDS", "5");
    for (int i = 0; i < more.length; i += 2) {
      if (more[i + 1] == null) {
        env.remove(more[i]);
      } else {
        env.put(more[i], more[i + 1]);
      }
    }
    return env;
  }

  private static Runner.Settings settings(String referee, String... more) throws Runner.ConfigException {
    return Runner.Settings.from(env(referee, more));
  }

  /** A run's exit code and what it wrote to stderr. */
  record Outcome(int code, List<String> lines) {}

  private static Outcome run(Bot.Factory factory, Runner.Settings settings) {
    PrintStream saved = System.err;
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code;
    try {
      System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
      code = Runner.run(factory, settings);
    } finally {
      System.setErr(saved);
    }
    String text = err.toString(StandardCharsets.UTF_8);
    return new Outcome(code, text.isEmpty() ? List.of() : List.of(text.split("\n")));
  }

  /** A bot that alternates between the two legal actions and records what it sees. */
  static final class Recording implements Bot {
    final Bot.Slot slot;
    final List<Event.EventCase> events = Collections.synchronizedList(new ArrayList<>());
    final AtomicInteger chosen = new AtomicInteger();
    final AtomicInteger over = new AtomicInteger();

    Recording(Bot.Slot slot) {
      this.slot = slot;
    }

    @Override
    public int choose(Turn turn) {
      return turn.legal().get(chosen.getAndIncrement() % 2).getId();
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

  private static Bot.Factory recording(List<Recording> made) {
    return slot -> {
      Recording bot = new Recording(slot);
      made.add(bot);
      return bot;
    };
  }

  static final List<Event.EventCase> MATCH_EVENTS =
      List.of(
          Event.EventCase.WELCOME,
          Event.EventCase.MATCH_STARTED,
          Event.EventCase.GAME_STARTED,
          Event.EventCase.CARD_PLAYED,
          Event.EventCase.MATCH_OVER);

  private void assertTwoMatchesOnOneStream(String seed) throws Exception {
    KeyReferee referee = new KeyReferee(Script.of("m1", "m2"));
    List<Recording> made = Collections.synchronizedList(new ArrayList<>());
    Outcome out = run(recording(made), settings(serve(referee), "TAVOLO_STREAMS", "1", "TAVOLO_SEED", seed));
    stopServer();
    assertEquals(Runner.EXIT_OK, out.code(), out.lines().toString());
    assertEquals(List.of(), out.lines());
    assertEquals(
        List.of(Hello.newBuilder().setKey(KEY).setProtocolVersion(1).setCompactObservations(true).build()), referee.hellos);
    assertEquals(2, made.size());
    for (int i = 0; i < 2; i++) {
      Recording bot = made.get(i);
      String expected = (seed == null ? KEY : seed) + "/match/" + (i + 1);
      assertEquals(new Bot.Slot("", 0, 1, expected, KEY, i + 1, "m" + (i + 1)), bot.slot);
      assertEquals(expected + "/game/2", bot.slot.gameSeed(2));
      assertEquals(MATCH_EVENTS, bot.events, "KeyAccepted goes to no bot");
      assertEquals(2, bot.chosen.get());
      assertEquals(1, bot.over.get());
    }
    // Request ids repeat across matches: the second match's bot is asked afresh.
    assertEquals(List.of("m1:1=17", "m1:2=23", "m2:1=17", "m2:2=23"), referee.decisions);
  }

  @Test
  void twoMatchesOnOneStreamGetAFreshBotEachAndExitZero() throws Exception {
    assertTwoMatchesOnOneStream(null);
    assertTwoMatchesOnOneStream("s");
  }

  @Test
  void aReconnectionMidMatchKeepsTheBot() throws Exception {
    Script script = Script.of("m1", "m2");
    script.breakIn = "m1";
    KeyReferee referee = new KeyReferee(script);
    List<Recording> made = Collections.synchronizedList(new ArrayList<>());
    Outcome out = run(recording(made), settings(serve(referee), "TAVOLO_STREAMS", "1"));
    assertEquals(Runner.EXIT_OK, out.code(), out.lines().toString());
    assertEquals(2, referee.hellos.size());
    assertTrue(referee.hellos.stream().allMatch(h -> h.getKey().equals(KEY) && h.getTicket().isEmpty()));
    assertEquals(2, made.size());
    assertEquals(List.of("m1", "m2"), made.stream().map(b -> b.slot.matchId()).toList());
    List<Integer> chosen = made.stream().map(b -> b.chosen.get()).toList();
    assertEquals(List.of(2, 2), chosen, "the re-sent request is not asked again");
    assertEquals(List.of(1, 1), made.stream().map(b -> b.over.get()).toList());
    // The first bot heard the Welcome again (as with a ticket), not the re-sent events.
    List<Event.EventCase> heard = new ArrayList<>(MATCH_EVENTS);
    heard.add(4, Event.EventCase.WELCOME);
    assertEquals(heard, made.get(0).events);
    assertEquals(List.of("m1:1=17", "m1:2=23", "m1:2=23", "m2:1=17", "m2:2=23"), referee.decisions);
  }

  @Test
  void aReconnectionSeatedInAnotherSlotOfTheMatchGetsAFreshBot() throws Exception {
    Script script = Script.of("m1", "m2");
    script.breakIn = "m1";
    script.otherSlot = true;
    KeyReferee referee = new KeyReferee(script);
    List<Recording> made = Collections.synchronizedList(new ArrayList<>());
    Outcome out = run(recording(made), settings(serve(referee), "TAVOLO_STREAMS", "1"));
    assertEquals(Runner.EXIT_OK, out.code(), out.lines().toString());
    assertEquals(List.of("m1", "m1", "m2"), made.stream().map(b -> b.slot.matchId()).toList());
    assertEquals(List.of(1, 2, 3), made.stream().map(b -> b.slot.match()).toList());
    assertEquals(List.of(2, 1, 2), made.stream().map(b -> b.chosen.get()).toList());
    assertEquals(List.of(0, 1, 1), made.stream().map(b -> b.over.get()).toList());
    assertEquals(
        List.of(Event.EventCase.WELCOME, Event.EventCase.CARD_PLAYED, Event.EventCase.MATCH_OVER), made.get(1).events);
    assertEquals(List.of("m1:1=17", "m1:2=23", "m1:2=17", "m2:1=17", "m2:2=23"), referee.decisions);
  }

  @Test
  void aBreakBetweenMatchesReconnectsAndTheNextMatchGetsAFreshBot() throws Exception {
    Script script = Script.of("m1", "m2");
    script.breakAfter = "m1";
    KeyReferee referee = new KeyReferee(script);
    List<Recording> made = Collections.synchronizedList(new ArrayList<>());
    Outcome out = run(recording(made), settings(serve(referee), "TAVOLO_STREAMS", "1"));
    assertEquals(Runner.EXIT_OK, out.code(), out.lines().toString());
    assertEquals(2, referee.hellos.size());
    assertEquals(List.of("m1", "m2"), made.stream().map(b -> b.slot.matchId()).toList());
    assertEquals(List.of(1, 2), made.stream().map(b -> b.slot.match()).toList());
    for (Recording bot : made) {
      assertEquals(MATCH_EVENTS, bot.events);
    }
  }

  @Test
  void theStreamsOfAKeyEachPlayItsMatches() throws Exception {
    KeyReferee referee = new KeyReferee(Script.of("m1", "m2", "m3", "m4", "m5"));
    List<Recording> made = Collections.synchronizedList(new ArrayList<>());
    Outcome out = run(recording(made), settings(serve(referee))); // TAVOLO_STREAMS unset: 2
    assertEquals(Runner.EXIT_OK, out.code(), out.lines().toString());
    assertEquals(2, referee.hellos.size());
    assertEquals(List.of("m1", "m2", "m3", "m4", "m5"), made.stream().map(b -> b.slot.matchId()).sorted().toList());
    for (int index = 0; index < 2; index++) {
      int stream = index;
      List<Recording> mine = made.stream().filter(b -> b.slot.index() == stream).toList();
      assertTrue(!mine.isEmpty(), "stream " + index + " played no match");
      for (int i = 0; i < mine.size(); i++) {
        Bot.Slot slot = mine.get(i).slot;
        assertEquals(2, slot.count());
        assertEquals(i + 1, slot.match());
        assertEquals(KEY + "/" + index + "/match/" + (i + 1), slot.seed());
      }
    }
    assertTrue(made.stream().allMatch(b -> b.chosen.get() == 2 && b.over.get() == 1));
  }

  private void assertRefused(Script script, String key, Status status, String hint) throws Exception {
    KeyReferee referee = new KeyReferee(script);
    List<Recording> made = Collections.synchronizedList(new ArrayList<>());
    String address = serve(referee);
    // Both streams (the default 2) are refused: the line is said once.
    Outcome out = run(recording(made), settings(address, "TAVOLO_KEY", key));
    stopServer();
    assertEquals(Runner.EXIT_FAILED, out.code());
    assertEquals(2, referee.hellos.size(), "one Hello per stream, no retry");
    assertEquals(0, made.size());
    assertEquals(
        List.of("tavolo-bot: the referee at " + address + " ended the stream: " + status.getCode().name() + ": "
            + status.getDescription() + " (" + hint + ")"),
        out.lines());
  }

  @Test
  void unknownKeyEndsTheStreamsAtOnceWithOneLine() throws Exception {
    assertRefused(
        Script.of("m1"), "not-a-key", Status.UNAUTHENTICATED.withDescription(UNKNOWN_KEY),
        "the referee knows no entrant with this key");
  }

  @Test
  void revokedKeyEndsTheStreamsAtOnceWithOneLine() throws Exception {
    Script script = Script.of("m1");
    script.refuse = Status.PERMISSION_DENIED.withDescription(KEY_REVOKED);
    assertRefused(script, KEY, script.refuse, "the organiser revoked this key");
  }

  @Test
  void aKeyRevokedBetweenMatchesEndsTheStreamAfterTheMatch() throws Exception {
    Script script = Script.of("m1", "m2");
    script.endAfterMatch = "m1";
    script.endAfter = Status.PERMISSION_DENIED.withDescription(KEY_REVOKED);
    KeyReferee referee = new KeyReferee(script);
    List<Recording> made = Collections.synchronizedList(new ArrayList<>());
    Outcome out = run(recording(made), settings(serve(referee), "TAVOLO_STREAMS", "1"));
    assertEquals(Runner.EXIT_FAILED, out.code());
    assertEquals(1, referee.hellos.size());
    assertEquals(List.of("m1"), made.stream().map(b -> b.slot.matchId()).toList());
    assertEquals(1, made.get(0).over.get());
    assertEquals(1, out.lines().size(), out.lines().toString());
    String line = out.lines().get(0);
    assertTrue(line.endsWith("PERMISSION_DENIED: " + KEY_REVOKED + " (the organiser revoked this key)"), line);
  }

  @Test
  void anOkEndInTheMiddleOfAMatchFailsTheStream() throws Exception {
    // The referee ends a key's stream between matches: OK before this match's MatchOver is no
    // "no match left".
    Script script = Script.of("m1");
    script.okIn = "m1";
    List<Recording> made = Collections.synchronizedList(new ArrayList<>());
    Outcome out = run(recording(made), settings(serve(new KeyReferee(script)), "TAVOLO_STREAMS", "1"));
    assertEquals(Runner.EXIT_FAILED, out.code(), out.lines().toString());
    assertEquals(List.of("tavolo-bot: the referee ended the stream before match m1 was over"), out.lines());
    assertEquals(1, made.size());
    assertEquals(List.of(1, 0), List.of(made.get(0).chosen.get(), made.get(0).over.get()));
  }

  @Test
  void moreStreamsPerTableThanThisProcessOpensGetsOneNote() throws Exception {
    Script script = Script.of("m1");
    script.streamsPerTable = 2;
    Outcome out = run(recording(new ArrayList<>()), settings(serve(new KeyReferee(script)), "TAVOLO_STREAMS", "1"));
    assertEquals(Runner.EXIT_OK, out.code(), out.lines().toString());
    assertEquals(1, out.lines().size(), out.lines().toString());
    assertTrue(out.lines().get(0).contains(
        "seats 2 streams of entrant 'ent' per table and this process opens 1 (TAVOLO_STREAMS)"), out.lines().get(0));
  }

  @Test
  void aFactoryThatThrowsAtAMatchStopsTheStream() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    Bot.Factory factory = slot -> {
      if (calls.incrementAndGet() == 2) {
        throw new IllegalStateException("out of bots");
      }
      return turn -> turn.legal().get(0).getId();
    };
    Outcome out = run(factory, settings(serve(new KeyReferee(Script.of("m1", "m2"))), "TAVOLO_STREAMS", "1"));
    assertEquals(Runner.EXIT_FAILED, out.code());
    assertEquals("tavolo-bot: making the bot of match m2 threw an exception; this stream stops:", out.lines().get(0));
    assertTrue(out.lines().get(1).contains("out of bots"), out.lines().toString());
  }

  /**
   * The message of the usage error these settings are, checked to be what a run prints: one line,
   * exit 2, before any connection.
   */
  private static String configError(Map<String, String> env) {
    String message = assertThrows(Runner.ConfigException.class, () -> Runner.Settings.from(env)).getMessage();
    PrintStream saved = System.err;
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code;
    try {
      System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
      code = Runner.run(slot -> turn -> turn.legal().get(0).getId(), env);
    } finally {
      System.setErr(saved);
    }
    assertEquals(Runner.EXIT_USAGE, code, message);
    assertEquals("tavolo-bot: " + message + "\n", err.toString(StandardCharsets.UTF_8));
    return message;
  }

  @Test
  void keyAndTicketTogetherOrNeitherAreUsageErrors() {
    assertEquals(
        "both TAVOLO_TICKET and TAVOLO_KEY are set: set one of them, not both",
        configError(env("h:1", "TAVOLO_TICKET", "tk")));
    String neither =
        "no ticket or key: set TAVOLO_TICKET (several tickets: comma-separated) or TAVOLO_KEY (an entrant key)";
    assertEquals(neither, configError(env("h:1", "TAVOLO_KEY", null)));
    assertEquals(neither, configError(env("h:1", "TAVOLO_KEY", " ", "TAVOLO_TICKET", ",")));
    assertEquals(
        "TAVOLO_KEY holds one entrant key, without commas: run one process per key",
        configError(env("h:1", "TAVOLO_KEY", "k1,k2")));
  }

  @Test
  void tavoloStreamsIsAWholeNumberOfAtLeastOne() throws Exception {
    assertEquals(2, settings("h:1").streams());
    assertEquals(3, settings("h:1", "TAVOLO_STREAMS", " 3 ").streams());
    assertEquals(2, settings("h:1", "TAVOLO_STREAMS", "").streams());
    Runner.Settings s = settings("h:1", "TAVOLO_SEED", "x");
    assertEquals(List.of(KEY, List.of(), "x", true), List.of(s.key(), s.tickets(), s.seed(), s.keyMode()));
    // With tickets, TAVOLO_STREAMS is not read: one stream per ticket.
    Runner.Settings tickets = settings("h:1", "TAVOLO_KEY", null, "TAVOLO_TICKET", "a,b", "TAVOLO_STREAMS", "x");
    assertEquals(List.of(2, false), List.of(tickets.streams(), tickets.keyMode()));
    for (String bad : List.of("0", "-1", "1.5", "two", "2e1", "0x2", "+2", "99999999999")) {
      assertEquals(
          "TAVOLO_STREAMS must be a whole number >= 1, not '" + bad + "'",
          configError(env("h:1", "TAVOLO_STREAMS", bad)),
          bad);
    }
  }
}
