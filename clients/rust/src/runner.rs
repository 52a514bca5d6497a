//! Playing tickets: one gRPC stream per ticket, reconnection, and the process exit code;
//! or an entrant key: several streams, each seated in match after match.

use std::collections::HashMap;
use std::fmt;
use std::panic::AssertUnwindSafe;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::Poll;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::{Channel, Endpoint};
use tonic::{Code, Status};

use crate::compact::Merger;
use crate::pb::referee_service_client::RefereeServiceClient;
use crate::pb::{self, PlayRequest, PlayResponse, event::Event, play_request};
use crate::{Bot, Turn};

/// The protocol version this SDK speaks (`Hello.protocol_version`).
pub const PROTOCOL_VERSION: u32 = 1;
/// Every stream ended after `MatchOver` (with a key: the referee ended each with OK).
pub const EXIT_OK: u8 = 0;
/// A stream failed: refused by the referee, connection lost for good, or the bot panicked.
pub const EXIT_FAILED: u8 = 1;
/// The settings are missing or wrong; nothing was played.
pub const EXIT_USAGE: u8 = 2;

const DEFAULT_RECONNECT: Duration = Duration::from_secs(10);
/// Streams an entrant key opens unless `TAVOLO_STREAMS` says otherwise: a partnership
/// table seats the entrant on two at once.
pub const DEFAULT_STREAMS: usize = 2;
/// Attempts in a row closed at once before a bot without TLS is told the referee serves TLS:
/// one such close also happens when a referee goes down in the middle of a connection.
const TLS_EXPECTED_AFTER: u32 = 3;
const FIRST_DELAY: Duration = Duration::from_millis(100);
const MAX_DELAY: Duration = Duration::from_secs(1);

/// Missing or malformed settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

/// Where the referee listens, as `TAVOLO_REFEREE` gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefereeAddress {
    /// `host:port` (TCP, with TLS when `TAVOLO_TLS_CA` is set): remote bots.
    Tcp(String),
    /// The path of a Unix-domain socket, from `unix:/path` or `unix:///path` (gRPC's
    /// naming; `unix:relative/path` is relative to the working folder). The referee gives
    /// every bot it starts a socket of its own.
    Unix(String),
}

impl RefereeAddress {
    /// Parses `host:port`, `unix:/path` or `unix:///path`. Only the `unix:` forms are
    /// checked here; a malformed `host:port` is reported when the channel is made.
    pub fn parse(text: &str) -> Result<RefereeAddress, ConfigError> {
        let Some(rest) = text.strip_prefix("unix:") else {
            return Ok(RefereeAddress::Tcp(text.to_string()));
        };
        let bad = |why: &str| {
            ConfigError(format!(
                "TAVOLO_REFEREE {text:?} is not host:port or unix:/path ({why})"
            ))
        };
        let path = match rest.strip_prefix("//") {
            // unix:///path: an empty authority, then the absolute path.
            Some(after) if after.starts_with('/') => after,
            Some(_) => return Err(bad("a unix:// address must be unix:///absolute/path")),
            None => rest,
        };
        if path.is_empty() {
            return Err(bad("no socket path"));
        }
        if path.contains('\0') {
            return Err(bad("the socket path holds a NUL byte"));
        }
        Ok(RefereeAddress::Unix(path.to_string()))
    }
}

/// Where to connect and what to play.
#[derive(Debug, Clone)]
pub struct Settings {
    /// `host:port`, `unix:/path` or `unix:///path` (see [`RefereeAddress`]).
    pub referee: String,
    /// One stream per ticket; empty with a key.
    pub tickets: Vec<String>,
    /// `TAVOLO_KEY`: an entrant key, played on `streams` streams; empty with tickets.
    pub key: String,
    /// `TAVOLO_STREAMS`: how many streams the key opens (ignored with tickets).
    pub streams: usize,
    /// `TAVOLO_SEED` as given; empty when unset (then each stream seeds from its own
    /// ticket: see [`StreamInfo::seed`]).
    pub seed: String,
    /// PEM root certificate; None for plaintext.
    pub tls_ca: Option<Vec<u8>>,
    /// How long to keep reconnecting after the stream breaks.
    pub reconnect: Duration,
}

impl Settings {
    /// Settings from `TAVOLO_REFEREE`, `TAVOLO_TICKET` (comma-separated tickets) or
    /// `TAVOLO_KEY` (and `TAVOLO_STREAMS`), `TAVOLO_SEED`, `TAVOLO_TLS_CA` and
    /// `TAVOLO_RECONNECT_SECONDS`.
    pub fn from_env() -> Result<Settings, ConfigError> {
        Settings::from_lookup(|name| std::env::var(name).ok())
    }

    /// Settings from any variable lookup (for tests, or settings kept elsewhere).
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Settings, ConfigError> {
        let var = |name: &str| get(name).map(|v| v.trim().to_string()).unwrap_or_default();
        let referee = var("TAVOLO_REFEREE");
        if referee.is_empty() {
            return Err(ConfigError(
                "no referee address: set TAVOLO_REFEREE to host:port or unix:/path".into(),
            ));
        }
        RefereeAddress::parse(&referee)?;
        let tickets: Vec<String> = var("TAVOLO_TICKET")
            .split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(String::from)
            .collect();
        let key = var("TAVOLO_KEY");
        if !key.is_empty() && !tickets.is_empty() {
            return Err(ConfigError(
                "both TAVOLO_TICKET and TAVOLO_KEY are set: set one (a ticket plays one match, \
                 a key all of an entrant's matches)"
                    .into(),
            ));
        }
        if key.is_empty() && tickets.is_empty() {
            return Err(ConfigError(
                "no ticket or key: set TAVOLO_TICKET (several tickets: comma-separated) \
                 or TAVOLO_KEY (a tournament's entrant key)"
                    .into(),
            ));
        }
        let text = var("TAVOLO_STREAMS");
        let streams = if text.is_empty() {
            DEFAULT_STREAMS
        } else {
            match text.parse::<usize>() {
                Ok(n) if n >= 1 && text.bytes().all(|b| b.is_ascii_digit()) => n,
                _ => {
                    return Err(ConfigError(format!(
                        "TAVOLO_STREAMS must be a whole number >= 1, not {text:?}"
                    )));
                }
            }
        };
        let seed = get("TAVOLO_SEED").unwrap_or_default();
        let ca_path = var("TAVOLO_TLS_CA");
        let tls_ca = if ca_path.is_empty() {
            None
        } else {
            let pem = std::fs::read(&ca_path)
                .map_err(|e| ConfigError(format!("cannot read TAVOLO_TLS_CA {ca_path:?}: {e}")))?;
            Some(pem)
        };
        let text = var("TAVOLO_RECONNECT_SECONDS");
        let reconnect = if text.is_empty() {
            DEFAULT_RECONNECT
        } else {
            text.parse::<f64>()
                .ok()
                .and_then(|s| Duration::try_from_secs_f64(s).ok())
                .ok_or_else(|| {
                    ConfigError(format!(
                        "TAVOLO_RECONNECT_SECONDS must be seconds >= 0, not {text:?}"
                    ))
                })?
        };
        Ok(Settings {
            referee,
            tickets,
            key,
            streams,
            seed,
            tls_ca,
            reconnect,
        })
    }
}

/// What a bot factory learns about the stream its bot will play (with a key: the match).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StreamInfo {
    /// The ticket; empty with a key. A secret: do not print it.
    pub ticket: String,
    /// The entrant key (`TAVOLO_KEY`); empty with a ticket. A secret too.
    pub key: String,
    /// From 0, in `TAVOLO_TICKET` order, or the key's stream.
    pub index: usize,
    /// How many tickets, or key streams (`TAVOLO_STREAMS`).
    pub count: usize,
    /// With a key: the entrant's name (`KeyAccepted::entrant`).
    pub entrant: String,
    /// With a key: the match (`Welcome::match_id`).
    pub match_id: String,
    /// With a key: the match's ordinal on this stream, 1, 2, ...; 0 with a ticket.
    pub match_number: u32,
    /// Seed text for this bot's randomness: `TAVOLO_SEED`, or this stream's own ticket (or
    /// the key) when it is unset (or empty), with `/<index>` appended when the process
    /// plays several streams; with a key, then `/match/<match_number>`. See
    /// [`stream_seed`] and [`match_seed`].
    pub seed: String,
}

impl StreamInfo {
    /// The seed text of game `game` (`GameStarted::game`) of this stream:
    /// `<seed>/game/<game>`. Seeding each game afresh from it makes a game play the same
    /// way whether the match ran from its start or was resumed at that game.
    pub fn game_seed(&self, game: u32) -> String {
        game_seed(&self.seed, game)
    }
}

/// The seed text of stream `index` of `count`: `seed` (`TAVOLO_SEED`), or the stream's own
/// `ticket` when `seed` is empty, then `/<index>` when there are several streams.
pub fn stream_seed(seed: &str, ticket: &str, index: usize, count: usize) -> String {
    let base = if seed.is_empty() { ticket } else { seed };
    if count > 1 {
        format!("{base}/{index}")
    } else {
        base.to_string()
    }
}

/// The seed text of the `number`-th match (from 1) of a key's stream whose seed text is
/// `stream_seed`: `<stream_seed>/match/<number>`.
pub fn match_seed(stream_seed: &str, number: u32) -> String {
    format!("{stream_seed}/match/{number}")
}

/// The seed text of game `game` of a stream whose seed text is `stream_seed`:
/// `<stream_seed>/game/<game>`, as the Python SDK's built-in random bot uses it.
pub fn game_seed(stream_seed: &str, game: u32) -> String {
    format!("{stream_seed}/game/{game}")
}

/// One line on stderr; whitespace (newlines in gRPC details) folded to single spaces.
fn say(line: &str) {
    let line = line.split_whitespace().collect::<Vec<_>>().join(" ");
    #[cfg(test)]
    tests::SAID.with(|said| said.borrow_mut().push(line.clone()));
    eprintln!("tavolo_bot: {line}");
}

/// Plays every ticket of `TAVOLO_TICKET`, each with its own bot: `make` is called once
/// per ticket, with that stream's [`StreamInfo`]. With `TAVOLO_KEY` it plays the key on
/// `TAVOLO_STREAMS` streams instead, and `make` is called once per match, on this thread.
/// The exit code: 0 when every stream ended after `MatchOver` (with a key: with status
/// OK), 1 when one failed, 2 for bad settings.
pub fn run<B: Bot>(make: impl FnMut(&StreamInfo) -> B) -> ExitCode {
    match Settings::from_env() {
        Ok(settings) => ExitCode::from(run_with(settings, make)),
        Err(e) => {
            say(&e.0);
            ExitCode::from(EXIT_USAGE)
        }
    }
}

/// [`run`] with explicit settings; returns the exit code as a number.
pub fn run_with<B: Bot>(settings: Settings, mut make: impl FnMut(&StreamInfo) -> B) -> u8 {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            say(&format!("cannot start the async runtime: {e}"));
            return EXIT_FAILED;
        }
    };
    // The channel spawns its connection task on the runtime, so it is made inside it.
    let _entered = runtime.enter();
    let channel = match make_channel(&settings) {
        Ok(c) => c,
        Err(e) => {
            say(&e.0);
            return EXIT_USAGE;
        }
    };
    if let Some(problem) = settings_problem(&settings) {
        say(&problem);
        return EXIT_USAGE;
    }
    if !settings.key.is_empty() {
        return run_key(&runtime, channel, &settings, make);
    }
    let count = settings.tickets.len();
    let mut streams = Vec::with_capacity(count);
    for (index, ticket) in settings.tickets.iter().enumerate() {
        let info = StreamInfo {
            ticket: ticket.clone(),
            index,
            count,
            seed: stream_seed(&settings.seed, ticket, index, count),
            ..StreamInfo::default()
        };
        let label = if count > 1 {
            format!("ticket {}/{count}: ", index + 1)
        } else {
            String::new()
        };
        let seat = Arc::new(Mutex::new(Seat::new(None, make(&info))));
        streams.push(Stream::new(
            Some(seat),
            ticket.clone(),
            None,
            label,
            &settings,
        ));
    }
    runtime.block_on(async move {
        let mut tasks = tokio::task::JoinSet::new();
        for stream in streams {
            let channel = channel.clone();
            tasks.spawn(async move { stream.play(channel).await });
        }
        let mut code = EXIT_OK;
        while let Some(joined) = tasks.join_next().await {
            code = code.max(joined.unwrap_or_else(|_| {
                // The panic hook has already printed the bot's message and location.
                say("the bot panicked; its stream stops");
                EXIT_FAILED
            }));
        }
        code
    })
}

/// What is wrong with settings made by hand (from_lookup makes none of these).
fn settings_problem(settings: &Settings) -> Option<String> {
    match (settings.key.is_empty(), settings.tickets.is_empty()) {
        (false, false) => Some("both a ticket and a key are set: set one".into()),
        (true, true) => Some("no ticket or key: set TAVOLO_TICKET or TAVOLO_KEY".into()),
        (false, true) if settings.streams == 0 => Some("streams must be at least 1".into()),
        _ => None,
    }
}

/// A request for a new bot, from a key's stream to the factory (which only the thread of
/// `run_with` may call: it need not be `Send`).
type BotOrder<B> = (StreamInfo, oneshot::Sender<Option<B>>);

/// Plays `settings.key` on `settings.streams` streams until the referee ends each with OK.
fn run_key<B: Bot>(
    runtime: &tokio::runtime::Runtime,
    channel: Channel,
    settings: &Settings,
    mut make: impl FnMut(&StreamInfo) -> B,
) -> u8 {
    let count = settings.streams;
    let seats: Seats<B> = Arc::default();
    let (orders, mut inbox) = mpsc::unbounded_channel::<BotOrder<B>>();
    let mut tasks = tokio::task::JoinSet::new();
    for index in 0..count {
        let info = StreamInfo {
            key: settings.key.clone(),
            index,
            count,
            seed: stream_seed(&settings.seed, &settings.key, index, count),
            ..StreamInfo::default()
        };
        let label = if count > 1 {
            format!("key stream {}/{count}: ", index + 1)
        } else {
            String::new()
        };
        let key = KeyStream {
            key: settings.key.clone(),
            info,
            seats: seats.clone(),
            orders: orders.clone(),
            matches: 0,
            entrant: String::new(),
        };
        let stream = Stream::new(None, String::new(), Some(key), label, settings);
        let channel = channel.clone();
        tasks.spawn_on(async move { stream.play(channel).await }, runtime.handle());
    }
    drop(orders);
    let mut code = EXIT_OK;
    runtime.block_on(std::future::poll_fn(|cx| {
        loop {
            while let Poll::Ready(Some((info, reply))) = inbox.poll_recv(cx) {
                // The panic hook prints the factory's message; the stream says it stops.
                let bot = std::panic::catch_unwind(AssertUnwindSafe(|| make(&info))).ok();
                let _ = reply.send(bot);
            }
            match tasks.poll_join_next(cx) {
                Poll::Ready(Some(joined)) => {
                    code = code.max(joined.unwrap_or_else(|_| {
                        say("the bot panicked; its stream stops");
                        EXIT_FAILED
                    }));
                }
                Poll::Ready(None) => return Poll::Ready(code),
                Poll::Pending => return Poll::Pending,
            }
        }
    }))
}

fn make_channel(settings: &Settings) -> Result<Channel, ConfigError> {
    let bad = |e: &dyn fmt::Display| {
        ConfigError(format!(
            "TAVOLO_REFEREE {:?} is not host:port or unix:/path ({e})",
            settings.referee
        ))
    };
    let tcp = match RefereeAddress::parse(&settings.referee)? {
        RefereeAddress::Tcp(tcp) => tcp,
        RefereeAddress::Unix(path) => {
            if settings.tls_ca.is_some() {
                return Err(ConfigError(format!(
                    "TAVOLO_TLS_CA is set but TAVOLO_REFEREE {:?} is a Unix-domain socket: \
                     TLS is for host:port only; unset TAVOLO_TLS_CA",
                    settings.referee
                )));
            }
            // tonic's own Unix-domain connector (tonic >= 0.14): it connects a
            // tokio UnixStream to the path, with no DNS lookup and no TCP. Absolute paths are
            // handed over as unix:///path, so a path starting with "//" stays whole.
            let uri = if path.starts_with('/') {
                format!("unix://{path}")
            } else {
                format!("unix:{path}")
            };
            // (A local connect fails or succeeds at once: tonic sets no connect timeout here.)
            let endpoint = Endpoint::from_shared(uri).map_err(|e| bad(&e))?;
            return Ok(endpoint.connect_lazy());
        }
    };
    let scheme = if settings.tls_ca.is_some() {
        "https"
    } else {
        "http"
    };
    let endpoint = Endpoint::from_shared(format!("{scheme}://{tcp}"))
        .map_err(|e| bad(&e))?
        .connect_timeout(Duration::from_secs(5))
        .tcp_nodelay(true);
    let endpoint = match &settings.tls_ca {
        None => endpoint,
        Some(pem) => with_tls(endpoint, pem)?,
    };
    Ok(endpoint.connect_lazy())
}

#[cfg(feature = "tls")]
use crate::tls::with_tls;

#[cfg(not(feature = "tls"))]
fn with_tls(_endpoint: Endpoint, _pem: &[u8]) -> Result<Endpoint, ConfigError> {
    Err(ConfigError(
        "TAVOLO_TLS_CA is set but this build has no TLS: rebuild with `clients/rust/build --tls`"
            .into(),
    ))
}

/// Statuses a broken connection or a restarting referee produce: worth reconnecting.
fn transient(code: Code) -> bool {
    matches!(
        code,
        Code::Unavailable | Code::Cancelled | Code::Internal | Code::Aborted
    )
}

/// The reason word the referee's status details start with (`ticket_used: ...`).
fn reason_of(details: &str) -> &str {
    details.split(':').next().unwrap_or("").trim()
}

/// Whether a stream that ended with `status` is opened again (within
/// `TAVOLO_RECONNECT_SECONDS`): a broken connection, or `ALREADY_EXISTS` `seat_taken: ...`
/// (another connection holds the seat, e.g. the referee has not yet noticed a drop). Every
/// other refusal ends the stream at once: `ticket_used` (the match of this ticket is over),
/// `PERMISSION_DENIED` `wrong_socket` or `process_gone`, `UNAUTHENTICATED`
/// `unknown_ticket` or `unknown_key`, `PERMISSION_DENIED` `key_revoked`, and the rest.
fn retryable(status: &Status) -> bool {
    let code = status.code();
    if code == Code::AlreadyExists {
        return reason_of(status.message()) == "seat_taken";
    }
    // A broken connection shows as UNKNOWN from tonic itself (with the transport error as
    // source), unlike an UNKNOWN sent by the referee.
    let broken = code == Code::Unknown && std::error::Error::source(status).is_some();
    transient(code) || broken
}

/// Whether a TCP connection made without TLS (`tls` false) was closed at once, as a
/// referee that serves TLS closes a plain-text one (a restarting referee refuses the
/// connection instead; a slot's own Unix socket never serves TLS).
fn tls_expected(referee: &str, tls: bool, status: &Status) -> bool {
    let tcp = matches!(RefereeAddress::parse(referee), Ok(RefereeAddress::Tcp(_)));
    !tls && tcp && closed_at_once(status)
}

/// Whether tonic itself (not the referee: its statuses have no source) ended the call
/// because the connection was closed under it: UNKNOWN from a broken pipe or a reset
/// connection once the request was sent, CANCELLED from hyper's "connection closed" before.
fn closed_at_once(status: &Status) -> bool {
    let mut cause = std::error::Error::source(status);
    while let Some(error) = cause {
        let closed = match status.code() {
            Code::Unknown => error.downcast_ref::<std::io::Error>().is_some_and(|e| {
                matches!(
                    e.kind(),
                    std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::ConnectionReset
                )
            }),
            Code::Cancelled => error.to_string() == "connection closed",
            _ => false,
        };
        if closed {
            return true;
        }
        cause = error.source();
    }
    false
}

fn hint(code: Code, message: &str, key: bool) -> &'static str {
    match reason_of(message) {
        "unknown_key" => return " (the referee knows no entrant with this key)",
        "key_revoked" => return " (the organiser revoked this key)",
        "ticket_used" => return " (the match of this ticket is over)",
        "seat_taken" => return " (another connection is playing this ticket)",
        "wrong_socket" => {
            return " (this ticket works only on the socket the referee made for its bot)";
        }
        "process_gone" => return " (the bot process this ticket was made for has ended)",
        "unknown_ticket" => return " (the referee does not know this ticket)",
        _ => {}
    }
    if key {
        return match code {
            Code::Unauthenticated => " (the referee knows no entrant with this key)",
            Code::PermissionDenied => " (the referee does not accept this key)",
            Code::AlreadyExists => " (another connection is playing this seat)",
            Code::InvalidArgument => " (the referee refused a message of this bot)",
            Code::FailedPrecondition => " (the referee cannot play this key now)",
            Code::ResourceExhausted => " (the referee is over a limit)",
            _ => "",
        };
    }
    match code {
        Code::Unauthenticated => " (the referee does not know this ticket)",
        Code::PermissionDenied => " (the referee does not accept this ticket here)",
        Code::AlreadyExists => " (another connection is playing this ticket, or its match is over)",
        Code::InvalidArgument => " (the referee refused a message of this bot)",
        Code::FailedPrecondition => " (the referee cannot play this ticket now)",
        Code::ResourceExhausted => " (the referee is over a limit)",
        _ => "",
    }
}

fn code_name(code: Code) -> String {
    // "AlreadyExists" -> "ALREADY_EXISTS", as gRPC spells status codes elsewhere.
    let mut name = String::new();
    for (i, ch) in format!("{code:?}").chars().enumerate() {
        if ch.is_ascii_uppercase() && i > 0 {
            name.push('_');
        }
        name.push(ch.to_ascii_uppercase());
    }
    name
}

/// A player slot of a match: (match id, slot).
type SeatId = (String, u32);

/// One bot playing one slot of one match, and what it has answered.
struct Seat<B: Bot> {
    /// With a key: the seat; None for a ticket's.
    id: Option<SeatId>,
    bot: B,
    /// MatchOver seen.
    over: bool,
    /// The last (request_id, action_id) sent: a request re-sent after a reconnection gets
    /// the same answer without asking the bot twice.
    answered: Option<(u64, u32)>,
    seen_request: Option<u64>,
}

impl<B: Bot> Seat<B> {
    fn new(id: Option<SeatId>, bot: B) -> Seat<B> {
        Seat {
            id,
            bot,
            over: false,
            answered: None,
            seen_request: None,
        }
    }
}

/// A seat, shared: with a key, another stream of the process may take it over.
type SharedSeat<B> = Arc<Mutex<Seat<B>>>;

/// The seats of a key's matches not over yet, shared by the process's streams: a stream
/// that reconnects mid-match may be seated again where another of them played.
type Seats<B> = Arc<Mutex<HashMap<SeatId, SharedSeat<B>>>>;

/// What a key's stream has beyond a ticket's.
struct KeyStream<B: Bot> {
    key: String,
    /// The stream's own; each match's bot gets a copy with the match filled in.
    info: StreamInfo,
    seats: Seats<B>,
    orders: mpsc::UnboundedSender<BotOrder<B>>,
    /// Matches this stream made a bot for.
    matches: u32,
    /// From KeyAccepted.
    entrant: String,
}

/// How a session ended.
enum Ended {
    /// The call ended with this status.
    Status(Status),
    /// This side stopped it, for a reason already said.
    Failed,
}

impl From<Status> for Ended {
    fn from(status: Status) -> Ended {
        Ended::Status(status)
    }
}

/// One ticket's stream, reconnected while the match is not over; or one of a key's
/// streams, reconnected until the referee ends it with OK.
struct Stream<B: Bot> {
    /// The seat played now: a ticket's only one; with a key, None between matches.
    cur: Option<SharedSeat<B>>,
    ticket: String,
    key: Option<KeyStream<B>>,
    label: String,
    referee: String,
    /// `TAVOLO_TLS_CA` is set.
    tls: bool,
    reconnect: Duration,
    established: bool,
    /// The current session's, to complete its compact observations.
    seen: Merger,
}

impl<B: Bot> Stream<B> {
    fn new(
        cur: Option<SharedSeat<B>>,
        ticket: String,
        key: Option<KeyStream<B>>,
        label: String,
        settings: &Settings,
    ) -> Stream<B> {
        Stream {
            cur,
            ticket,
            key,
            label,
            referee: settings.referee.clone(),
            tls: settings.tls_ca.is_some(),
            reconnect: settings.reconnect,
            established: false,
            seen: Merger::default(),
        }
    }

    fn say(&self, line: &str) {
        say(&format!("{}{line}", self.label));
    }

    /// The seat's lock; a seat whose bot panicked on another stream stops this one too.
    fn lock<'a>(&self, seat: &'a SharedSeat<B>) -> Result<MutexGuard<'a, Seat<B>>, Ended> {
        seat.lock().map_err(|_| {
            self.say("the bot of this seat panicked on another stream; this stream stops");
            Ended::Failed
        })
    }

    /// A ticket's match is over: how its stream ends no longer matters.
    fn ticket_match_over(&self) -> bool {
        self.key.is_none()
            && self
                .cur
                .as_ref()
                .is_some_and(|seat| seat.lock().is_ok_and(|seat| seat.over))
    }

    /// Plays the ticket to the end of the match, or the key until the referee ends its
    /// stream with OK; the exit code of this stream.
    async fn play(mut self, channel: Channel) -> u8 {
        let mut client = RefereeServiceClient::new(channel);
        let mut give_up_at: Option<Instant> = None;
        let mut delay = FIRST_DELAY;
        let mut ever_established = false;
        let mut closed_in_a_row = 0; // attempts closed at once, as TLS closes plain text
        loop {
            self.established = false;
            let result = self.session(&mut client).await;
            let outcome = match result {
                _ if self.ticket_match_over() => return EXIT_OK,
                Err(Ended::Failed) => return EXIT_FAILED,
                Ok(()) if self.key.is_none() => {
                    self.say("the referee ended the stream before the match was over");
                    return EXIT_FAILED;
                }
                Ok(()) => {
                    let Some(seat) = self.cur.clone() else {
                        return EXIT_OK; // the entrant has no match left
                    };
                    let id = match self.lock(&seat) {
                        Ok(seat) => seat.id.clone().unwrap_or_default(),
                        Err(_) => return EXIT_FAILED,
                    };
                    self.say(&format!(
                        "the referee ended the stream before match {} was over",
                        id.0
                    ));
                    return EXIT_FAILED;
                }
                Err(Ended::Status(status)) => {
                    let code = status.code();
                    let text = format!("{}: {}", code_name(code), status.message());
                    if !retryable(&status) {
                        self.say(&format!(
                            "the referee at {} ended the stream: {text}{}",
                            self.referee,
                            hint(code, status.message(), self.key.is_some())
                        ));
                        return EXIT_FAILED;
                    }
                    let before_a_word = !(ever_established || self.established);
                    closed_in_a_row =
                        if before_a_word && tls_expected(&self.referee, self.tls, &status) {
                            closed_in_a_row + 1
                        } else {
                            0
                        };
                    if closed_in_a_row >= TLS_EXPECTED_AFTER {
                        // Retrying cannot help: only TAVOLO_TLS_CA makes this bot speak TLS.
                        self.say(&format!(
                            "the referee at {} closed the connection before a word was said \
                             ({text}): it serves TLS, and this bot spoke plain text; give it \
                             the referee's certificate in TAVOLO_TLS_CA",
                            self.referee
                        ));
                        return EXIT_FAILED;
                    }
                    text
                }
            };
            ever_established |= self.established;
            let now = Instant::now();
            if self.established || give_up_at.is_none() {
                give_up_at = Some(now + self.reconnect);
                delay = FIRST_DELAY;
            }
            if now + delay > give_up_at.unwrap_or(now) {
                let what = if !outcome.starts_with("ALREADY_EXISTS") {
                    if ever_established {
                        "lost the referee"
                    } else {
                        "cannot reach the referee"
                    }
                } else if self.key.is_some() {
                    "another connection kept a seat of this key"
                } else {
                    "another connection kept the seat of this ticket"
                };
                self.say(&format!(
                    "{what} at {} ({outcome}); gave up after retrying for {} s (TAVOLO_RECONNECT_SECONDS)",
                    self.referee,
                    self.reconnect.as_secs_f64()
                ));
                return EXIT_FAILED;
            }
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(MAX_DELAY);
        }
    }

    /// One stream, from Hello to its end: Ok when it ends with status OK.
    async fn session(&mut self, client: &mut RefereeServiceClient<Channel>) -> Result<(), Ended> {
        let key = match &self.key {
            Some(key) => {
                // A key's new stream plays no seat until a Welcome names one: the seat it
                // left may go to another stream of the process, and stays in `seats`.
                self.cur = None;
                key.key.clone()
            }
            None => String::new(),
        };
        // A compact observation completes one of the same call only.
        self.seen = Merger::default();
        let (tx, rx) = mpsc::channel::<PlayRequest>(8);
        let hello = pb::Hello {
            ticket: self.ticket.clone(),
            protocol_version: PROTOCOL_VERSION,
            key,
            compact_observations: true,
        };
        let _ = tx
            .send(PlayRequest {
                message: Some(play_request::Message::Hello(hello)),
            })
            .await;
        let mut inbound = client.play(ReceiverStream::new(rx)).await?.into_inner();
        // Dropping `tx` and `inbound` on return cancels the call if it is still open.
        while let Some(response) = inbound.message().await? {
            self.established = true;
            if let Some(decision) = self.handle(response).await? {
                let message = Some(play_request::Message::Decision(decision));
                // If the call is over the send fails; the next read says how it ended.
                let _ = tx.send(PlayRequest { message }).await;
            }
        }
        Ok(())
    }

    /// Passes the events to the bot; the decision to send if the response asks for one.
    async fn handle(&mut self, response: PlayResponse) -> Result<Option<pb::Decision>, Ended> {
        let request_id = response.request.as_ref().map(|r| r.request_id);
        // After a reconnection the referee re-sends the open request with its events: the
        // bot has heard those events already if it saw this request (at the same seat).
        let mut repeated = false;
        if let (Some(id), Some(seat)) = (request_id, self.cur.clone())
            && !self.reseats(&response.events)?
        {
            repeated = self.lock(&seat)?.seen_request == Some(id);
        }
        if !repeated {
            for event in response.events.iter().filter_map(|e| e.event.as_ref()) {
                self.note(event).await?;
            }
        }
        let Some(mut request) = response.request else {
            return Ok(None);
        };
        let Some(seat) = self.cur.clone() else {
            self.say(
                "the referee sent a decision request outside any match (before a Welcome); \
                 this stream stops",
            );
            return Err(Ended::Failed);
        };
        if let Err(problem) = self.seen.complete(request.observation.as_mut()) {
            self.say(&format!("{problem}; this stream stops"));
            return Err(Ended::Failed);
        }
        let mut seat = self.lock(&seat)?;
        seat.seen_request = Some(request.request_id);
        let action_id = match seat.answered {
            Some((id, chosen)) if id == request.request_id => chosen,
            _ => {
                let chosen = seat.bot.choose(&Turn::new(&request));
                if !request.legal_actions.iter().any(|a| a.id == chosen) {
                    self.say(&format!(
                        "choose() returned {chosen}, not a legal action id; sending it anyway"
                    ));
                }
                seat.answered = Some((request.request_id, chosen));
                chosen
            }
        };
        self.seen.keep(request.observation.take());
        Ok(Some(pb::Decision {
            request_id: request.request_id,
            action_id,
        }))
    }

    /// Whether `events` hold a Welcome to a seat other than the one played now (with a
    /// key: the start of another match).
    fn reseats(&self, events: &[pb::Event]) -> Result<bool, Ended> {
        if self.key.is_none() {
            return Ok(false);
        }
        let current = match &self.cur {
            Some(seat) => self.lock(seat)?.id.clone(),
            None => None,
        };
        Ok(events.iter().any(|e| match &e.event {
            Some(Event::Welcome(w)) => current != Some((w.match_id.clone(), w.slot)),
            _ => false,
        }))
    }

    async fn note(&mut self, event: &Event) -> Result<(), Ended> {
        match event {
            Event::ActionRejected(r) => {
                // A stale answer closes no attempt: no count to show.
                let left = if r.reason == "stale_request" {
                    String::new()
                } else {
                    format!("; {} attempts left", r.attempts_left)
                };
                self.say(&format!(
                    "action {} was rejected ({}: {}){left}",
                    r.action_id, r.reason, r.message
                ));
            }
            Event::Error(e) => self.say(&format!("referee reports {}: {}", e.reason, e.message)),
            Event::KeyAccepted(k) => {
                if let Some(key) = &mut self.key {
                    key.entrant = k.entrant.clone();
                    return Ok(()); // the stream's own news: no bot plays yet
                }
            }
            Event::Welcome(w) if self.key.is_some() => {
                self.sit((w.match_id.clone(), w.slot)).await?;
            }
            _ => {}
        }
        let Some(shared) = self.cur.clone() else {
            return Ok(()); // with a key, between matches: no bot to tell
        };
        let mut seat = self.lock(&shared)?;
        seat.bot.on_event(event);
        if matches!(event, Event::MatchOver(_)) && !seat.over {
            seat.over = true;
            seat.bot.on_match_over();
            if let Some(key) = &self.key {
                if let Some(id) = &seat.id {
                    key.seats
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .remove(id);
                }
                drop(seat);
                self.cur = None;
            }
        }
        Ok(())
    }

    /// Makes `id` the seat this key's stream plays: the same bot when it is the seat
    /// played now, or one another stream of the process left mid-match; else a new bot
    /// for a new match.
    async fn sit(&mut self, id: SeatId) -> Result<(), Ended> {
        if let Some(seat) = self.cur.clone()
            && self.lock(&seat)?.id.as_ref() == Some(&id)
        {
            return Ok(());
        }
        let Some(key) = &mut self.key else {
            return Ok(());
        };
        let taken = key
            .seats
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&id)
            .cloned();
        if let Some(seat) = taken {
            self.cur = Some(seat);
            return Ok(());
        }
        key.matches += 1;
        let info = StreamInfo {
            entrant: key.entrant.clone(),
            match_id: id.0.clone(),
            match_number: key.matches,
            seed: match_seed(&key.info.seed, key.matches),
            ..key.info.clone()
        };
        let (reply, made) = oneshot::channel();
        let bot = match key.orders.send((info, reply)) {
            Ok(()) => made.await.ok().flatten(),
            Err(_) => None,
        };
        let Some(bot) = bot else {
            self.say("making the bot panicked; this stream stops");
            return Err(Ended::Failed);
        };
        let seat = Arc::new(Mutex::new(Seat::new(Some(id.clone()), bot)));
        key.seats
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, seat.clone());
        self.cur = Some(seat);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake_referee::{self, Step};
    use std::cell::RefCell;
    use std::sync::atomic::{AtomicUsize, Ordering};

    thread_local! {
        /// What `say` printed on this thread (the runtime of `run_with` runs on the
        /// caller's thread, so a test sees its own lines only).
        pub(super) static SAID: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
    }

    fn take_said() -> Vec<String> {
        SAID.with(|said| std::mem::take(&mut *said.borrow_mut()))
    }

    /// (a bot's serial number, the match id of its Welcome, how often it chose).
    type Played = Arc<Mutex<Vec<(usize, String, usize)>>>;

    /// A bot that plays the first legal action and logs what it played at MatchOver.
    struct Recorder {
        serial: usize,
        welcome: String,
        chosen: usize,
        log: Played,
    }

    impl Bot for Recorder {
        fn choose(&mut self, turn: &Turn<'_>) -> u32 {
            self.chosen += 1;
            turn.legal()[0].id
        }
        fn on_event(&mut self, event: &Event) {
            if let Event::Welcome(w) = event {
                self.welcome = w.match_id.clone();
            }
        }
        fn on_match_over(&mut self) {
            let entry = (self.serial, self.welcome.clone(), self.chosen);
            self.log.lock().unwrap().push(entry);
        }
    }

    fn recorder(log: &Played, serial: usize) -> Recorder {
        Recorder {
            serial,
            welcome: String::new(),
            chosen: 0,
            log: log.clone(),
        }
    }

    fn settings_for(referee: &str, tickets: &[&str], seed: &str, reconnect: f64) -> Settings {
        Settings {
            referee: referee.to_string(),
            tickets: tickets.iter().map(|t| t.to_string()).collect(),
            key: String::new(),
            streams: DEFAULT_STREAMS,
            seed: seed.to_string(),
            tls_ca: None,
            reconnect: Duration::from_secs_f64(reconnect),
        }
    }

    const TICKET_USED: &str = "ticket_used: this ticket has been used and its seat is closed";
    const SEAT_TAKEN: &str = "seat_taken: a connection for this seat is already open";

    #[test]
    fn ticket_refusals_end_the_stream_at_once() {
        for (code, details) in [
            (Code::AlreadyExists, TICKET_USED),
            (
                Code::PermissionDenied,
                "wrong_socket: this ticket works only on its own slot's socket",
            ),
            (
                Code::PermissionDenied,
                "process_gone: the bot process this ticket was made for has ended",
            ),
            (Code::Unauthenticated, "unknown_ticket: unknown ticket"),
        ] {
            let fake = fake_referee::serve(move |_, _| vec![Step::End(code, details.into())]);
            let log = Played::default();
            take_said();
            let started = std::time::Instant::now();
            let settings = settings_for(&fake.address, &["tk"], "", 5.0);
            let exit = run_with(settings, |_| recorder(&log, 0));
            let said = take_said();
            assert_eq!(exit, EXIT_FAILED, "{details}");
            assert_eq!(fake.attempts(), 1, "{details}: retried");
            assert!(started.elapsed() < Duration::from_secs(2), "{details}");
            let want = format!(
                "the referee at {} ended the stream: {}: {details} (",
                fake.address,
                code_name(code)
            );
            assert!(said.len() == 1 && said[0].starts_with(&want), "{said:?}");
        }
    }

    #[test]
    fn ticket_used_after_a_drop_ends_the_stream() {
        let fake = fake_referee::serve(|n, ticket| {
            if n == 1 {
                vec![
                    fake_referee::welcome(ticket),
                    Step::End(Code::Unavailable, "gone".into()),
                ]
            } else {
                vec![Step::End(Code::AlreadyExists, TICKET_USED.into())]
            }
        });
        let log = Played::default();
        take_said();
        let exit = run_with(settings_for(&fake.address, &["tk"], "", 5.0), |_| {
            recorder(&log, 0)
        });
        let said = take_said();
        assert_eq!(exit, EXIT_FAILED);
        assert_eq!(fake.attempts(), 2, "one reconnection, then no retry");
        assert!(
            said.len() == 1 && said[0].contains("ALREADY_EXISTS: ticket_used: "),
            "{said:?}"
        );
    }

    #[test]
    fn seat_taken_is_retried() {
        let fake = fake_referee::serve(|n, ticket| {
            if n <= 2 {
                // Even before this process ever had a working stream.
                vec![Step::End(Code::AlreadyExists, SEAT_TAKEN.into())]
            } else {
                fake_referee::one_request_match(ticket)
            }
        });
        let log = Played::default();
        take_said();
        let exit = run_with(settings_for(&fake.address, &["tk"], "", 5.0), |_| {
            recorder(&log, 0)
        });
        assert_eq!(take_said(), Vec::<String>::new());
        assert_eq!(exit, EXIT_OK);
        assert_eq!(fake.attempts(), 3);
        assert_eq!(*log.lock().unwrap(), [(0, "tk".to_string(), 1)]);
    }

    #[test]
    fn seat_taken_gives_up_after_the_reconnect_window() {
        let fake =
            fake_referee::serve(|_, _| vec![Step::End(Code::AlreadyExists, SEAT_TAKEN.into())]);
        let log = Played::default();
        take_said();
        let started = std::time::Instant::now();
        let exit = run_with(settings_for(&fake.address, &["tk"], "", 0.7), |_| {
            recorder(&log, 0)
        });
        let elapsed = started.elapsed();
        let said = take_said();
        assert_eq!(exit, EXIT_FAILED);
        assert!(fake.attempts() >= 3, "{} attempts", fake.attempts());
        // Retries 0.1 s apart, doubling: it stops when the next one would be past the window.
        assert!(
            elapsed > Duration::from_millis(250) && elapsed < Duration::from_secs(3),
            "{elapsed:?}"
        );
        assert!(
            said.len() == 1
                && said[0].contains("ALREADY_EXISTS: seat_taken: ")
                && said[0].contains("gave up after retrying"),
            "{said:?}"
        );
    }

    #[test]
    fn one_bot_per_ticket() {
        let fake = fake_referee::serve(|_, ticket| fake_referee::one_request_match(ticket));
        let tickets = ["ta", "tb", "tc"];
        for seed in ["", "s"] {
            let log = Played::default();
            let mut infos = Vec::new();
            take_said();
            let exit = run_with(settings_for(&fake.address, &tickets, seed, 5.0), |info| {
                infos.push(info.clone());
                recorder(&log, infos.len() - 1)
            });
            assert_eq!(take_said(), Vec::<String>::new());
            assert_eq!(exit, EXIT_OK);
            assert_eq!(infos.len(), 3, "one factory call per ticket");
            let mut played = log.lock().unwrap().clone();
            played.sort();
            for (i, ticket) in tickets.iter().enumerate() {
                // Each stream's own ticket, not the first one, when TAVOLO_SEED is unset.
                let base = if seed.is_empty() { *ticket } else { seed };
                assert_eq!(infos[i].ticket, *ticket);
                assert_eq!((infos[i].index, infos[i].count), (i, 3));
                assert_eq!(infos[i].seed, format!("{base}/{i}"));
                // Bot i played ticket i's stream, and only it.
                assert_eq!(played[i], (i, ticket.to_string(), 1), "seed {seed:?}");
            }
        }
    }

    #[test]
    fn seed_settings() {
        let base = [("TAVOLO_REFEREE", "h:1"), ("TAVOLO_TICKET", "ta,tb")];
        let unset = Settings::from_lookup(lookup(&base)).unwrap();
        assert_eq!(unset.seed, "");
        let mut vars = base.to_vec();
        vars.push(("TAVOLO_SEED", " my seed "));
        let set = Settings::from_lookup(lookup(&vars)).unwrap();
        assert_eq!(set.seed, " my seed ", "TAVOLO_SEED as given");
    }

    #[test]
    fn stream_and_game_seeds() {
        assert_eq!(stream_seed("", "ta", 0, 1), "ta");
        assert_eq!(stream_seed("", "tb", 1, 2), "tb/1");
        assert_eq!(stream_seed("s", "ta", 0, 1), "s");
        assert_eq!(stream_seed("s", "ta", 0, 2), "s/0");
        assert_eq!(stream_seed("s", "tb", 1, 2), "s/1");
        let info = StreamInfo {
            ticket: "tb".into(),
            index: 1,
            count: 2,
            seed: "s/1".into(),
            ..StreamInfo::default()
        };
        assert_eq!(info.game_seed(3), "s/1/game/3");
        assert_eq!(game_seed("tk", 0), "tk/game/0");
    }

    fn lookup(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    #[test]
    fn settings_from_lookup() {
        let s = Settings::from_lookup(lookup(&[
            ("TAVOLO_REFEREE", "127.0.0.1:5"),
            ("TAVOLO_TICKET", " a, b ,,"),
        ]))
        .unwrap();
        assert_eq!(s.tickets, ["a", "b"]);
        assert_eq!(s.seed, ""); // TAVOLO_SEED unset
        assert_eq!(s.reconnect, DEFAULT_RECONNECT);
        assert!(Settings::from_lookup(lookup(&[("TAVOLO_TICKET", "a")])).is_err());
        assert!(Settings::from_lookup(lookup(&[("TAVOLO_REFEREE", "h:1")])).is_err());
        let bad = lookup(&[
            ("TAVOLO_REFEREE", "h:1"),
            ("TAVOLO_TICKET", "a"),
            ("TAVOLO_RECONNECT_SECONDS", "-1"),
        ]);
        assert!(Settings::from_lookup(bad).is_err());
    }

    #[test]
    fn referee_addresses() {
        let parse = |text: &str| RefereeAddress::parse(text);
        assert_eq!(parse("unix:/p"), Ok(RefereeAddress::Unix("/p".into())));
        assert_eq!(parse("unix:///p"), Ok(RefereeAddress::Unix("/p".into())));
        assert_eq!(
            parse("unix:/run/tavolo/referee.sock"),
            Ok(RefereeAddress::Unix("/run/tavolo/referee.sock".into()))
        );
        assert_eq!(
            parse("unix:rel/p"),
            Ok(RefereeAddress::Unix("rel/p".into()))
        );
        assert_eq!(parse("host:5"), Ok(RefereeAddress::Tcp("host:5".into())));
        assert_eq!(
            parse("127.0.0.1:50051"),
            Ok(RefereeAddress::Tcp("127.0.0.1:50051".into()))
        );
        for bad in ["unix:", "unix://", "unix://host/p", "unix://p"] {
            let e = parse(bad).unwrap_err();
            assert!(e.0.contains("host:port or unix:/path"), "{bad}: {e}");
        }
        // Settings take both forms, and refuse a bad unix: one before anything starts.
        for referee in ["unix:/p", "unix:///p", "h:1"] {
            let s = Settings::from_lookup(lookup(&[
                ("TAVOLO_REFEREE", referee),
                ("TAVOLO_TICKET", "a"),
            ]))
            .unwrap();
            assert_eq!(s.referee, referee);
        }
        let e = Settings::from_lookup(lookup(&[
            ("TAVOLO_REFEREE", "unix://host/p"),
            ("TAVOLO_TICKET", "a"),
        ]))
        .unwrap_err();
        assert!(e.0.contains("host:port or unix:/path"), "{e}");
        let e = Settings::from_lookup(lookup(&[("TAVOLO_TICKET", "a")])).unwrap_err();
        assert!(e.0.contains("host:port or unix:/path"), "{e}");
    }

    fn settings(referee: &str) -> Settings {
        Settings::from_lookup(lookup(&[
            ("TAVOLO_REFEREE", referee),
            ("TAVOLO_TICKET", "t"),
            ("TAVOLO_RECONNECT_SECONDS", "0"),
        ]))
        .unwrap()
    }

    #[test]
    fn channel_errors() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let _entered = runtime.enter();
        let e = make_channel(&settings("not an address")).unwrap_err();
        assert!(e.0.contains("host:port or unix:/path"), "{e}");
        let mut tls = settings("unix:/p");
        tls.tls_ca = Some(b"pem".to_vec());
        let e = make_channel(&tls).unwrap_err();
        assert!(e.0.contains("TLS is for host:port only"), "{e}");
        assert!(make_channel(&settings("unix:/p")).is_ok());
        assert!(make_channel(&settings("127.0.0.1:1")).is_ok());
    }

    /// A socket path in a fresh private folder under the temporary folder.
    fn socket_dir(name: &str) -> std::path::PathBuf {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let dir =
            std::env::temp_dir().join(format!("tavolo-rust-{name}-{}-{nanos}", std::process::id()));
        std::fs::create_dir(&dir).unwrap();
        dir
    }

    /// The client reaches a listener on a Unix-domain socket (both spellings) and opens
    /// an HTTP/2 (gRPC) connection on it.
    #[test]
    fn connects_to_unix_socket() {
        use tokio::io::AsyncReadExt;
        let dir = socket_dir("uds");
        let path = dir.join("referee.sock");
        let path_text = path.to_str().unwrap().to_string();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let listener = tokio::net::UnixListener::bind(&path).unwrap();
            for referee in [format!("unix:{path_text}"), format!("unix://{path_text}")] {
                let channel = make_channel(&settings(&referee)).unwrap();
                let mut client = RefereeServiceClient::new(channel);
                let (_tx, rx) = mpsc::channel::<PlayRequest>(1);
                let call = tokio::spawn(async move { client.play(ReceiverStream::new(rx)).await });
                let accepted =
                    tokio::time::timeout(Duration::from_secs(5), listener.accept()).await;
                let (mut conn, _) = accepted
                    .unwrap_or_else(|_| panic!("{referee}: the client did not connect"))
                    .unwrap();
                let mut preface = [0u8; 24];
                tokio::time::timeout(Duration::from_secs(5), conn.read_exact(&mut preface))
                    .await
                    .unwrap()
                    .unwrap();
                assert_eq!(&preface, b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "{referee}");
                drop(conn); // the call fails: no referee behind the socket
                let status = tokio::time::timeout(Duration::from_secs(5), call)
                    .await
                    .unwrap()
                    .unwrap()
                    .unwrap_err();
                assert_ne!(status.code(), Code::Ok);
            }
        });
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// No socket at the path: the stream gives up after TAVOLO_RECONNECT_SECONDS, exit 1.
    #[test]
    fn missing_unix_socket() {
        struct Never;
        impl Bot for Never {
            fn choose(&mut self, turn: &Turn<'_>) -> u32 {
                turn.legal()[0].id
            }
        }
        let dir = socket_dir("missing");
        let referee = format!("unix:{}", dir.join("none.sock").display());
        assert_eq!(run_with(settings(&referee), |_| Never), EXIT_FAILED);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A listener at `unix` (a socket path), or else on a TCP port of 127.0.0.1, that
    /// closes every connection once the bot's first bytes arrive, as a referee serving TLS
    /// closes a plain-text one. Its `TAVOLO_REFEREE`, and how many connections it closed.
    fn closes_every_connection(unix: Option<std::path::PathBuf>) -> (String, Arc<AtomicUsize>) {
        use tokio::io::{AsyncRead, AsyncReadExt};
        async fn close(mut io: impl AsyncRead + Unpin, closed: &AtomicUsize) {
            let _ = io.read(&mut [0u8; 24]).await;
            closed.fetch_add(1, Ordering::SeqCst);
        }
        let closed = Arc::new(AtomicUsize::new(0));
        let counter = closed.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                if let Some(path) = unix {
                    let listener = tokio::net::UnixListener::bind(&path).unwrap();
                    tx.send(format!("unix:{}", path.display())).unwrap();
                    while let Ok((io, _)) = listener.accept().await {
                        close(io, &counter).await;
                    }
                } else {
                    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                    tx.send(listener.local_addr().unwrap().to_string()).unwrap();
                    while let Ok((io, _)) = listener.accept().await {
                        close(io, &counter).await;
                    }
                }
            });
        });
        (rx.recv().unwrap(), closed)
    }

    #[test]
    fn plain_text_bot_is_told_the_referee_serves_tls() {
        let (referee, closed) = closes_every_connection(None);
        take_said();
        let started = std::time::Instant::now();
        let exit = run_with(settings_for(&referee, &["tk"], "", 30.0), |_| {
            recorder(&Played::default(), 0)
        });
        let said = take_said();
        assert_eq!((exit, said.len()), (EXIT_FAILED, 1), "{said:?}");
        let (head, tail) = (
            format!("the referee at {referee} closed the connection before a word was said ("),
            "): it serves TLS, and this bot spoke plain text; give it the referee's \
             certificate in TAVOLO_TLS_CA",
        );
        assert!(
            said[0].starts_with(&head) && said[0].ends_with(tail),
            "{said:?}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "not told at once"
        );
        assert_eq!(closed.load(Ordering::SeqCst), TLS_EXPECTED_AFTER as usize);
    }

    /// A slot's own Unix socket never serves TLS: a connection closed there is retried.
    #[test]
    fn unix_socket_closing_connections_is_retried() {
        let dir = socket_dir("closes");
        let (referee, closed) = closes_every_connection(Some(dir.join("referee.sock")));
        take_said();
        let exit = run_with(settings_for(&referee, &["tk"], "", 1.0), |_| {
            recorder(&Played::default(), 0)
        });
        let said = take_said();
        assert_eq!((exit, said.len()), (EXIT_FAILED, 1), "{said:?}");
        let head = format!("cannot reach the referee at {referee} (");
        assert!(said[0].starts_with(&head), "{said:?}");
        assert!(said[0].ends_with("gave up after retrying for 1 s (TAVOLO_RECONNECT_SECONDS)"));
        assert!(closed.load(Ordering::SeqCst) > TLS_EXPECTED_AFTER as usize);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// An error with a message and maybe a source, as hyper and tonic chain theirs.
    #[derive(Debug)]
    struct Layer(
        &'static str,
        Option<Box<dyn std::error::Error + Send + Sync>>,
    );

    impl fmt::Display for Layer {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for Layer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1
                .as_deref()
                .map(|e| e as &(dyn std::error::Error + 'static))
        }
    }

    /// A status of `code` whose source is `transport error` over `cause`, as tonic's own.
    fn broken(
        code: Code,
        message: &str,
        cause: Box<dyn std::error::Error + Send + Sync>,
    ) -> Status {
        let mut status = Status::new(code, message);
        status.set_source(Arc::new(Layer("transport error", Some(cause))));
        status
    }

    #[test]
    fn tls_expected_only_for_plain_tcp_closed_at_once() {
        use std::io::{Error as IoError, ErrorKind};
        let pipe = || {
            IoError::new(
                ErrorKind::BrokenPipe,
                "stream closed because of a broken pipe",
            )
        };
        // What tonic gives when a listener closes the connection at once, by timing.
        let closed_at_once = [
            broken(Code::Unknown, "transport error", Box::new(pipe())),
            broken(
                Code::Unknown,
                "transport error",
                Box::new(IoError::from(ErrorKind::ConnectionReset)),
            ),
            broken(
                Code::Cancelled,
                "operation was canceled",
                Box::new(Layer(
                    "operation was canceled",
                    Some("connection closed".into()),
                )),
            ),
        ];
        for status in &closed_at_once {
            assert!(tls_expected("127.0.0.1:50051", false, status), "{status:?}");
            assert!(tls_expected("[::1]:50051", false, status), "{status:?}");
            assert!(
                !tls_expected("127.0.0.1:50051", true, status),
                "CA set: {status:?}"
            );
            for unix in ["unix:/run/referee.sock", "unix:///run/referee.sock"] {
                assert!(!tls_expected(unix, false, status), "{unix}: {status:?}");
            }
        }
        let refused = IoError::from(ErrorKind::ConnectionRefused);
        let others = [
            // A restarting referee refuses the connection.
            broken(Code::Unavailable, "tcp connect error", Box::new(refused)),
            broken(
                Code::Unavailable,
                "timeout expired",
                Box::new(Layer("timeout", None)),
            ),
            broken(
                Code::Unknown,
                "transport error",
                Box::new(IoError::from(ErrorKind::TimedOut)),
            ),
            broken(Code::Unavailable, "transport error", Box::new(pipe())),
            broken(
                Code::Cancelled,
                "operation was canceled",
                Box::new(Layer("other", None)),
            ),
            // The referee's own statuses have no source.
            Status::unknown("stream closed because of a broken pipe"),
            Status::cancelled("connection closed"),
            Status::unavailable("Socket closed"),
        ];
        for status in &others {
            assert!(
                !tls_expected("127.0.0.1:50051", false, status),
                "{status:?}"
            );
        }
    }

    #[test]
    fn code_names() {
        assert_eq!(code_name(Code::AlreadyExists), "ALREADY_EXISTS");
        assert_eq!(code_name(Code::Unauthenticated), "UNAUTHENTICATED");
    }

    // --- entrant keys ---------------------------------------------------------------------

    /// What one bot of a key was made for and what it saw.
    #[derive(Debug, Default, Clone)]
    struct MatchLog {
        info: StreamInfo,
        chosen: usize,
        events: Vec<String>,
        over: bool,
    }

    struct KeyBot(Arc<Mutex<MatchLog>>);

    impl Bot for KeyBot {
        fn choose(&mut self, turn: &Turn<'_>) -> u32 {
            self.0.lock().unwrap().chosen += 1;
            turn.legal()[0].id
        }
        fn on_event(&mut self, event: &Event) {
            let seen = match event {
                Event::Welcome(w) => format!("welcome {}/{}", w.match_id, w.slot),
                Event::MatchOver(m) => format!("match_over {}", m.match_id),
                Event::KeyAccepted(_) => panic!("KeyAccepted reached a bot"),
                other => format!("{other:?}"),
            };
            self.0.lock().unwrap().events.push(seen);
        }
        fn on_match_over(&mut self) {
            self.0.lock().unwrap().over = true;
        }
    }

    fn key_settings(referee: &str, streams: usize, seed: &str) -> Settings {
        Settings {
            referee: referee.to_string(),
            tickets: Vec::new(),
            key: "kk".into(),
            streams,
            seed: seed.to_string(),
            tls_ca: None,
            reconnect: Duration::from_secs(2),
        }
    }

    /// Plays key "kk": the exit code, each bot's log in the order they were made, and the
    /// lines said.
    fn play_key(settings: Settings) -> (u8, Vec<MatchLog>, Vec<String>) {
        let mut logs: Vec<Arc<Mutex<MatchLog>>> = Vec::new();
        take_said();
        let exit = run_with(settings, |info| {
            let log = Arc::new(Mutex::new(MatchLog {
                info: info.clone(),
                ..MatchLog::default()
            }));
            logs.push(log.clone());
            KeyBot(log)
        });
        let logs = logs.iter().map(|l| l.lock().unwrap().clone()).collect();
        (exit, logs, take_said())
    }

    fn hellos_carry_the_key(fake: &fake_referee::FakeReferee) {
        for hello in fake.hellos() {
            assert_eq!(
                (
                    hello.key.as_str(),
                    hello.ticket.as_str(),
                    hello.protocol_version
                ),
                ("kk", "", 1)
            );
        }
    }

    #[test]
    fn key_plays_two_matches_on_one_stream_with_a_fresh_bot_each() {
        let fake = fake_referee::serve(|_, _| {
            let mut steps = vec![fake_referee::key_accepted()];
            steps.extend(fake_referee::key_match("m1", 0));
            steps.extend(fake_referee::key_match("m2", 2));
            steps.push(Step::End(Code::Ok, String::new())); // no match left
            steps
        });
        for seed in ["", "s"] {
            let (exit, logs, said) = play_key(key_settings(&fake.address, 1, seed));
            assert_eq!(
                (exit, said),
                (EXIT_OK, Vec::<String>::new()),
                "seed {seed:?}"
            );
            assert_eq!(logs.len(), 2, "a bot per match");
            let base = if seed.is_empty() { "kk" } else { seed };
            for (i, (log, (id, slot))) in logs.iter().zip([("m1", 0), ("m2", 2)]).enumerate() {
                let want = StreamInfo {
                    key: "kk".into(),
                    index: 0,
                    count: 1,
                    entrant: "alice".into(),
                    match_id: id.into(),
                    match_number: i as u32 + 1,
                    seed: format!("{base}/match/{}", i + 1),
                    ..StreamInfo::default()
                };
                assert_eq!(log.info, want);
                assert_eq!(
                    log.events,
                    [format!("welcome {id}/{slot}"), format!("match_over {id}")]
                );
                assert!(log.chosen == 1 && log.over, "{log:?}");
            }
        }
        hellos_carry_the_key(&fake);
    }

    #[test]
    fn key_reconnection_mid_match_keeps_the_bot() {
        let fake = fake_referee::serve(|n, _| {
            let mut steps = vec![
                fake_referee::key_accepted(),
                fake_referee::welcome_to("m1", 1),
                fake_referee::request(),
            ];
            if n == 1 {
                // The line drops before the answer: KeyAccepted, Welcome, the request again.
                steps.push(Step::End(Code::Unavailable, "gone".into()));
            } else {
                steps.push(fake_referee::expect_answer());
                steps.push(fake_referee::match_over("m1"));
                steps.push(Step::End(Code::Ok, String::new()));
            }
            steps
        });
        let (exit, logs, said) = play_key(key_settings(&fake.address, 1, ""));
        assert_eq!((exit, said), (EXIT_OK, Vec::<String>::new()));
        assert_eq!(logs.len(), 1, "the same bot plays on");
        assert_eq!(
            logs[0].events,
            ["welcome m1/1", "welcome m1/1", "match_over m1"]
        );
        assert!(logs[0].chosen == 1 && logs[0].over, "{:?}", logs[0]);
        assert_eq!(fake.attempts(), 2);
        hellos_carry_the_key(&fake);
    }

    #[test]
    fn key_reconnection_between_matches() {
        let fake = fake_referee::serve(|n, _| {
            let mut steps = vec![fake_referee::key_accepted()];
            if n == 1 {
                steps.extend(fake_referee::key_match("m1", 0));
                steps.push(Step::End(Code::Unavailable, "gone".into())); // waiting for m2
            } else {
                steps.extend(fake_referee::key_match("m2", 0));
                steps.push(Step::End(Code::Ok, String::new()));
            }
            steps
        });
        let (exit, logs, said) = play_key(key_settings(&fake.address, 1, "s"));
        assert_eq!((exit, said), (EXIT_OK, Vec::<String>::new()));
        assert_eq!(logs.len(), 2);
        for (i, log) in logs.iter().enumerate() {
            assert_eq!(log.info.match_number, i as u32 + 1);
            assert_eq!(log.info.seed, format!("s/match/{}", i + 1));
            assert!(log.chosen == 1 && log.over, "{log:?}");
        }
    }

    #[test]
    fn key_seat_taken_over_by_another_stream_keeps_the_bot() {
        // The stream seated first loses its line after answering; the referee seats the
        // other stream of the process where it played, and re-sends the request.
        let first_done = Arc::new(tokio::sync::Notify::new());
        let fake = fake_referee::serve(move |n, _| {
            let mut steps = vec![fake_referee::key_accepted()];
            match n {
                1 => steps.extend([
                    fake_referee::welcome_to("m1", 0),
                    fake_referee::request(),
                    fake_referee::expect_answer(),
                    Step::Notify(first_done.clone()),
                    Step::End(Code::Unavailable, "gone".into()),
                ]),
                2 => {
                    steps.push(Step::Wait(first_done.clone()));
                    steps.extend(fake_referee::key_match("m1", 0));
                    steps.push(Step::End(Code::Ok, String::new()));
                }
                _ => steps.push(Step::End(Code::Ok, String::new())), // nothing left
            }
            steps
        });
        let (exit, logs, said) = play_key(key_settings(&fake.address, 2, ""));
        assert_eq!((exit, said), (EXIT_OK, Vec::<String>::new()));
        assert_eq!(logs.len(), 1, "one bot for the seat, on either stream");
        assert!(logs[0].chosen == 1 && logs[0].over, "{:?}", logs[0]);
        assert_eq!(
            logs[0].events,
            ["welcome m1/0", "welcome m1/0", "match_over m1"]
        );
    }

    #[test]
    fn key_opens_two_streams_by_default() {
        let matches = Arc::new(AtomicUsize::new(0));
        let fake = fake_referee::serve(move |_, _| {
            let id = format!("m{}", matches.fetch_add(1, Ordering::SeqCst) + 1);
            let mut steps = vec![fake_referee::key_accepted()];
            steps.extend(fake_referee::key_match(&id, 0));
            steps.push(Step::End(Code::Ok, String::new()));
            steps
        });
        let settings = Settings::from_lookup(lookup(&[
            ("TAVOLO_REFEREE", &fake.address),
            ("TAVOLO_KEY", "kk"),
        ]))
        .unwrap();
        let (exit, mut logs, said) = play_key(settings);
        assert_eq!((exit, said), (EXIT_OK, Vec::<String>::new()));
        assert_eq!(logs.len(), DEFAULT_STREAMS);
        logs.sort_by_key(|l| l.info.index);
        for (i, log) in logs.iter().enumerate() {
            assert_eq!((log.info.index, log.info.count), (i, 2));
            assert_eq!(log.info.seed, format!("kk/{i}/match/1"));
        }
        hellos_carry_the_key(&fake);
    }

    #[test]
    fn key_refusals_end_the_stream_at_once() {
        for (code, details, hint) in [
            (
                Code::Unauthenticated,
                "unknown_key: no entrant has this key",
                "the referee knows no entrant with this key",
            ),
            (
                Code::PermissionDenied,
                "key_revoked: the organiser revoked the key of entrant 'alice'",
                "the organiser revoked this key",
            ),
            (
                Code::ResourceExhausted,
                "too_many_streams: entrant 'alice' has 32 streams open already",
                "the referee is over a limit",
            ),
        ] {
            let fake = fake_referee::serve(move |_, _| vec![Step::End(code, details.into())]);
            let (exit, logs, said) = play_key(key_settings(&fake.address, 1, ""));
            let want = format!(
                "the referee at {} ended the stream: {}: {details} ({hint})",
                fake.address,
                code_name(code)
            );
            assert_eq!((exit, said), (EXIT_FAILED, vec![want]));
            assert_eq!(fake.attempts(), 1, "{details}: retried");
            assert!(logs.is_empty());
        }
    }

    #[test]
    fn key_revoked_between_matches() {
        let fake = fake_referee::serve(|n, _| {
            if n > 1 {
                return vec![Step::End(
                    Code::PermissionDenied,
                    "key_revoked: the organiser revoked the key of entrant 'alice'".into(),
                )];
            }
            let mut steps = vec![fake_referee::key_accepted()];
            steps.extend(fake_referee::key_match("m1", 0));
            steps.push(Step::End(Code::Unavailable, "gone".into()));
            steps
        });
        let (exit, logs, said) = play_key(key_settings(&fake.address, 1, ""));
        assert_eq!(exit, EXIT_FAILED);
        assert!(
            said.len() == 1 && said[0].contains("PERMISSION_DENIED: key_revoked: "),
            "{said:?}"
        );
        assert!(logs.len() == 1 && logs[0].over);
    }

    #[test]
    fn key_stream_ended_mid_match_fails() {
        let fake = fake_referee::serve(|_, _| {
            vec![
                fake_referee::key_accepted(),
                fake_referee::welcome_to("m1", 0),
                Step::End(Code::Ok, String::new()),
            ]
        });
        let (exit, _, said) = play_key(key_settings(&fake.address, 1, ""));
        assert_eq!(
            (exit, said),
            (
                EXIT_FAILED,
                vec!["the referee ended the stream before match m1 was over".to_string()]
            )
        );
    }

    #[test]
    fn key_request_before_a_welcome_fails() {
        let fake = fake_referee::serve(|_, _| {
            vec![
                fake_referee::key_accepted(),
                fake_referee::request(),
                fake_referee::expect_answer(),
            ]
        });
        let (exit, logs, said) = play_key(key_settings(&fake.address, 1, ""));
        assert_eq!(exit, EXIT_FAILED);
        assert!(
            said.len() == 1 && said[0].contains("outside any match"),
            "{said:?}"
        );
        assert!(logs.is_empty());
    }

    #[test]
    fn key_settings_from_lookup() {
        let key =
            Settings::from_lookup(lookup(&[("TAVOLO_REFEREE", "h:1"), ("TAVOLO_KEY", " kk ")]))
                .unwrap();
        assert_eq!((key.key.as_str(), key.streams), ("kk", DEFAULT_STREAMS));
        assert!(key.tickets.is_empty());
        let three = Settings::from_lookup(lookup(&[
            ("TAVOLO_REFEREE", "h:1"),
            ("TAVOLO_KEY", "kk"),
            ("TAVOLO_STREAMS", " 3 "),
        ]))
        .unwrap();
        assert_eq!(three.streams, 3);
        for bad in ["0", "-1", "1.5", "two", "+2"] {
            let e = Settings::from_lookup(lookup(&[
                ("TAVOLO_REFEREE", "h:1"),
                ("TAVOLO_KEY", "kk"),
                ("TAVOLO_STREAMS", bad),
            ]))
            .unwrap_err();
            assert!(
                e.0.starts_with("TAVOLO_STREAMS must be a whole number >= 1"),
                "{bad}: {e}"
            );
        }
        let e = Settings::from_lookup(lookup(&[
            ("TAVOLO_REFEREE", "h:1"),
            ("TAVOLO_KEY", "kk"),
            ("TAVOLO_TICKET", "tk"),
        ]))
        .unwrap_err();
        assert!(
            e.0.starts_with("both TAVOLO_TICKET and TAVOLO_KEY are set"),
            "{e}"
        );
        let e = Settings::from_lookup(lookup(&[("TAVOLO_REFEREE", "h:1")])).unwrap_err();
        assert!(e.0.starts_with("no ticket or key"), "{e}");
        // With tickets, each ticket is one stream: TAVOLO_STREAMS does not matter.
        let tickets = Settings::from_lookup(lookup(&[
            ("TAVOLO_REFEREE", "h:1"),
            ("TAVOLO_TICKET", "ta,tb"),
            ("TAVOLO_STREAMS", "5"),
        ]))
        .unwrap();
        assert_eq!(tickets.tickets, ["ta", "tb"]);
    }

    #[test]
    fn key_and_ticket_is_a_usage_error() {
        let fake = fake_referee::serve(|_, ticket| fake_referee::one_request_match(ticket));
        let mut settings = key_settings(&fake.address, 1, "");
        settings.tickets = vec!["tk".into()];
        let (exit, logs, said) = play_key(settings);
        assert_eq!(exit, EXIT_USAGE);
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(logs.is_empty());
        assert_eq!(fake.attempts(), 0, "nothing played");
    }

    #[test]
    fn key_bot_that_panics_stops_its_stream() {
        struct Panics;
        impl Bot for Panics {
            fn choose(&mut self, _: &Turn<'_>) -> u32 {
                panic!("the bot's own bug")
            }
        }
        let fake = fake_referee::serve(|_, _| {
            let mut steps = vec![fake_referee::key_accepted()];
            steps.extend(fake_referee::key_match("m1", 0));
            steps
        });
        for factory_panics in [false, true] {
            take_said();
            let exit = run_with(key_settings(&fake.address, 1, ""), |_| {
                assert!(!factory_panics, "the factory's own bug");
                Panics
            });
            let said = take_said();
            let want = if factory_panics {
                "making the bot panicked; this stream stops"
            } else {
                "the bot panicked; its stream stops"
            };
            assert_eq!((exit, said), (EXIT_FAILED, vec![want.to_string()]));
        }
    }

    /// A request of id `id` with this observation and one legal play, id 17.
    fn request_with(id: u64, observation: pb::Observation) -> Step {
        let request = pb::DecisionRequest {
            request_id: id,
            deadline_ms: 1000,
            observation: Some(observation),
            legal_actions: vec![pb::Action {
                id: 17,
                kind: pb::ActionKind::Play as i32,
                card: "6C".into(),
                text: "6C".into(),
                ..Default::default()
            }],
            ..Default::default()
        };
        Step::Send(Box::new(PlayResponse {
            events: vec![],
            request: Some(request),
        }))
    }

    fn trick_of(winner: u32, card: &str) -> pb::Trick {
        pb::Trick {
            plays: vec![pb::Play {
                seat: winner,
                action: Some(pb::Action {
                    card: card.into(),
                    ..Default::default()
                }),
            }],
            winner,
        }
    }

    /// Keeps every observation it is shown.
    struct Observer(Arc<Mutex<Vec<pb::Observation>>>);

    impl Bot for Observer {
        fn choose(&mut self, turn: &Turn<'_>) -> u32 {
            self.0.lock().unwrap().push(turn.observation().clone());
            turn.legal()[0].id
        }
    }

    #[test]
    fn hello_asks_for_compact_observations_and_the_bot_sees_them_complete() {
        let fake = fake_referee::serve(|_, ticket| {
            let compact = pb::Observation {
                game: 1,
                deal: 1,
                compact: true,
                tricks: vec![trick_of(3, "2C")],
                ..Default::default()
            };
            vec![
                fake_referee::welcome(ticket),
                request_with(
                    1,
                    pb::Observation {
                        game: 1,
                        deal: 1,
                        tricks: vec![trick_of(0, "AD")],
                        ..Default::default()
                    },
                ),
                Step::Expect {
                    request_id: 1,
                    action_id: 17,
                },
                request_with(2, compact),
                Step::Expect {
                    request_id: 2,
                    action_id: 17,
                },
                fake_referee::match_over(ticket),
                Step::End(Code::Ok, String::new()),
            ]
        });
        let seen = Arc::new(Mutex::new(Vec::new()));
        take_said();
        let exit = run_with(settings_for(&fake.address, &["tk"], "", 5.0), |_| {
            Observer(seen.clone())
        });
        assert_eq!((exit, take_said()), (EXIT_OK, Vec::<String>::new()));
        assert!(fake.hellos().iter().all(|hello| hello.compact_observations));
        let seen = seen.lock().unwrap();
        let want = pb::Observation {
            game: 1,
            deal: 1,
            tricks: vec![trick_of(0, "AD"), trick_of(3, "2C")],
            ..Default::default()
        };
        assert_eq!(seen.len(), 2);
        assert_eq!(seen[1], want);
    }

    #[test]
    fn a_compact_observation_without_its_deal_stops_the_stream() {
        let fake = fake_referee::serve(|_, ticket| {
            let compact = pb::Observation {
                game: 1,
                deal: 4,
                compact: true,
                ..Default::default()
            };
            vec![
                fake_referee::welcome(ticket),
                request_with(1, compact),
                Step::Expect {
                    request_id: 1,
                    action_id: 17,
                },
            ]
        });
        let seen = Arc::new(Mutex::new(Vec::new()));
        take_said();
        let exit = run_with(settings_for(&fake.address, &["tk"], "", 5.0), |_| {
            Observer(seen.clone())
        });
        let want = "the referee sent a compact observation (game 1, deal 4) as the first of \
                    this stream's deal; this stream stops";
        assert_eq!((exit, take_said()), (EXIT_FAILED, vec![want.to_string()]));
        assert!(seen.lock().unwrap().is_empty(), "the bot was shown it");
        assert_eq!(fake.attempts(), 1, "retried");
    }
}
