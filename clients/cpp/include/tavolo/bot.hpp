// A bot, and run(): connection, Hello, answering requests, reconnection, the exit code.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "tavolo/turn.hpp"

namespace tavolo {

// The protocol version this SDK speaks (Hello.protocol_version).
inline constexpr std::uint32_t kProtocolVersion = 1;

// Exit codes run() returns.
inline constexpr int kExitOk = 0;      // every stream ended after MatchOver
inline constexpr int kExitFailed = 1;  // a stream failed: refused, connection lost, or the bot threw
inline constexpr int kExitUsage = 2;   // the settings are missing or wrong; nothing was played

class Bot {
 public:
  virtual ~Bot() = default;
  // The id of one of turn.legal(). Answer well within turn.deadline_ms().
  virtual int choose(const Turn& turn) = 0;
  // Every event, in order (Welcome, MatchStarted, GameStarted, HandDealt, CardPlayed, ...).
  // Unknown (newer) events arrive too, with event_case() == EVENT_NOT_SET.
  virtual void on_event(const Event& event) { (void)event; }
  // Once, after MatchOver.
  virtual void on_match_over() {}
};

// Where to connect and what to play.
struct Settings {
  std::string referee;               // host:port, or unix:/path of a Unix-domain socket
  std::vector<std::string> tickets;  // one stream each
  std::string tls_ca_pem;            // PEM root certificate; empty means plaintext
  double reconnect_seconds = 10.0;   // how long to keep reconnecting after the stream breaks
};

// Missing or malformed settings.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Settings from TAVOLO_REFEREE (host:port, or unix:/path or unix:///path), TAVOLO_TICKET
// (comma-separated), TAVOLO_TLS_CA and TAVOLO_RECONNECT_SECONDS; throws ConfigError.
Settings settings_from_env();

// A 64-bit seed from TAVOLO_SEED (FNV-1a of its text), or `fallback` when it is unset.
std::uint64_t seed_from_env(std::uint64_t fallback = 0);

// Play every ticket with this one bot; the process exit code (kExitOk/kExitFailed/kExitUsage).
// With several tickets each stream runs on its own thread and the calls to the bot are
// serialised (Turn::stream_index() tells the tickets apart).
int run(Bot& bot);
int run(Bot& bot, const Settings& settings);

// One fresh bot per ticket, for bots that keep per-match state.
using BotFactory = std::function<std::unique_ptr<Bot>()>;
int run(const BotFactory& make_bot);
int run(const BotFactory& make_bot, const Settings& settings);

}  // namespace tavolo
