package org.tavolo.bot;

import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.TlsChannelCredentials;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.Channel;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollIoHandler;
import io.grpc.netty.shaded.io.netty.channel.nio.NioIoHandler;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.io.ByteArrayInputStream;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.SocketAddress;
import java.net.UnixDomainSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Level;
import java.util.logging.Logger;
import tavolo.v1.Referee.Action;
import tavolo.v1.Referee.ActionRejected;
import tavolo.v1.Referee.Decision;
import tavolo.v1.Referee.DecisionRequest;
import tavolo.v1.Referee.Event;
import tavolo.v1.Referee.Hello;
import tavolo.v1.Referee.PlayRequest;
import tavolo.v1.Referee.PlayResponse;
import tavolo.v1.Referee;
import tavolo.v1.RefereeServiceGrpc;

/**
 * Plays tickets or an entrant key: one gRPC stream per ticket (or {@code TAVOLO_STREAMS} streams
 * with a key), reconnection, and the process exit code.
 *
 * <p>Environment: {@code TAVOLO_REFEREE} (host:port, or unix:/path for a Unix-domain socket),
 * {@code TAVOLO_TICKET} (one ticket, or several separated by commas: one stream and one bot each,
 * concurrently), {@code TAVOLO_KEY} (an entrant key instead of tickets: each stream is seated in
 * the entrant's matches one after the other, a fresh bot for each, until the referee ends it with
 * status OK), {@code TAVOLO_STREAMS} (streams to open with the key, default 2), {@code
 * TAVOLO_TLS_CA} (a PEM root certificate: TLS over host:port; unset: plaintext; a unix socket is
 * always plaintext), {@code TAVOLO_RECONNECT_SECONDS} (how long to keep reconnecting after the
 * stream breaks, default 10), {@code TAVOLO_SEED} (seed text for the bot's randomness, default the
 * ticket or the key).
 *
 * <p>A refusal that trying again cannot change ends the stream at once: {@code ticket_used} (the
 * match of the ticket is over), {@code unknown_ticket}, {@code wrong_socket}, {@code process_gone},
 * and every other status that is the referee's answer. {@code ALREADY_EXISTS} {@code seat_taken}
 * (another connection still holds the seat, as right after a drop) is retried within
 * {@code TAVOLO_RECONNECT_SECONDS}, like a broken connection. With a key, {@code unknown_key} and
 * {@code key_revoked} are final too. Without {@code TAVOLO_TLS_CA}, a host:port referee that closes
 * the connection before a word was said, {@link #TLS_EXPECTED_AFTER} attempts in a row, serves TLS:
 * one line says so, and the stream stops.
 */
public final class Runner {
  /** The protocol version this SDK speaks ({@code Hello.protocol_version}). */
  public static final int PROTOCOL_VERSION = 1;

  /** Every stream ended after {@code MatchOver} (with a key: every stream ended with status OK). */
  public static final int EXIT_OK = 0;
  /** A stream failed: refused by the referee, connection lost, or the bot threw. */
  public static final int EXIT_FAILED = 1;
  /** The settings are missing or wrong; nothing was played. */
  public static final int EXIT_USAGE = 2;

  public static final double DEFAULT_RECONNECT_SECONDS = 10.0;
  /** Streams opened with a key when TAVOLO_STREAMS is unset: a partnership table seats two. */
  public static final int DEFAULT_KEY_STREAMS = 2;
  private static final long FIRST_DELAY_MS = 100;
  private static final long MAX_DELAY_MS = 1000;
  /**
   * Attempts in a row closed at once before a bot without TLS is told the referee serves TLS: one
   * such close also happens when a referee goes down in the middle of a connection.
   */
  static final int TLS_EXPECTED_AFTER = 3;
  /** The longest socket path that fits a Linux {@code sockaddr_un} (108 bytes with its NUL). */
  static final int MAX_SOCKET_PATH_BYTES = 107;
  private static final String ADDRESS_FORMS = "host:port or unix:/path";

  // Statuses a broken connection or a restarting referee produce: worth reconnecting. Every
  // other status is the referee's answer, and reconnecting would get the same one.
  private static final Set<Status.Code> TRANSIENT =
      EnumSet.of(Status.Code.UNAVAILABLE, Status.Code.CANCELLED, Status.Code.INTERNAL, Status.Code.ABORTED);

  // ALREADY_EXISTS with this reason word: another connection holds the seat now, which a drop the
  // referee has not noticed yet explains; retried like a transient status. ticket_used (the match
  // is over) and every other reason are final.
  private static final String SEAT_TAKEN = "seat_taken";

  // What the reason word that starts a status's details means.
  private static final Map<String, String> REASON_HINTS =
      Map.of(
          "ticket_used", "the match of this ticket is over",
          SEAT_TAKEN, "another connection is playing this ticket",
          "unknown_ticket", "the referee does not know this ticket",
          "wrong_socket", "this ticket works only on the socket the referee gave its bot",
          "process_gone", "the bot process this ticket was made for has ended",
          "protocol_version", "this SDK speaks protocol version " + PROTOCOL_VERSION,
          "unknown_key", "the referee knows no entrant with this key",
          "key_revoked", "the organiser revoked this key");

  private static final Map<Status.Code, String> TICKET_HINTS =
      Map.of(
          Status.Code.UNAUTHENTICATED, "the referee does not know this ticket",
          Status.Code.ALREADY_EXISTS, "another connection plays this ticket, or its match is over",
          Status.Code.PERMISSION_DENIED, "the referee does not accept this ticket here",
          Status.Code.INVALID_ARGUMENT, "the referee refused a message of this bot",
          Status.Code.FAILED_PRECONDITION, "the referee cannot play this ticket now",
          Status.Code.RESOURCE_EXHAUSTED, "the referee is over a limit");

  private static final Map<Status.Code, String> KEY_HINTS =
      Map.of(
          Status.Code.UNAUTHENTICATED, "the referee knows no entrant with this key",
          Status.Code.ALREADY_EXISTS, "another connection holds a seat of this key",
          Status.Code.PERMISSION_DENIED, "the referee does not accept this key here",
          Status.Code.INVALID_ARGUMENT, "the referee refused a message of this bot",
          Status.Code.FAILED_PRECONDITION, "the referee cannot play this key now",
          Status.Code.RESOURCE_EXHAUSTED, "the referee is over a limit");

  // gRPC and Netty log through java.util.logging; keep stderr for our own lines. The logger is
  // held here because java.util.logging keeps loggers only weakly.
  private static final Logger GRPC_LOGGER = Logger.getLogger("io.grpc");

  private Runner() {}

  /** Missing or malformed settings. */
  public static final class ConfigException extends Exception {
    public ConfigException(String message) {
      super(message);
    }
  }

  /**
   * Where to connect and what to play.
   *
   * @param referee host:port, or unix:/path (also unix:///path) for a Unix-domain socket
   * @param tickets one stream each; empty with a key
   * @param tlsCa PEM root certificate, or null for a plaintext channel (unused with a unix socket)
   * @param reconnectSeconds how long to keep reconnecting after the stream breaks
   * @param seed TAVOLO_SEED as given, or "" when it is unset (each stream then uses its ticket or
   *     key, see {@link Bot.Slot#streamSeed}); null is taken as ""
   * @param key the entrant key (TAVOLO_KEY), or "" with tickets; null is taken as ""
   * @param streams how many streams to open: with a key TAVOLO_STREAMS (default 2), with tickets
   *     one per ticket
   */
  public record Settings(
      String referee,
      List<String> tickets,
      byte[] tlsCa,
      double reconnectSeconds,
      String seed,
      String key,
      int streams) {
    public Settings {
      seed = seed == null ? "" : seed;
      key = key == null ? "" : key;
      if (key.isEmpty() == tickets.isEmpty()) {
        throw new IllegalArgumentException("Settings need tickets or a key, not both");
      }
      if (key.isEmpty() ? streams != tickets.size() : streams < 1) {
        throw new IllegalArgumentException("Settings: " + streams + " streams for " + tickets.size() + " tickets");
      }
    }

    /** The settings of tickets: one stream each. */
    public Settings(String referee, List<String> tickets, byte[] tlsCa, double reconnectSeconds, String seed) {
      this(referee, tickets, tlsCa, reconnectSeconds, seed, "", tickets.size());
    }

    /** Whether these settings play an entrant key (else tickets). */
    public boolean keyMode() {
      return !key.isEmpty();
    }

    /** The settings from the environment variables. */
    public static Settings fromEnvironment() throws ConfigException {
      return from(System.getenv());
    }

    /** The settings from a map of environment variables. */
    public static Settings from(Map<String, String> env) throws ConfigException {
      String referee = env.getOrDefault("TAVOLO_REFEREE", "").strip();
      if (referee.isEmpty()) {
        throw new ConfigException("no referee address: set TAVOLO_REFEREE to " + ADDRESS_FORMS);
      }
      boolean unixSocket = unixSocketPath(referee) != null; // checks a unix: address

      List<String> tickets = new ArrayList<>();
      for (String t : env.getOrDefault("TAVOLO_TICKET", "").split(",")) {
        if (!t.isBlank()) {
          tickets.add(t.strip());
        }
      }
      String key = env.getOrDefault("TAVOLO_KEY", "").strip();
      if (!tickets.isEmpty() && !key.isEmpty()) {
        throw new ConfigException("both TAVOLO_TICKET and TAVOLO_KEY are set: set one of them, not both");
      }
      if (tickets.isEmpty() && key.isEmpty()) {
        throw new ConfigException(
            "no ticket or key: set TAVOLO_TICKET (several tickets: comma-separated) or TAVOLO_KEY (an entrant key)");
      }
      if (key.contains(",")) {
        // Several keys would be several entrants: one process plays one.
        throw new ConfigException("TAVOLO_KEY holds one entrant key, without commas: run one process per key");
      }
      int streams = key.isEmpty() ? tickets.size() : keyStreams(env.getOrDefault("TAVOLO_STREAMS", ""));
      byte[] tlsCa = null;
      String caPath = env.getOrDefault("TAVOLO_TLS_CA", "").strip();
      // A unix socket is local and plaintext: TAVOLO_TLS_CA is for remote referees (host:port),
      // and a CA file set for those may not even be readable where the referee starts a bot.
      if (!caPath.isEmpty() && !unixSocket) {
        try {
          tlsCa = Files.readAllBytes(Path.of(caPath));
        } catch (NoSuchFileException e) {
          throw new ConfigException("cannot read TAVOLO_TLS_CA '" + caPath + "': no such file");
        } catch (IOException | RuntimeException e) {
          throw new ConfigException("cannot read TAVOLO_TLS_CA '" + caPath + "': " + e.getMessage());
        }
      }
      double reconnect = DEFAULT_RECONNECT_SECONDS;
      String text = env.getOrDefault("TAVOLO_RECONNECT_SECONDS", "").strip();
      if (!text.isEmpty()) {
        try {
          reconnect = Double.parseDouble(text);
        } catch (NumberFormatException e) {
          reconnect = -1;
        }
        if (!(reconnect >= 0) || Double.isInfinite(reconnect)) {
          throw new ConfigException("TAVOLO_RECONNECT_SECONDS must be seconds >= 0, not '" + text + "'");
        }
      }
      String seed = env.getOrDefault("TAVOLO_SEED", "");
      return new Settings(referee, List.copyOf(tickets), tlsCa, reconnect, seed, key, streams);
    }

    /** TAVOLO_STREAMS: a whole number >= 1, {@link #DEFAULT_KEY_STREAMS} when unset or empty. */
    private static int keyStreams(String value) throws ConfigException {
      String text = value.strip();
      if (text.isEmpty()) {
        return DEFAULT_KEY_STREAMS;
      }
      int streams = -1;
      if (text.matches("[0-9]+")) {
        try {
          streams = Integer.parseInt(text);
        } catch (NumberFormatException e) {
          streams = -1; // too large for an int
        }
      }
      if (streams < 1) {
        throw new ConfigException("TAVOLO_STREAMS must be a whole number >= 1, not '" + text + "'");
      }
      return streams;
    }
  }

  /** Runs {@code factory}'s bots with the settings from the environment; exits with the code. */
  public static void main(Bot.Factory factory) {
    System.exit(run(factory));
  }

  /** Runs {@code factory}'s bots with the settings from the environment; the exit code. */
  public static int run(Bot.Factory factory) {
    return run(factory, System.getenv());
  }

  /**
   * Runs {@code factory}'s bots with the settings from a map of environment variables; the exit
   * code (2, with one line on stderr, when the settings are missing or wrong).
   */
  public static int run(Bot.Factory factory, Map<String, String> env) {
    Settings settings;
    try {
      settings = Settings.from(env);
    } catch (ConfigException e) {
      say(e.getMessage());
      return EXIT_USAGE;
    }
    return run(factory, settings);
  }

  /**
   * Plays every ticket with a fresh bot each, concurrently: {@code factory} is called once per
   * ticket, before any stream opens, and that bot keeps its ticket's stream (also across
   * reconnections). With a key, opens {@code settings.streams()} streams, concurrently, and each
   * calls {@code factory} at every {@code Welcome} that names a new match; that bot keeps the match
   * (also across reconnections). Returns 0 when every stream ended after {@code MatchOver} (with a
   * key: with status OK, the entrant having no match left), 1 when one failed, 2 when the settings
   * are wrong.
   */
  public static int run(Bot.Factory factory, Settings settings) {
    GRPC_LOGGER.setLevel(Level.OFF);
    warmUp();
    int count = settings.streams();
    Shared shared = new Shared();
    List<PlayStream> streams = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      if (settings.keyMode()) {
        String label = count > 1 ? "stream " + (i + 1) + "/" + count + ": " : "";
        streams.add(new PlayStream(null, "", factory, i, label, settings, shared));
        continue;
      }
      String ticket = settings.tickets().get(i);
      String seed = Bot.Slot.streamSeed(settings.seed(), ticket, i, count);
      Bot bot;
      try {
        bot = factory.create(new Bot.Slot(ticket, i, count, seed));
      } catch (RuntimeException e) {
        say("making the bot threw an exception:");
        e.printStackTrace();
        return EXIT_FAILED;
      }
      if (bot == null) {
        say("the bot factory returned null");
        return EXIT_FAILED;
      }
      String label = count > 1 ? "ticket " + (i + 1) + "/" + count + ": " : "";
      streams.add(new PlayStream(bot, ticket, factory, i, label, settings, shared));
    }
    Connection connection;
    try {
      connection = connect(settings);
    } catch (ConfigException e) {
      say(e.getMessage());
      return EXIT_USAGE;
    }
    ManagedChannel channel = connection.channel();
    try {
      int code = EXIT_OK;
      if (count == 1) {
        return streams.get(0).play(channel);
      }
      List<CompletableFuture<Integer>> results = new ArrayList<>();
      for (PlayStream s : streams) {
        CompletableFuture<Integer> result = new CompletableFuture<>();
        Runnable play = () -> {
          try {
            result.complete(s.play(channel));
          } catch (Throwable t) {
            result.completeExceptionally(t);
          }
        };
        Thread thread = new Thread(play, "tavolo-stream-" + streams.indexOf(s));
        thread.setDaemon(true);
        thread.start();
        results.add(result);
      }
      for (CompletableFuture<Integer> r : results) {
        code = Math.max(code, r.get());
      }
      return code;
    } catch (InterruptedException e) {
      say("interrupted");
      return EXIT_FAILED;
    } catch (ExecutionException e) {
      say("a stream failed:");
      e.getCause().printStackTrace();
      return EXIT_FAILED;
    } finally {
      connection.close();
    }
  }

  /**
   * Loads and runs once the code that every decision uses (protobuf parsing, {@link Turn},
   * {@link Cards}), so that the first real decision is not slowed by class loading. Runs before
   * the Hello: the referee allows 10 s for that, and does not time it as a decision.
   */
  static void warmUp() {
    try {
      Referee.Action led = play(12, "AC");
      Referee.Observation.Builder observation =
          Referee.Observation.newBuilder().setSeat(1).setPlayers(4).addAllHand(List.of("3D", "AS", "4B"));
      observation.addTrick(Referee.Play.newBuilder().setSeat(0).setAction(led));
      observation.addTricks(Referee.Trick.newBuilder().addPlays(Referee.Play.newBuilder().setAction(led)));
      DecisionRequest.Builder request =
          DecisionRequest.newBuilder().setRequestId(1).setDeadlineMs(1000).setObservation(observation);
      for (String card : observation.getHandList()) {
        request.addLegalActions(play(Cards.ALL.indexOf(card), card));
      }
      request.addLegalActions(
          Referee.Action.newBuilder().setId(321).setKind(Referee.ActionKind.ACTION_KIND_CALL_OUT).setText("call-out"));
      Event event =
          Event.newBuilder().setCardPlayed(Referee.CardPlayed.newBuilder().setSeat(0).setCard("AC")).build();
      PlayResponse response = PlayResponse.newBuilder().addEvents(event).setRequest(request).build();
      PlayResponse parsed = PlayResponse.parseFrom(response.toByteArray());
      Turn turn = new Turn(parsed.getRequest());
      turn.quietPlays().stream()
          .min(Comparator.comparing((Referee.Action a) -> Turn.cardOf(a).orElseThrow(), Cards.CHEAPEST_FIRST));
      turn.ledSuit().ifPresent(suit -> turn.winningCard().ifPresent(best -> Cards.beats("3D", best, suit)));
      turn.declarations();
      turn.find("AS");
      turn.playedCards();
      Cards.sorted(turn.hand());
      Decision decision = Decision.newBuilder().setRequestId(1).setActionId(checked(0, parsed.getRequest(), "")).build();
      PlayRequest.newBuilder().setDecision(decision).build().toByteArray();
    } catch (Exception e) {
      // Only a warm-up: the real decisions will report any real problem.
    }
  }

  private static Referee.Action play(int id, String card) {
    return Referee.Action.newBuilder()
        .setId(id)
        .setKind(Referee.ActionKind.ACTION_KIND_PLAY)
        .setCard(card)
        .setText(card)
        .build();
  }

  /**
   * The socket path of a {@code unix:/path} or {@code unix:///path} address (gRPC's forms, taken
   * literally: no percent-decoding), or null for any other address (host:port).
   */
  static Path unixSocketPath(String referee) throws ConfigException {
    if (!referee.regionMatches(true, 0, "unix:", 0, 5)) {
      return null;
    }
    String path = referee.substring(5);
    if (path.startsWith("//")) {
      if (!path.startsWith("///")) {
        throw badReferee(referee, "a unix: address names no host; write unix:/path or unix:///path");
      }
      path = path.substring(2);
    }
    if (!path.startsWith("/")) {
      throw badReferee(referee, "the socket path must be absolute");
    }
    int bytes = path.getBytes(StandardCharsets.UTF_8).length;
    if (bytes > MAX_SOCKET_PATH_BYTES) {
      throw badReferee(referee, "the socket path is " + bytes + " bytes long, more than a socket address holds ("
          + MAX_SOCKET_PATH_BYTES + ")");
    }
    try {
      return Path.of(path);
    } catch (InvalidPathException e) {
      throw badReferee(referee, e.getMessage());
    }
  }

  private static ConfigException badReferee(String referee, String reason) {
    return new ConfigException("bad TAVOLO_REFEREE '" + referee + "' (" + ADDRESS_FORMS + "): " + reason);
  }

  /** The channel to the referee, and the event loop that a unix-socket channel has to itself. */
  record Connection(ManagedChannel channel, EventLoopGroup group) implements AutoCloseable {
    @Override
    public void close() {
      channel.shutdownNow();
      if (group != null) {
        try {
          channel.awaitTermination(1, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
      }
    }
  }

  static Connection connect(Settings settings) throws ConfigException {
    Path socket = unixSocketPath(settings.referee());
    if (socket != null) {
      return connectUnix(socket, Epoll.isAvailable());
    }
    return new Connection(makeChannel(settings), null);
  }

  /**
   * A plaintext channel to a Unix-domain socket, on one event-loop thread of its own (a bot may
   * run under a cap on threads). Netty's epoll transport needs its native library, which Netty
   * unpacks from the jar to java.io.tmpdir; where that cannot load (a noexec /tmp, say) the JDK's
   * own Unix-domain sockets (NIO) do the same job.
   */
  static Connection connectUnix(Path socket, boolean epoll) {
    DefaultThreadFactory threads = new DefaultThreadFactory("tavolo-uds", true);
    EventLoopGroup group;
    Class<? extends Channel> type;
    SocketAddress address;
    if (epoll) {
      group = new MultiThreadIoEventLoopGroup(1, threads, EpollIoHandler.newFactory());
      type = EpollDomainSocketChannel.class;
      address = new DomainSocketAddress(socket.toString());
    } else {
      group = new MultiThreadIoEventLoopGroup(1, threads, NioIoHandler.newFactory());
      type = NioDomainSocketChannel.class;
      address = UnixDomainSocketAddress.of(socket);
    }
    try {
      ManagedChannel channel =
          NettyChannelBuilder.forAddress(address)
              .eventLoopGroup(group)
              .channelType(type, address.getClass())
              .overrideAuthority("localhost") // as gRPC core does for unix: targets
              .usePlaintext()
              .build();
      return new Connection(channel, group);
    } catch (RuntimeException e) {
      group.shutdownGracefully(0, 0, TimeUnit.SECONDS);
      throw e;
    }
  }

  private static ManagedChannel makeChannel(Settings settings) throws ConfigException {
    ChannelCredentials credentials;
    if (settings.tlsCa() == null) {
      credentials = InsecureChannelCredentials.create();
    } else {
      try {
        credentials =
            TlsChannelCredentials.newBuilder().trustManager(new ByteArrayInputStream(settings.tlsCa())).build();
      } catch (IOException | RuntimeException e) {
        throw new ConfigException("TAVOLO_TLS_CA holds no usable PEM certificate: " + e.getMessage());
      }
    }
    try {
      return Grpc.newChannelBuilder(settings.referee(), credentials).build();
    } catch (RuntimeException e) {
      String message = String.valueOf(e.getMessage());
      if (settings.tlsCa() != null && message.contains("SslContext")) {
        String reason = message.replaceAll(".*Unable to create SslContext: ([^;]*).*", "$1");
        throw new ConfigException("TAVOLO_TLS_CA holds no usable PEM certificate: " + reason);
      }
      throw badReferee(settings.referee(), message);
    }
  }

  /** The reason word that starts the referee's details ({@code ticket_used: ...}), or "". */
  static String reason(String details) {
    if (details == null) {
      return "";
    }
    int colon = details.indexOf(':');
    return colon < 0 ? "" : details.substring(0, colon).strip();
  }

  /**
   * Whether a stream that ended with this status is worth opening again: a broken connection or a
   * restarting referee ({@code UNAVAILABLE}, ...) is, and so is {@code ALREADY_EXISTS}
   * {@code seat_taken}; any other status is the referee's answer for good.
   */
  static boolean retryable(Status status) {
    Status.Code code = status.getCode();
    if (TRANSIENT.contains(code)) {
      return true;
    }
    return code == Status.Code.ALREADY_EXISTS && reason(status.getDescription()).equals(SEAT_TAKEN);
  }

  /**
   * Whether a TCP connection made without TLS was closed at once, as a referee that serves TLS
   * closes a plain-text one (a restarting referee refuses the connection instead; a slot's own
   * Unix socket never serves TLS). grpc-java says "Network closed for unknown reason" when the
   * connection ends before any HTTP/2 frame or error.
   */
  static boolean tlsExpected(Settings settings, Status status) {
    String details = status.getDescription();
    boolean closed = details != null && details.contains("Network closed for unknown reason");
    boolean tcp = !settings.referee().regionMatches(true, 0, "unix:", 0, 5);
    return settings.tlsCa() == null && tcp && status.getCode() == Status.Code.UNAVAILABLE && closed;
  }

  /** One line to stderr; whitespace runs (newlines in gRPC details) become one space. */
  static void say(String line) {
    System.err.println("tavolo-bot: " + line.strip().replaceAll("\\s+", " "));
    System.err.flush();
  }

  /** The action id chosen, checked against the legal list (a warning only: it is sent anyway). */
  static int checked(int chosen, DecisionRequest request, String label) {
    for (Action a : request.getLegalActionsList()) {
      if (a.getId() == chosen) {
        return chosen;
      }
    }
    say(label + "choose() returned " + chosen + ", not a legal action id; sending it anyway");
    return chosen;
  }

  /** What every stream of one process shares. */
  private static final class Shared {
    /** The streams_per_table note has been printed. */
    final AtomicBoolean saidStreams = new AtomicBoolean();
    /** The lines that ended key streams, printed once for all of them. */
    final Set<String> endings = ConcurrentHashMap.newKeySet();
  }

  /** Stops the stream with its message (no stack trace): exit 1. */
  private static final class StreamStop extends RuntimeException {
    StreamStop(String message) {
      super(message);
    }
  }

  /** The factory threw while making the bot of a match (key mode). */
  private static final class FactoryFailure extends RuntimeException {
    FactoryFailure(String matchId, Throwable cause) {
      super("making the bot of match " + matchId + " threw an exception", cause);
    }
  }

  /** The match a stream is playing, with its bot. */
  private static final class MatchState {
    final Bot bot;
    /** {@code Welcome.match_id}; "" with a ticket. */
    final String matchId;
    /** {@code Welcome.slot} (key mode). */
    final int slot;
    volatile boolean over;
    // The last request answered and its answer: a request re-sent after a reconnection gets the
    // same answer without asking the bot twice (a random bot would drift otherwise). Request ids
    // are unique within a match only.
    long answeredRequest = -1;
    int answeredAction;
    long seenRequest = -1;

    MatchState(Bot bot, String matchId, int slot) {
      this.bot = bot;
      this.matchId = matchId;
      this.slot = slot;
    }
  }

  /**
   * One stream, reconnected while it has play left. With a ticket: one match, with one bot. With a
   * key: the entrant's matches one after the other, a fresh bot for each, until the referee ends
   * the stream with status OK.
   */
  private static final class PlayStream {
    private final String ticket;
    private final Bot.Factory factory;
    private final int index;
    private final String label;
    private final Settings settings;
    private final Shared shared;
    private final boolean keyMode;
    private volatile MatchState match;
    /** Matches begun on this stream (key mode): the last one's number. */
    private int matches;
    private volatile boolean established;
    private volatile Throwable botFailure;
    /** This stream's compact observations made complete; afresh on each call. */
    private final CompactMerger merger = new CompactMerger();

    /** A ticket's stream plays {@code bot}; a key's ({@code bot} null) makes one per match. */
    PlayStream(Bot bot, String ticket, Bot.Factory factory, int index, String label, Settings settings, Shared shared) {
      this.ticket = ticket;
      this.factory = factory;
      this.index = index;
      this.label = label;
      this.settings = settings;
      this.shared = shared;
      this.keyMode = bot == null;
      this.match = bot == null ? null : new MatchState(bot, "", 0);
    }

    private void say(String line) {
      Runner.say(label + line);
    }

    /**
     * The line that ends this stream. A key's streams are alike, and a refusal of the key (an
     * unknown or revoked key, a lost referee) ends each of them: the line is said once, unlabelled.
     */
    private void sayEnd(String line) {
      if (!keyMode) {
        say(line);
      } else if (shared.endings.add(line)) {
        Runner.say(line);
      }
    }

    /** Plays the ticket to the end of its match, or the key until the referee ends it; the exit code. */
    int play(ManagedChannel channel) {
      long window = Math.round(settings.reconnectSeconds() * 1000);
      long giveUpAt = -1;
      long delay = FIRST_DELAY_MS;
      boolean everEstablished = false;
      int closedAtOnce = 0; // attempts in a row closed at once, as TLS closes plain text
      String what = keyMode ? "key" : "ticket";
      while (true) {
        established = false;
        Status status = session(channel);
        if (botFailure instanceof StreamStop) {
          say(botFailure.getMessage() + "; this stream stops");
          return EXIT_FAILED;
        }
        if (botFailure instanceof FactoryFailure) {
          say(botFailure.getMessage() + "; this stream stops:");
          botFailure.getCause().printStackTrace();
          return EXIT_FAILED;
        }
        if (botFailure != null) {
          say("the bot threw an exception; this stream stops:");
          botFailure.printStackTrace();
          return EXIT_FAILED;
        }
        MatchState current = match;
        if (!keyMode && current.over) {
          return EXIT_OK; // how the stream ended no longer matters
        }
        if (status.isOk()) {
          // With a key, OK after KeyAccepted is the referee's "no match left": it comes between
          // matches, never in the middle of one.
          if (keyMode && established) {
            if (current == null || current.over) {
              return EXIT_OK;
            }
            say("the referee ended the stream before match " + current.matchId + " was over");
            return EXIT_FAILED;
          }
          say(keyMode
              ? "the referee ended the stream before accepting the key"
              : "the referee ended the stream before the match was over");
          return EXIT_FAILED;
        }
        String outcome = describe(status);
        if (!retryable(status)) {
          String hint = hint(status);
          sayEnd("the referee at " + settings.referee() + " ended the stream: " + outcome
              + (hint == null ? "" : " (" + hint + ")"));
          return EXIT_FAILED;
        }
        everEstablished |= established;
        closedAtOnce = !everEstablished && tlsExpected(settings, status) ? closedAtOnce + 1 : 0;
        if (closedAtOnce >= TLS_EXPECTED_AFTER) {
          // Retrying cannot help: the referee wants TLS, which only TAVOLO_TLS_CA gives.
          sayEnd("the referee at " + settings.referee() + " closed the connection before a word was said ("
              + outcome + "): it serves TLS, and this bot spoke plain text; give it the referee's certificate"
              + " in TAVOLO_TLS_CA");
          return EXIT_FAILED;
        }
        long now = System.nanoTime() / 1_000_000;
        if (established || giveUpAt < 0) {
          giveUpAt = now + window;
          delay = FIRST_DELAY_MS;
        }
        if (now + delay > giveUpAt) {
          String why =
              status.getCode() == Status.Code.ALREADY_EXISTS
                  ? "another connection still holds the seat of this " + what
                  : everEstablished ? "lost the referee" : "cannot reach the referee";
          sayEnd(why + " at " + settings.referee() + " (" + outcome + "); gave up after retrying for "
              + seconds(settings.reconnectSeconds()) + " s (TAVOLO_RECONNECT_SECONDS)");
          return EXIT_FAILED;
        }
        try {
          Thread.sleep(delay);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return EXIT_FAILED;
        }
        channel.resetConnectBackoff(); // the channel's own backoff (1 s to 120 s) is slower
        delay = Math.min(delay * 2, MAX_DELAY_MS);
      }
    }

    private String hint(Status status) {
      String byReason = REASON_HINTS.get(reason(status.getDescription()));
      return byReason != null ? byReason : (keyMode ? KEY_HINTS : TICKET_HINTS).get(status.getCode());
    }

    private static String seconds(double s) {
      return s == Math.rint(s) ? Long.toString((long) s) : Double.toString(s);
    }

    private static String describe(Status status) {
      String text = status.getCode().name();
      if (status.getDescription() != null) {
        text += ": " + status.getDescription();
      }
      Throwable cause = status.getCause();
      if (cause != null && cause.getMessage() != null) {
        text += " (" + cause.getMessage() + ")";
      } else if (cause instanceof FileNotFoundException) {
        text += " (no such socket)"; // how the epoll transport reports ENOENT on a unix socket
      }
      return text;
    }

    /** One stream, from Hello to its end; how it ended. */
    private Status session(ManagedChannel channel) {
      CompletableFuture<Status> end = new CompletableFuture<>();
      ClientResponseObserver<PlayRequest, PlayResponse> observer =
          new ClientResponseObserver<>() {
            private ClientCallStreamObserver<PlayRequest> out;

            @Override
            public void beforeStart(ClientCallStreamObserver<PlayRequest> requestStream) {
              out = requestStream;
            }

            @Override
            public void onNext(PlayResponse response) {
              established = true;
              if (botFailure != null) {
                return; // the stream is being cancelled
              }
              Decision decision;
              try {
                decision = handle(response);
              } catch (Throwable t) { // the bot's own code failed: stop this stream
                botFailure = t;
                out.cancel("the bot threw an exception", null);
                return;
              }
              if (decision != null) {
                send(out, PlayRequest.newBuilder().setDecision(decision).build());
              }
            }

            @Override
            public void onError(Throwable t) {
              end.complete(Status.fromThrowable(t));
            }

            @Override
            public void onCompleted() {
              end.complete(Status.OK);
            }
          };
      // A new call starts with a complete observation (the first after its Welcome).
      merger.reset();
      ClientCallStreamObserver<PlayRequest> out =
          (ClientCallStreamObserver<PlayRequest>) RefereeServiceGrpc.newStub(channel).play(observer);
      Hello.Builder hello = Hello.newBuilder().setProtocolVersion(PROTOCOL_VERSION).setCompactObservations(true);
      if (keyMode) {
        hello.setKey(settings.key());
      } else {
        hello.setTicket(ticket);
      }
      send(out, PlayRequest.newBuilder().setHello(hello).build());
      try {
        return end.get();
      } catch (InterruptedException | ExecutionException e) {
        out.cancel("interrupted", e);
        return Status.CANCELLED.withDescription("interrupted");
      }
    }

    private static void send(ClientCallStreamObserver<PlayRequest> out, PlayRequest message) {
      synchronized (out) {
        try {
          out.onNext(message);
        } catch (IllegalStateException e) {
          // The call is over; its end (onError/onCompleted) says how.
        }
      }
    }

    /** Key mode: a fresh bot for slot {@code seat} of match {@code matchId}, the stream's next match. */
    private MatchState begin(String matchId, int seat) {
      matches++;
      String seed =
          Bot.Slot.matchSeed(Bot.Slot.streamSeed(settings.seed(), settings.key(), index, settings.streams()), matches);
      Bot.Slot slot = new Bot.Slot("", index, settings.streams(), seed, settings.key(), matches, matchId);
      Bot bot;
      try {
        bot = factory.create(slot);
      } catch (RuntimeException e) {
        throw new FactoryFailure(matchId, e);
      }
      if (bot == null) {
        throw new StreamStop("the bot factory returned null for match " + matchId);
      }
      match = new MatchState(bot, matchId, seat);
      return match;
    }

    /** KeyAccepted: a note when this process alone cannot fill one of the entrant's tables. */
    private void accepted(Referee.KeyAccepted k) {
      if (k.getStreamsPerTable() <= settings.streams() || shared.saidStreams.getAndSet(true)) {
        return;
      }
      // Not an error: other processes may open the other streams with the same key.
      Runner.say("the referee seats " + k.getStreamsPerTable() + " streams of entrant '" + k.getEntrant()
          + "' per table and this process opens " + settings.streams() + " (TAVOLO_STREAMS): a table starts"
          + " only when other streams with this key join");
    }

    /**
     * Key mode: whether {@code event} is a Welcome to another seat (match and slot) than the one
     * being played, which begins a new match; a Welcome to it is a reconnection, which keeps the bot.
     */
    private boolean beginsMatch(Event event) {
      if (!keyMode || event.getEventCase() != Event.EventCase.WELCOME) {
        return false;
      }
      MatchState current = match;
      Referee.Welcome welcome = event.getWelcome();
      return current == null || !welcome.getMatchId().equals(current.matchId) || welcome.getSlot() != current.slot;
    }

    /** Passes the events to the bot; the decision to send if the response asks for one. */
    private Decision handle(PlayResponse response) {
      boolean hasRequest = response.hasRequest();
      long requestId = hasRequest ? response.getRequest().getRequestId() : -1;
      boolean begins = response.getEventsList().stream().anyMatch(this::beginsMatch);
      // The first request after a Welcome is complete: nothing before it counts.
      if (response.getEventsList().stream().anyMatch(e -> e.getEventCase() == Event.EventCase.WELCOME)) {
        merger.reset();
      }
      // After a reconnection the referee re-sends the open request with its events: the bot has
      // heard those events already if it saw this request.
      MatchState before = match;
      boolean repeated = hasRequest && !begins && before != null && requestId == before.seenRequest;
      if (!repeated) {
        for (Event event : response.getEventsList()) {
          if (event.getEventCase() == Event.EventCase.KEY_ACCEPTED) {
            accepted(event.getKeyAccepted());
            continue; // the stream's event, not a match's: no bot hears it
          }
          if (beginsMatch(event)) {
            begin(event.getWelcome().getMatchId(), event.getWelcome().getSlot());
          }
          switch (event.getEventCase()) {
            case ACTION_REJECTED -> {
              ActionRejected r = event.getActionRejected();
              // A stale answer (re-sent, or too late) closes no attempt: no count to show.
              String left = r.getReason().equals("stale_request") ? "" : "; " + r.getAttemptsLeft() + " attempts left";
              say("action " + r.getActionId() + " was rejected (" + r.getReason() + ": " + r.getMessage() + ")" + left);
            }
            case ERROR -> say("referee reports " + event.getError().getReason() + ": " + event.getError().getMessage());
            default -> {}
          }
          MatchState current = match;
          if (current == null) {
            // Key mode before the first Welcome: no match, so no bot to hear the event (an
            // ErrorEvent is printed above; kinds newer than this SDK are skipped, as a bot would).
            continue;
          }
          current.bot.onEvent(event);
          if (event.getEventCase() == Event.EventCase.MATCH_OVER && !current.over) {
            current.over = true;
            current.bot.onMatchOver();
          }
        }
      }
      if (!hasRequest) {
        return null;
      }
      MatchState current = match;
      if (current == null) {
        throw new StreamStop("the referee sent a request before a Welcome");
      }
      DecisionRequest request;
      try {
        request = merger.complete(response.getRequest());
      } catch (CompactMerger.CompactException e) {
        throw new StreamStop(e.getMessage());
      }
      current.seenRequest = requestId;
      int chosen;
      if (current.answeredRequest == requestId) {
        chosen = current.answeredAction;
      } else {
        chosen = checked(current.bot.choose(new Turn(request)), request, label);
        current.answeredRequest = requestId;
        current.answeredAction = chosen;
      }
      return Decision.newBuilder().setRequestId(requestId).setActionId(chosen).build();
    }
  }
}
