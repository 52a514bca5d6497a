package org.tavolo.bot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tavolo.v1.Referee.Action;
import tavolo.v1.Referee.ActionKind;
import tavolo.v1.Referee.Bid;
import tavolo.v1.Referee.CalabresellaView;
import tavolo.v1.Referee.DecisionRequest;
import tavolo.v1.Referee.Declared;
import tavolo.v1.Referee.Draw;
import tavolo.v1.Referee.Event;
import tavolo.v1.Referee.MatchOver;
import tavolo.v1.Referee.Observation;
import tavolo.v1.Referee.Play;
import tavolo.v1.Referee.PlayRequest;
import tavolo.v1.Referee.PlayResponse;
import tavolo.v1.Referee.Trick;
import tavolo.v1.Referee.Welcome;
import tavolo.v1.RefereeServiceGrpc;

/** Compact observations: the merge against the shared fixture, and the runner that asks for them. */
class CompactMergerTest {
  /** tests/fixtures/compact/ of the repository (Maven runs tests in clients/java). */
  static final Path FIXTURES = Path.of("../../tests/fixtures/compact");

  private static final Pattern SLOT = Pattern.compile("\"slot\"\\s*:\\s*(\\d+)");
  private static final Pattern REQUEST_ID = Pattern.compile("\"request_id\"\\s*:\\s*(\\d+)");

  private Server server;

  @AfterEach
  void stopServer() throws InterruptedException {
    if (server != null) {
      server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  private static String field(String line, Pattern pattern, String where) {
    Matcher m = pattern.matcher(line);
    assertTrue(m.find(), where + ": no " + pattern);
    return m.group(1);
  }

  private static Observation observation(String line, String key, String where) {
    String text = field(line, Pattern.compile("\"" + key + "\"\\s*:\\s*\"([A-Za-z0-9+/=]*)\""), where);
    try {
      return Observation.parseFrom(Base64.getDecoder().decode(text));
    } catch (IOException e) {
      throw new AssertionError(where + ": '" + key + "' is no serialized Observation", e);
    }
  }

  @Test
  void mergingTheFixturesCompactObservationsGivesTheFullOnes() throws IOException {
    List<Path> files;
    try (Stream<Path> listing = Files.list(FIXTURES)) {
      files = listing.filter(p -> p.toString().endsWith(".jsonl")).sorted().toList();
    }
    assertFalse(files.isEmpty(), "no .jsonl files in " + FIXTURES.toAbsolutePath());
    int compactSeen = 0;
    for (Path file : files) {
      Map<Integer, CompactMerger> streams = new HashMap<>();
      int lines = 0;
      for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
        if (line.isBlank()) {
          continue;
        }
        lines++;
        String where = file.getFileName() + " line " + lines;
        int slot = Integer.parseInt(field(line, SLOT, where));
        where += " (slot " + slot + ", request " + field(line, REQUEST_ID, where) + ")";
        Observation compact = observation(line, "compact", where);
        Observation full = observation(line, "full", where);
        compactSeen += compact.getCompact() ? 1 : 0;
        Observation merged = streams.computeIfAbsent(slot, s -> new CompactMerger()).complete(compact);
        assertEquals(full, merged, where);
      }
      assertTrue(lines > 0, file + " is empty");
    }
    assertTrue(compactSeen > 0, "the fixture holds no compact observation, so it tests no merge");
  }

  private static Trick trick(String... cards) {
    Trick.Builder t = Trick.newBuilder().setWinner(0);
    for (int i = 0; i < cards.length; i++) {
      t.addPlays(Play.newBuilder().setSeat(i).setAction(Action.newBuilder().setCard(cards[i]).setText(cards[i])));
    }
    return t.build();
  }

  private static Observation.Builder deal(int game, int deal) {
    return Observation.newBuilder().setSeat(1).setGame(game).setDeal(deal).setPlayers(4).addHand("3D");
  }

  @Test
  void compactItemsAreAppendedAndEveryOtherFieldIsTaken() {
    CompactMerger merger = new CompactMerger();
    Bid pass = Bid.newBuilder().setSeat(0).setBid("pass").build();
    Bid solo = Bid.newBuilder().setSeat(1).setBid("solo").build();
    Observation first =
        deal(1, 1)
            .addTricks(trick("AS", "4S", "5S", "6S"))
            .addDeclarations(Declared.newBuilder().setSeat(2).setDeclaration("napoli-D"))
            .addDraws(Draw.newBuilder().setSeat(0).setCard("7C"))
            .setCalabresella(CalabresellaView.newBuilder().addBids(pass).setSoloist(-1))
            .build();
    assertSame(first, merger.complete(first), "a complete observation is taken as it is");
    Observation second =
        deal(1, 1)
            .clearHand()
            .addHand("2C")
            .setCompact(true)
            .addTricks(trick("3C", "4C", "5C", "6C"))
            .addDraws(Draw.newBuilder().setSeat(1).setCard("KB"))
            .setCalabresella(CalabresellaView.newBuilder().addBids(solo).setSoloist(1).setContract("solo"))
            .build();
    Observation merged = merger.complete(second);
    Observation expected =
        deal(1, 1)
            .clearHand()
            .addHand("2C")
            .addTricks(trick("AS", "4S", "5S", "6S"))
            .addTricks(trick("3C", "4C", "5C", "6C"))
            .addDeclarations(Declared.newBuilder().setSeat(2).setDeclaration("napoli-D"))
            .addDraws(Draw.newBuilder().setSeat(0).setCard("7C"))
            .addDraws(Draw.newBuilder().setSeat(1).setCard("KB"))
            .setCalabresella(
                CalabresellaView.newBuilder().addBids(pass).addBids(solo).setSoloist(1).setContract("solo"))
            .build();
    assertEquals(expected, merged);
    // The next compact observation adds to the merged one, not to the last one received.
    Observation third = merger.complete(deal(1, 1).setCompact(true).addTricks(trick("KD", "QD", "JD", "7D")).build());
    assertEquals(3, third.getTricksCount());
    assertEquals(2, third.getDrawsCount());
    assertEquals(1, third.getDeclarationsCount());
    assertFalse(third.hasCalabresella(), "the view is as received: absent");
  }

  @Test
  void aCompleteObservationOfANewDealReplacesEverything() {
    CompactMerger merger = new CompactMerger();
    merger.complete(deal(1, 1).addTricks(trick("AS", "4S", "5S", "6S")).build());
    merger.complete(
        deal(1, 1).setCompact(true).addDeclarations(Declared.newBuilder().setSeat(0).setDeclaration("napoli-S")).build());
    Observation newDeal = deal(1, 2).clearHand().addHand("AC").build();
    assertEquals(newDeal, merger.complete(newDeal), "nothing of deal 1 is left");
    Observation next =
        merger.complete(deal(1, 2).clearHand().setCompact(true).addTricks(trick("AC", "2C", "3C", "4C")).build());
    assertEquals(List.of(trick("AC", "2C", "3C", "4C")), next.getTricksList());
    assertEquals(0, next.getDeclarationsCount());
    assertFalse(next.hasCalabresella(), "no CalabresellaView appears where there was none");
  }

  @Test
  void aCompactObservationWithNothingToAddToIsRefused() {
    CompactMerger merger = new CompactMerger();
    var first =
        assertThrows(CompactMerger.CompactException.class, () -> merger.complete(deal(2, 1).setCompact(true).build()));
    assertEquals(
        "the referee sent a compact observation (game 2, deal 1) as the first of this stream,"
            + " with nothing to add it to",
        first.getMessage());
    merger.complete(deal(2, 1).build());
    var other =
        assertThrows(CompactMerger.CompactException.class, () -> merger.complete(deal(2, 2).setCompact(true).build()));
    assertEquals(
        "the referee sent a compact observation of game 2, deal 2 after one of game 2, deal 1"
            + " (a new deal must come complete)",
        other.getMessage());
    merger.complete(deal(2, 1).build());
    merger.reset();
    assertThrows(CompactMerger.CompactException.class, () -> merger.complete(deal(2, 1).setCompact(true).build()));
  }

  /**
   * A referee that sends {@code observations} as one request each on a ticket's stream (the first
   * with a Welcome), one after each decision, then MatchOver; it records each Hello.
   */
  static final class ScriptedReferee extends RefereeServiceGrpc.RefereeServiceImplBase {
    final List<Observation> observations;
    final List<Boolean> hellosAskedCompact = new CopyOnWriteArrayList<>();

    ScriptedReferee(List<Observation> observations) {
      this.observations = observations;
    }

    private PlayResponse request(int i) {
      Action card =
          Action.newBuilder().setId(7).setKind(ActionKind.ACTION_KIND_PLAY).setCard("3D").setText("3D").build();
      DecisionRequest request =
          DecisionRequest.newBuilder()
              .setRequestId(i + 1)
              .setDeadlineMs(1000)
              .setObservation(observations.get(i))
              .addLegalActions(card)
              .build();
      PlayResponse.Builder response = PlayResponse.newBuilder().setRequest(request);
      if (i == 0) {
        response.addEvents(Event.newBuilder().setWelcome(Welcome.newBuilder().setMatchId("m1")));
      }
      return response.build();
    }

    @Override
    public StreamObserver<PlayRequest> play(StreamObserver<PlayResponse> out) {
      return new StreamObserver<>() {
        @Override
        public void onNext(PlayRequest message) {
          if (message.hasHello()) {
            hellosAskedCompact.add(message.getHello().getCompactObservations());
            out.onNext(request(0));
          } else if (message.hasDecision()) {
            int next = (int) message.getDecision().getRequestId();
            if (next < observations.size()) {
              out.onNext(request(next));
            } else {
              Event over = Event.newBuilder().setMatchOver(MatchOver.newBuilder().setMatchId("m1")).build();
              out.onNext(PlayResponse.newBuilder().addEvents(over).build());
              out.onCompleted();
            }
          }
        }

        @Override
        public void onError(Throwable t) {}

        @Override
        public void onCompleted() {}
      };
    }
  }

  /** Plays one ticket against {@code referee}; the exit code, with the bot's observations and stderr. */
  private record Played(int code, List<Observation> seen, String stderr) {}

  private Played play(ScriptedReferee referee) throws Exception {
    server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).addService(referee).build().start();
    String address = "127.0.0.1:" + ((InetSocketAddress) server.getListenSockets().get(0)).getPort();
    Map<String, String> env = Map.of("TAVOLO_REFEREE", address, "TAVOLO_TICKET", "tk", "TAVOLO_RECONNECT_SECONDS", "1");
    List<Observation> seen = new ArrayList<>();
    PrintStream saved = System.err;
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code;
    try {
      System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
      code =
          Runner.run(
              slot -> turn -> {
                seen.add(turn.observation());
                assertSame(turn.observation(), turn.request().getObservation());
                return turn.legal().get(0).getId();
              },
              env);
    } finally {
      System.setErr(saved);
    }
    return new Played(code, seen, err.toString(StandardCharsets.UTF_8));
  }

  @Test
  void theRunnerAsksForCompactObservationsAndGivesTheBotCompleteOnes() throws Exception {
    ScriptedReferee referee =
        new ScriptedReferee(
            List.of(
                deal(1, 1).addTricks(trick("AS", "4S", "5S", "6S")).build(),
                deal(1, 1).setCompact(true).addTricks(trick("3C", "4C", "5C", "6C")).build(),
                deal(1, 2).build(),
                deal(1, 2).setCompact(true).addTricks(trick("KD", "QD", "JD", "7D")).build()));
    Played out = play(referee);
    assertEquals(Runner.EXIT_OK, out.code(), out.stderr());
    assertEquals(List.of(true), referee.hellosAskedCompact);
    assertEquals(
        List.of(
            deal(1, 1).addTricks(trick("AS", "4S", "5S", "6S")).build(),
            deal(1, 1).addTricks(trick("AS", "4S", "5S", "6S")).addTricks(trick("3C", "4C", "5C", "6C")).build(),
            deal(1, 2).build(),
            deal(1, 2).addTricks(trick("KD", "QD", "JD", "7D")).build()),
        out.seen());
  }

  @Test
  void aCompactObservationOfAnotherDealStopsTheStreamWithOneLine() throws Exception {
    ScriptedReferee referee =
        new ScriptedReferee(List.of(deal(1, 1).build(), deal(1, 2).setCompact(true).build()));
    Played out = play(referee);
    assertEquals(Runner.EXIT_FAILED, out.code());
    assertEquals(1, out.seen().size(), "the bot is not asked with a broken observation");
    assertEquals(
        "tavolo-bot: the referee sent a compact observation of game 1, deal 2 after one of game 1, deal 1"
            + " (a new deal must come complete); this stream stops\n",
        out.stderr());
  }
}
