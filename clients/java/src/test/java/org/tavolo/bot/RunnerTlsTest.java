package org.tavolo.bot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** A bot without TAVOLO_TLS_CA told at once that its referee serves TLS. */
class RunnerTlsTest {
  // What grpc-java says when a TLS referee closes a plain-text connection before a word was said.
  static final Status CLOSED_AT_ONCE = Status.UNAVAILABLE.withDescription("Network closed for unknown reason");
  static final String ADVICE =
      "it serves TLS, and this bot spoke plain text; give it the referee's certificate in TAVOLO_TLS_CA";

  private static Runner.Settings settings(String referee, byte[] tlsCa) {
    return new Runner.Settings(referee, List.of("tk"), tlsCa, 5, "");
  }

  @Test
  void aPlainTextTcpConnectionClosedAtOnceExpectsTls() {
    assertTrue(Runner.tlsExpected(settings("127.0.0.1:50051", null), CLOSED_AT_ONCE));
    assertTrue(Runner.tlsExpected(settings("referee.example.org:443", null), CLOSED_AT_ONCE));
  }

  @Test
  void aUnixSocketNeverServesTls() {
    assertFalse(Runner.tlsExpected(settings("unix:/tmp/slot.sock", null), CLOSED_AT_ONCE));
    assertFalse(Runner.tlsExpected(settings("UNIX:///tmp/slot.sock", null), CLOSED_AT_ONCE));
  }

  @Test
  void aBotWithACaAlreadySpeaksTls() {
    byte[] ca = "-----BEGIN CERTIFICATE-----".getBytes(StandardCharsets.US_ASCII);
    assertFalse(Runner.tlsExpected(settings("127.0.0.1:50051", ca), CLOSED_AT_ONCE));
  }

  @Test
  void otherStatusesSayNothingOfTls() {
    Runner.Settings plain = settings("127.0.0.1:50051", null);
    // A refused connection is a referee that is down or restarting, not one that wants TLS.
    assertFalse(Runner.tlsExpected(plain, Status.UNAVAILABLE.withDescription("io exception")));
    assertFalse(Runner.tlsExpected(plain, Status.UNAVAILABLE.withDescription("referee restarting")));
    assertFalse(Runner.tlsExpected(plain, Status.UNAVAILABLE));
    assertFalse(Runner.tlsExpected(plain, Status.INTERNAL.withDescription("Network closed for unknown reason")));
    assertFalse(Runner.tlsExpected(plain, Status.CANCELLED.withDescription("Network closed for unknown reason")));
    assertFalse(Runner.tlsExpected(plain, Status.ALREADY_EXISTS.withDescription(RunnerContractTest.SEAT_TAKEN)));
  }

  @Test
  void aRefereeThatClosesEveryConnectionIsToldOfTls() throws Exception {
    // Reads what the bot says until it falls silent, then closes: a plain-text bot sees what a
    // TLS referee's close looks like (all read, so a FIN and not a reset).
    AtomicInteger accepted = new AtomicInteger();
    try (ServerSocket listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      Thread closer = new Thread(() -> {
        while (true) {
          try (Socket s = listener.accept()) {
            accepted.incrementAndGet();
            s.setSoTimeout(200);
            drain(s.getInputStream());
          } catch (IOException e) {
            return; // the listener is closed
          }
        }
      }, "closer");
      closer.setDaemon(true);
      closer.start();
      String referee = "127.0.0.1:" + listener.getLocalPort();

      RunnerContractTest.Outcome out =
          RunnerContractTest.run(slot -> turn -> turn.legal().get(0).getId(), settings(referee, null));
      int code = out.code();
      long millis = out.millis();
      String text = String.join("\n", out.lines()).strip();

      assertEquals(Runner.EXIT_FAILED, code, text);
      assertEquals(1, text.lines().count(), text);
      assertTrue(text.startsWith("tavolo-bot: the referee at " + referee
          + " closed the connection before a word was said (UNAVAILABLE: Network closed for unknown reason): "
          + ADVICE), text);
      // Told after a few attempts, well before the 5 s reconnect window runs out. An attempt right
      // after a close may fail with the channel's last status, without a connection of its own.
      assertTrue(accepted.get() >= 1 && accepted.get() <= Runner.TLS_EXPECTED_AFTER, "connections: " + accepted);
      assertTrue(millis < 4000, millis + " ms");
    }
  }

  private static void drain(InputStream in) throws IOException {
    byte[] buffer = new byte[4096];
    try {
      while (in.read(buffer) >= 0) {
        // what a plain-text bot says is no TLS ClientHello: read it all, answer nothing
      }
    } catch (SocketTimeoutException e) {
      // silent now: close
    }
  }
}
