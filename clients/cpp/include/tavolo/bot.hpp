// A bot, and run(): connection, Hello, answering requests, reconnection, the exit code.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "tavolo/turn.hpp"

namespace tavolo {

// The protocol version this SDK speaks (Hello.protocol_version).
inline constexpr std::uint32_t kProtocolVersion = 1;

// Exit codes run() returns.
inline constexpr int kExitOk = 0;      // every stream ended after MatchOver (a key's: with OK)
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

// Streams an entrant key opens unless TAVOLO_STREAMS says otherwise: a partnership table
// seats the entrant on two at once.
inline constexpr int kDefaultStreams = 2;

// Where to connect and what to play.
struct Settings {
  std::string referee;               // host:port, or unix:/path of a Unix-domain socket
  std::vector<std::string> tickets;  // one stream each; empty with a key
  std::string key;                   // an entrant key instead of tickets (TAVOLO_KEY)
  int streams = kDefaultStreams;     // streams to open with the key (TAVOLO_STREAMS)
  std::string tls_ca_pem;            // PEM root certificate; empty means plaintext
  double reconnect_seconds = 10.0;   // how long to keep reconnecting after the stream breaks
  std::string seed;                  // TAVOLO_SEED as given; empty when unset
};

// What a new bot learns about the stream (the ticket) it will play, or with an entrant
// key the match.
struct StreamInfo {
  std::string ticket;  // the secret of this player slot: do not print it; empty with a key
  std::string key;     // the entrant key (TAVOLO_KEY), empty with a ticket: a secret too
  int index = 0;       // the ticket's position in TAVOLO_TICKET, from 0, or the key's stream
  int count = 1;       // how many tickets the process plays, or key streams (TAVOLO_STREAMS)
  std::string entrant;   // with a key: the entrant's name (KeyAccepted.entrant)
  std::string match_id;  // with a key: the match (Welcome.match_id)
  int match_number = 0;  // with a key: the match's ordinal on this stream, 1, 2, ...
  // Seed text for this bot's randomness: TAVOLO_SEED, or this stream's own ticket (or the
  // key) when it is unset (or empty), with "/<index>" appended when the process plays
  // several streams; with a key, then "/match/<match_number>".
  std::string seed;
  // The seed text of game `game` (GameStarted.game) of this stream: "<seed>/game/<game>".
  // Seeding each game afresh from it makes a game play the same way whether the match ran
  // from its start or was resumed at that game by a new process.
  std::string game_seed(std::uint32_t game) const;
};

// The seed text of stream `index` of `count`: `seed` (TAVOLO_SEED), or the stream's own
// `ticket` when `seed` is empty, then "/<index>" when there are several streams.
std::string stream_seed(const std::string& seed, const std::string& ticket, int index, int count);
// The seed text of the `number`-th match (from 1) of a key's stream whose seed text is
// `stream_seed`: "<stream_seed>/match/<number>".
std::string match_seed(const std::string& stream_seed, int number);
// The seed text of game `game` of a stream whose seed text is `stream_seed`:
// "<stream_seed>/game/<game>", as the Python SDK's built-in random bot uses it.
std::string game_seed(const std::string& stream_seed, std::uint32_t game);
// A 64-bit number from a seed text (FNV-1a), e.g. for std::mt19937_64: the same text, the
// same number on every platform.
std::uint64_t seed_number(std::string_view text);

// Missing or malformed settings.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Settings from TAVOLO_REFEREE (host:port, or unix:/path or unix:///path), TAVOLO_TICKET
// (comma-separated) or TAVOLO_KEY (and TAVOLO_STREAMS), TAVOLO_TLS_CA,
// TAVOLO_RECONNECT_SECONDS and TAVOLO_SEED; throws ConfigError.
Settings settings_from_env();

// Makes the bot of one stream. run() calls it once per ticket, before any stream starts:
// each stream has a bot of its own, used only from that stream's thread. With a key, run()
// calls it once per match instead, from the streams' threads but one call at a time; a
// bot is used by one thread at a time.
using BotFactory = std::function<std::unique_ptr<Bot>(const StreamInfo& stream)>;
// The same, for bots that need nothing of the stream.
using PlainBotFactory = std::function<std::unique_ptr<Bot>()>;

// Play every ticket, each with its own bot from `make_bot`, each on its own thread; the
// process exit code (kExitOk/kExitFailed/kExitUsage). Settings from the environment, or
// given. With a key: open settings.streams streams with it, each on its own thread, and
// play every match the referee seats them in, a new bot from `make_bot` each, until the
// referee ends each stream with status OK.
int run(const BotFactory& make_bot);
int run(const BotFactory& make_bot, const Settings& settings);
int run(const PlainBotFactory& make_bot);
int run(const PlainBotFactory& make_bot, const Settings& settings);

// Play a single ticket with this bot. With several tickets in TAVOLO_TICKET, or a key (a
// fresh bot per match), it plays nothing: one line on stderr, and kExitUsage (give run()
// a factory instead).
int run(Bot& bot);
int run(Bot& bot, const Settings& settings);

}  // namespace tavolo
