//! Tavolo bot SDK for Rust: play Tressette against a Tavolo referee.
//!
//! Implement [`Bot::choose`] (and optionally the event hooks), then hand a factory to
//! [`run`]: it reads `TAVOLO_REFEREE` / `TAVOLO_TICKET` / `TAVOLO_SEED` / `TAVOLO_TLS_CA`,
//! opens one gRPC stream per ticket, sends the Hello, answers every request with your
//! choice, reconnects if the line drops, and returns the process exit code. With
//! `TAVOLO_KEY` (a tournament's entrant key) it opens `TAVOLO_STREAMS` streams (2) with
//! the key instead, and plays every match the referee seats them in, a new bot each.
//!
//! ```no_run
//! use tavolo_bot::{Bot, Turn};
//!
//! struct FirstLegal;
//! impl Bot for FirstLegal {
//!     fn choose(&mut self, turn: &Turn) -> u32 {
//!         turn.legal()[0].id
//!     }
//! }
//!
//! fn main() -> std::process::ExitCode {
//!     tavolo_bot::run(|_stream| FirstLegal)
//! }
//! ```

pub mod cards;
mod compact;
#[cfg(test)]
mod fake_referee;
mod runner;
#[cfg(feature = "tls")]
mod tls;
pub mod turn;

/// The protocol's messages (`tavolo.v1`), generated from `proto/tavolo/v1/referee.proto`.
pub mod pb {
    #![allow(clippy::all)]
    tonic::include_proto!("tavolo.v1");
}

pub use cards::{Card, Suit, briscola_winning_card, winning_card};
pub use pb::event::Event;
pub use pb::{Action, ActionKind, Observation, Signal};
pub use runner::{
    ConfigError, DEFAULT_STREAMS, EXIT_FAILED, EXIT_OK, EXIT_USAGE, PROTOCOL_VERSION,
    RefereeAddress, Settings, StreamInfo, game_seed, match_seed, run, run_with, stream_seed,
};
pub use turn::{TrickCard, Turn, card_of, is_play};

/// A bot: one instance per ticket (stream), or per match of an entrant key, living for
/// the whole match.
pub trait Bot: Send + 'static {
    /// The id of one of `turn.legal()`. Called once per request; keep it well within
    /// `turn.deadline_ms()`.
    fn choose(&mut self, turn: &Turn<'_>) -> u32;

    /// Every event the referee sends, in order (events of kinds this SDK does not know are
    /// skipped). The default does nothing.
    fn on_event(&mut self, _event: &Event) {}

    /// Called once, after the `MatchOver` event.
    fn on_match_over(&mut self) {}
}
