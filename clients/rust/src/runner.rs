//! Playing tickets: one gRPC stream per ticket, reconnection, and the process exit code.

use std::fmt;
use std::process::ExitCode;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::{Channel, Endpoint};
use tonic::{Code, Status};

use crate::pb::referee_service_client::RefereeServiceClient;
use crate::pb::{self, DecisionRequest, PlayRequest, PlayResponse, event::Event, play_request};
use crate::{Bot, Turn};

/// The protocol version this SDK speaks (`Hello.protocol_version`).
pub const PROTOCOL_VERSION: u32 = 1;
/// Every stream ended after `MatchOver`.
pub const EXIT_OK: u8 = 0;
/// A stream failed: refused by the referee, connection lost for good, or the bot panicked.
pub const EXIT_FAILED: u8 = 1;
/// The settings are missing or wrong; nothing was played.
pub const EXIT_USAGE: u8 = 2;

const DEFAULT_RECONNECT: Duration = Duration::from_secs(10);
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
    /// One stream per ticket.
    pub tickets: Vec<String>,
    /// `TAVOLO_SEED` as given; empty when unset (then each stream seeds from its own
    /// ticket: see [`StreamInfo::seed`]).
    pub seed: String,
    /// PEM root certificate; None for plaintext.
    pub tls_ca: Option<Vec<u8>>,
    /// How long to keep reconnecting after the stream breaks.
    pub reconnect: Duration,
}

impl Settings {
    /// Settings from `TAVOLO_REFEREE`, `TAVOLO_TICKET` (comma-separated tickets),
    /// `TAVOLO_SEED`, `TAVOLO_TLS_CA` and `TAVOLO_RECONNECT_SECONDS`.
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
        if tickets.is_empty() {
            return Err(ConfigError(
                "no ticket: set TAVOLO_TICKET (several tickets: comma-separated)".into(),
            ));
        }
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
            seed,
            tls_ca,
            reconnect,
        })
    }
}

/// What a bot factory learns about the stream its bot will play.
#[derive(Debug, Clone)]
pub struct StreamInfo {
    pub ticket: String,
    /// From 0, in `TAVOLO_TICKET` order.
    pub index: usize,
    pub count: usize,
    /// Seed text for this bot's randomness: `TAVOLO_SEED`, or this stream's own ticket
    /// when it is unset (or empty), with `/<index>` appended when the process plays several
    /// tickets. See [`stream_seed`].
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
/// per ticket, with that stream's [`StreamInfo`]. The exit code:
/// 0 when every stream ended after `MatchOver`, 1 when one failed, 2 for bad settings.
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
    let count = settings.tickets.len();
    let mut streams = Vec::with_capacity(count);
    for (index, ticket) in settings.tickets.iter().enumerate() {
        let info = StreamInfo {
            ticket: ticket.clone(),
            index,
            count,
            seed: stream_seed(&settings.seed, ticket, index, count),
        };
        let label = if count > 1 {
            format!("ticket {}/{count}: ", index + 1)
        } else {
            String::new()
        };
        streams.push(Stream::new(make(&info), ticket.clone(), label, &settings));
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
/// `unknown_ticket`, and the rest.
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

fn hint(code: Code, message: &str) -> &'static str {
    match reason_of(message) {
        "ticket_used" => return " (the match of this ticket is over)",
        "seat_taken" => return " (another connection is playing this ticket)",
        "wrong_socket" => {
            return " (this ticket works only on the socket the referee made for its bot)";
        }
        "process_gone" => return " (the bot process this ticket was made for has ended)",
        "unknown_ticket" => return " (the referee does not know this ticket)",
        _ => {}
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

/// One ticket's stream, reconnected while the match is not over.
struct Stream<B: Bot> {
    bot: B,
    ticket: String,
    label: String,
    referee: String,
    reconnect: Duration,
    match_over: bool,
    established: bool,
    /// The last (request_id, action_id) sent: a request re-sent after a reconnection gets
    /// the same answer without asking the bot twice.
    answered: Option<(u64, u32)>,
    seen_request: Option<u64>,
}

impl<B: Bot> Stream<B> {
    fn new(bot: B, ticket: String, label: String, settings: &Settings) -> Stream<B> {
        Stream {
            bot,
            ticket,
            label,
            referee: settings.referee.clone(),
            reconnect: settings.reconnect,
            match_over: false,
            established: false,
            answered: None,
            seen_request: None,
        }
    }

    fn say(&self, line: &str) {
        say(&format!("{}{line}", self.label));
    }

    /// Plays the ticket to the end of the match; the exit code of this stream.
    async fn play(mut self, channel: Channel) -> u8 {
        let mut client = RefereeServiceClient::new(channel);
        let mut give_up_at: Option<Instant> = None;
        let mut delay = FIRST_DELAY;
        let mut ever_established = false;
        loop {
            self.established = false;
            let outcome = match self.session(&mut client).await {
                Ok(()) if self.match_over => return EXIT_OK,
                Ok(()) => {
                    self.say("the referee ended the stream before the match was over");
                    return EXIT_FAILED;
                }
                Err(_) if self.match_over => return EXIT_OK, // how it ended no longer matters
                Err(status) => {
                    let code = status.code();
                    let text = format!("{}: {}", code_name(code), status.message());
                    if !retryable(&status) {
                        self.say(&format!(
                            "the referee at {} ended the stream: {text}{}",
                            self.referee,
                            hint(code, status.message())
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
                let what = if outcome.starts_with("ALREADY_EXISTS") {
                    "another connection kept the seat of this ticket"
                } else if ever_established {
                    "lost the referee"
                } else {
                    "cannot reach the referee"
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
    async fn session(&mut self, client: &mut RefereeServiceClient<Channel>) -> Result<(), Status> {
        let (tx, rx) = mpsc::channel::<PlayRequest>(8);
        let hello = pb::Hello {
            ticket: self.ticket.clone(),
            protocol_version: PROTOCOL_VERSION,
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
            if let Some(decision) = self.handle(response) {
                let message = Some(play_request::Message::Decision(decision));
                // If the call is over the send fails; the next read says how it ended.
                let _ = tx.send(PlayRequest { message }).await;
            }
        }
        Ok(())
    }

    /// Passes the events to the bot; the decision to send if the response asks for one.
    fn handle(&mut self, response: PlayResponse) -> Option<pb::Decision> {
        let request_id = response.request.as_ref().map(|r| r.request_id);
        // After a reconnection the referee re-sends the open request with its events: the
        // bot has heard those events already if it saw this request.
        let repeated = request_id.is_some() && request_id == self.seen_request;
        if request_id.is_some() {
            self.seen_request = request_id;
        }
        if !repeated {
            for event in response.events.iter().filter_map(|e| e.event.as_ref()) {
                self.note(event);
            }
        }
        let request = response.request?;
        Some(pb::Decision {
            request_id: request.request_id,
            action_id: self.decide(&request),
        })
    }

    fn note(&mut self, event: &Event) {
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
            _ => {}
        }
        self.bot.on_event(event);
        if matches!(event, Event::MatchOver(_)) && !self.match_over {
            self.match_over = true;
            self.bot.on_match_over();
        }
    }

    fn decide(&mut self, request: &DecisionRequest) -> u32 {
        if let Some((id, chosen)) = self.answered
            && id == request.request_id
        {
            return chosen;
        }
        let chosen = self.bot.choose(&Turn::new(request));
        if !request.legal_actions.iter().any(|a| a.id == chosen) {
            self.say(&format!(
                "choose() returned {chosen}, not a legal action id; sending it anyway"
            ));
        }
        self.answered = Some((request.request_id, chosen));
        chosen
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake_referee::{self, Step};
    use std::cell::RefCell;
    use std::sync::{Arc, Mutex};

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

    #[test]
    fn code_names() {
        assert_eq!(code_name(Code::AlreadyExists), "ALREADY_EXISTS");
        assert_eq!(code_name(Code::Unauthenticated), "UNAUTHENTICATED");
    }
}
