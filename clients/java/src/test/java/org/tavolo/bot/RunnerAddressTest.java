package org.tavolo.bot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ConnectivityState;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollIoHandler;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.grpc.stub.StreamObserver;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tavolo.v1.Referee.Action;
import tavolo.v1.Referee.ActionKind;
import tavolo.v1.Referee.DecisionRequest;
import tavolo.v1.Referee.Event;
import tavolo.v1.Referee.MatchOver;
import tavolo.v1.Referee.Observation;
import tavolo.v1.Referee.PlayRequest;
import tavolo.v1.Referee.PlayResponse;
import tavolo.v1.RefereeServiceGrpc;

/** TAVOLO_REFEREE as host:port or unix:/path, and a real stream over each. */
class RunnerAddressTest {
  @TempDir Path dir;

  private Server server;
  private EventLoopGroup serverLoop;

  @AfterEach
  void stopServer() throws InterruptedException {
    if (server != null) {
      server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    if (serverLoop != null) {
      serverLoop.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
    }
  }

  private static Runner.Settings settings(String referee, String... more) throws Runner.ConfigException {
    Map<String, String> env = new HashMap<>();
    env.put("TAVOLO_REFEREE", referee);
    env.put("TAVOLO_TICKET", "t1");
    env.put("TAVOLO_RECONNECT_SECONDS", "0.3");
    for (int i = 0; i < more.length; i += 2) {
      env.put(more[i], more[i + 1]);
    }
    return Runner.Settings.from(env);
  }

  private static String configError(String referee, String... more) {
    return assertThrows(Runner.ConfigException.class, () -> settings(referee, more)).getMessage();
  }

  /** A referee that asks one decision and then ends the match. */
  static final class FakeReferee extends RefereeServiceGrpc.RefereeServiceImplBase {
    final CompletableFuture<String> ticket = new CompletableFuture<>();
    final CompletableFuture<Integer> chosen = new CompletableFuture<>();

    @Override
    public StreamObserver<PlayRequest> play(StreamObserver<PlayResponse> out) {
      return new StreamObserver<>() {
        @Override
        public void onNext(PlayRequest message) {
          if (message.hasHello()) {
            ticket.complete(message.getHello().getTicket());
            Action card = Action.newBuilder().setId(7).setKind(ActionKind.ACTION_KIND_PLAY).setCard("AS").setText("AS").build();
            DecisionRequest request =
                DecisionRequest.newBuilder()
                    .setRequestId(1)
                    .setDeadlineMs(1000)
                    .setObservation(Observation.newBuilder().setSeat(0).setPlayers(4).addHand("AS"))
                    .addLegalActions(card)
                    .build();
            out.onNext(PlayResponse.newBuilder().setRequest(request).build());
          } else if (message.hasDecision()) {
            chosen.complete(message.getDecision().getActionId());
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

  private FakeReferee serveUnix(Path socket) throws Exception {
    FakeReferee referee = new FakeReferee();
    serverLoop = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
    server =
        NettyServerBuilder.forAddress(new DomainSocketAddress(socket.toString()))
            .channelType(EpollServerDomainSocketChannel.class)
            .bossEventLoopGroup(serverLoop)
            .workerEventLoopGroup(serverLoop)
            .addService(referee)
            .build()
            .start();
    return referee;
  }

  private static void assertPlayedMatch(FakeReferee referee, Runner.Settings settings) throws Exception {
    int code = Runner.run(slot -> turn -> turn.legal().get(0).getId(), settings);
    assertEquals(Runner.EXIT_OK, code);
    assertEquals("t1", referee.ticket.get(5, TimeUnit.SECONDS));
    assertEquals(7, referee.chosen.get(5, TimeUnit.SECONDS));
  }

  @Test
  void hostPortStillParses() throws Exception {
    for (String address : List.of("127.0.0.1:50051", "localhost:50051", "[::1]:50051", "referee.example:443")) {
      Runner.Settings s = settings(address);
      assertEquals(address, s.referee());
      assertNull(Runner.unixSocketPath(s.referee()), address);
    }
    // TLS stays for host:port: a CA file that cannot be read is still an error there.
    assertTrue(configError("127.0.0.1:50051", "TAVOLO_TLS_CA", dir.resolve("none.pem").toString())
        .contains("no such file"));
  }

  @Test
  void unixAddressesParse() throws Exception {
    Path socket = dir.resolve("referee.sock");
    assertEquals(socket, Runner.unixSocketPath(settings("unix:" + socket).referee()));
    assertEquals(socket, Runner.unixSocketPath(settings("unix://" + socket).referee()));
    assertEquals(Path.of("/run/x.sock"), Runner.unixSocketPath("UNIX:/run/x.sock"));
    // A unix socket is plaintext: a CA set for remote referees is not read.
    settings("unix:" + socket, "TAVOLO_TLS_CA", dir.resolve("none.pem").toString());
  }

  @Test
  void badAddressesSayWhatIsExpected() {
    String tooLong = "unix:/" + "x".repeat(Runner.MAX_SOCKET_PATH_BYTES);
    for (String address : List.of("unix:referee.sock", "unix:", "unix://host/referee.sock", tooLong)) {
      String message = configError(address);
      assertTrue(message.contains("host:port or unix:/path"), message);
      assertTrue(message.contains(address), message);
    }
    assertTrue(configError(" ").contains("host:port or unix:/path"));
  }

  @Test
  void epollIsAvailable() {
    // The transport used for unix sockets; its native library ships in grpc-netty-shaded.
    Throwable cause = Epoll.unavailabilityCause();
    assertTrue(Epoll.isAvailable(), () -> "epoll unavailable: " + cause);
  }

  @Test
  void playsOverUnixSocket() throws Exception {
    Path socket = dir.resolve("referee.sock");
    assertPlayedMatch(serveUnix(socket), settings("unix:" + socket));
  }

  @Test
  void playsOverUnixSocketWithTripleSlash() throws Exception {
    Path socket = dir.resolve("referee.sock");
    assertPlayedMatch(serveUnix(socket), settings("unix://" + socket));
  }

  @Test
  void nioFallbackConnects() throws Exception {
    Path socket = dir.resolve("referee.sock");
    serveUnix(socket);
    try (Runner.Connection connection = Runner.connectUnix(socket, false)) {
      ConnectivityState state = connection.channel().getState(true);
      long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
      while (state != ConnectivityState.READY && System.nanoTime() < giveUp) {
        Thread.sleep(20);
        state = connection.channel().getState(true);
      }
      assertEquals(ConnectivityState.READY, state);
    }
  }

  @Test
  void missingSocketFailsAfterRetrying() throws Exception {
    long start = System.nanoTime();
    int code = Runner.run(slot -> turn -> 0, settings("unix:" + dir.resolve("absent.sock")));
    assertEquals(Runner.EXIT_FAILED, code);
    assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10));
  }

  @Test
  void playsOverTcp() throws Exception {
    FakeReferee referee = new FakeReferee();
    server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).addService(referee).build().start();
    InetSocketAddress bound = (InetSocketAddress) server.getListenSockets().get(0);
    assertPlayedMatch(referee, settings("127.0.0.1:" + bound.getPort()));
  }
}
