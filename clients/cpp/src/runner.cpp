// Playing tickets: one gRPC stream per ticket, reconnection, and the process exit code;
// or an entrant key: several streams, each seated in match after match.
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cctype>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <utility>

#include "tavolo/bot.hpp"
#include "tavolo/compact.hpp"
#include "tavolo/tls.hpp"
#include "tavolo/v1/referee.grpc.pb.h"

namespace tavolo {
namespace {

using Clock = std::chrono::steady_clock;

constexpr double kFirstDelay = 0.1;  // seconds between reconnection attempts, doubling...
constexpr double kMaxDelay = 1.0;    // ...up to this
// Failed attempts in a row closed at once (tls_expected) before a bot without TLS is told
// the referee serves TLS: one such close also happens when a referee goes down in the
// middle of a connection, as a restarting tournament runner does. Three in a row take
// about 0.3 s with the backoff above.
constexpr int kTlsExpectedAfter = 3;

// One line on stderr; newlines in gRPC details would break the one-line promise.
void say(const std::string& line) {
  static std::mutex lock;
  std::string out = "tavolo-cpp: ";
  bool space = false;
  for (char c : line) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = true;
      continue;
    }
    if (space && out.back() != ' ') out += ' ';
    space = false;
    out += c;
  }
  out += '\n';
  std::lock_guard<std::mutex> guard(lock);
  std::fwrite(out.data(), 1, out.size(), stderr);
  std::fflush(stderr);
}

std::string trim(const char* text) {
  std::string s = text ? text : "";
  auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

std::string code_name(grpc::StatusCode code) {
  static const std::array<const char*, 17> names = {
      "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
      "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
      "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
      "UNAUTHENTICATED"};
  auto i = static_cast<std::size_t>(code);
  return i < names.size() ? names[i] : "CODE_" + std::to_string(i);
}

// Statuses a broken connection or a restarting referee produce: worth reconnecting.
bool transient(grpc::StatusCode code) {
  return code == grpc::StatusCode::UNAVAILABLE || code == grpc::StatusCode::CANCELLED ||
         code == grpc::StatusCode::INTERNAL || code == grpc::StatusCode::ABORTED;
}

// The reason word the referee's status details start with ("ticket_used: ...").
std::string reason_of(const std::string& details) {
  return trim(details.substr(0, details.find(':')).c_str());
}

// Whether a stream that ended with `status` is opened again (within
// TAVOLO_RECONNECT_SECONDS): a broken connection, or ALREADY_EXISTS "seat_taken: ..."
// (another connection holds the seat, e.g. the referee has not yet noticed a drop). Every
// other refusal ends the stream at once: "ticket_used" (the match of this ticket is over),
// PERMISSION_DENIED "wrong_socket" or "process_gone", UNAUTHENTICATED "unknown_ticket" or
// "unknown_key", PERMISSION_DENIED "key_revoked", and the rest.
bool retryable(const grpc::Status& status) {
  if (status.error_code() == grpc::StatusCode::ALREADY_EXISTS)
    return reason_of(status.error_message()) == "seat_taken";
  return transient(status.error_code());
}

std::string hint(grpc::StatusCode code, const std::string& details, bool key) {
  const std::string reason = reason_of(details);
  if (reason == "unknown_key") return " (the referee knows no entrant with this key)";
  if (reason == "key_revoked") return " (the organiser revoked this key)";
  if (reason == "ticket_used") return " (the match of this ticket is over)";
  if (reason == "seat_taken") return " (another connection is playing this ticket)";
  if (reason == "wrong_socket")
    return " (this ticket works only on the socket the referee made for its bot)";
  if (reason == "process_gone") return " (the bot process this ticket was made for has ended)";
  if (reason == "unknown_ticket") return " (the referee does not know this ticket)";
  if (key) {
    switch (code) {
      case grpc::StatusCode::UNAUTHENTICATED: return " (the referee knows no entrant with this key)";
      case grpc::StatusCode::PERMISSION_DENIED: return " (the referee does not accept this key)";
      case grpc::StatusCode::ALREADY_EXISTS: return " (another connection is playing this seat)";
      case grpc::StatusCode::INVALID_ARGUMENT: return " (the referee refused a message of this bot)";
      case grpc::StatusCode::FAILED_PRECONDITION: return " (the referee cannot play this key now)";
      case grpc::StatusCode::RESOURCE_EXHAUSTED: return " (the referee is over a limit)";
      default: return "";
    }
  }
  switch (code) {
    case grpc::StatusCode::UNAUTHENTICATED: return " (the referee does not know this ticket)";
    case grpc::StatusCode::PERMISSION_DENIED: return " (the referee does not accept this ticket here)";
    case grpc::StatusCode::ALREADY_EXISTS:
      return " (another connection is playing this ticket, or its match is over)";
    case grpc::StatusCode::INVALID_ARGUMENT: return " (the referee refused a message of this bot)";
    case grpc::StatusCode::FAILED_PRECONDITION: return " (the referee cannot play this ticket now)";
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return " (the referee is over a limit)";
    default: return "";
  }
}

std::string seconds_text(double s) {
  std::ostringstream out;
  out << s;
  return out.str();
}

// A player slot of a match: (match id, slot).
using SeatId = std::pair<std::string, std::uint32_t>;

// One bot playing one slot of one match, and what it has answered.
struct Seat {
  std::mutex lock;  // with a key, another stream of the process may take the seat over
  std::optional<SeatId> id;  // with a key
  Bot* bot = nullptr;
  std::unique_ptr<Bot> owned;  // with a key: the bot made for this match
  bool over = false;           // MatchOver seen
  bool failed = false;         // the bot threw: nobody plays the seat on
  // The last (request_id, action_id) sent, for a request re-sent after a reconnection.
  std::optional<std::pair<std::uint64_t, std::uint32_t>> answered;
  std::optional<std::uint64_t> seen_request;
};

// What a key's streams share: the factory (called one at a time) and the seats of matches
// not over yet, so that a stream that reconnects mid-match may be seated again where
// another stream of the process played.
struct KeyShared {
  explicit KeyShared(const BotFactory& factory) : make_bot(factory) {}
  const BotFactory& make_bot;
  std::mutex make_lock;
  std::mutex seats_lock;
  std::map<SeatId, std::shared_ptr<Seat>> seats;
};

std::shared_ptr<grpc::Channel> make_channel(const Settings& settings, bool own_subchannel = false);

// One ticket's stream, with its own bot, reconnected while the match is not over; or one
// of a key's streams, reconnected until the referee ends it with OK.
class Stream {
 public:
  // A ticket's stream, playing `seat`.
  Stream(std::shared_ptr<grpc::Channel> channel, std::shared_ptr<Seat> seat, std::string ticket,
         int index, std::string label, const Settings& settings)
      : stub_(v1::RefereeService::NewStub(std::move(channel))),
        cur_(std::move(seat)),
        ticket_(std::move(ticket)),
        index_(index),
        label_(std::move(label)),
        settings_(settings) {}

  // A key's stream: `info` is its own, and each match's bot gets a copy of it.
  Stream(std::shared_ptr<grpc::Channel> channel, KeyShared& shared, StreamInfo info,
         std::string label, const Settings& settings)
      : stub_(v1::RefereeService::NewStub(std::move(channel))),
        index_(info.index),
        label_(std::move(label)),
        settings_(settings),
        key_(&shared),
        info_(std::move(info)) {}

  // Play the ticket to the end of the match, or the key until the referee ends the
  // stream with OK; the exit code of this stream.
  int play() {
    const double window = settings_.reconnect_seconds;
    std::optional<Clock::time_point> give_up_at;
    double delay = kFirstDelay;
    bool ever_established = false;
    int closed_at_once = 0;  // attempts in a row closed at once, as TLS closes plain text
    const bool plain_tcp =
        settings_.tls_ca_pem.empty() && settings_.referee.rfind("unix:", 0) != 0;
    while (true) {
      bool established = false;
      grpc::Status status = session(established);
      if (failed_) return kExitFailed;
      if (!key_ && cur_->over) return kExitOk;  // how the stream ended no longer matters
      if (status.ok() && !key_) {
        tell("the referee ended the stream before the match was over");
        return kExitFailed;
      }
      if (status.ok() && cur_) {
        tell("the referee ended the stream before match " + cur_->id->first + " was over");
        return kExitFailed;
      }
      if (status.ok()) return kExitOk;  // the entrant has no match left
      const auto code = status.error_code();
      const std::string outcome = code_name(code) + ": " + status.error_message();
      if (!retryable(status)) {
        tell("the referee at " + settings_.referee + " ended the stream: " + outcome +
             hint(code, status.error_message(), key_ != nullptr));
        return kExitFailed;
      }
      ever_established = ever_established || established;
      closed_at_once =
          !ever_established && tls_expected(settings_, status) ? closed_at_once + 1 : 0;
      // Retrying cannot help: the referee wants TLS, which only TAVOLO_TLS_CA gives.
      if (closed_at_once >= kTlsExpectedAfter) {
        tell("the referee at " + settings_.referee +
             " closed the connection before a word was said (" + outcome +
             "): it serves TLS, and this bot spoke plain text; give it the referee's "
             "certificate in TAVOLO_TLS_CA");
        return kExitFailed;
      }
      const auto now = Clock::now();
      if (established || !give_up_at) {
        give_up_at = now + std::chrono::duration_cast<Clock::duration>(
                               std::chrono::duration<double>(window));
        delay = kFirstDelay;
      }
      const auto pause = std::chrono::duration_cast<Clock::duration>(
          std::chrono::duration<double>(delay));
      if (now + pause > *give_up_at) {
        const char* what = code != grpc::StatusCode::ALREADY_EXISTS
                               ? (ever_established ? "lost the referee" : "cannot reach the referee")
                           : key_ ? "another connection kept a seat of this key"
                                  : "another connection kept the seat of this ticket";
        tell(std::string(what) + " at " + settings_.referee + " (" + outcome + "); gave up after retrying for " +
             seconds_text(window) + " s (TAVOLO_RECONNECT_SECONDS)");
        return kExitFailed;
      }
      // On a channel that failed, gRPC 1.51 answers the next calls with the same failure,
      // then with "tcp handshaker shutdown", whatever the referee does now. Until the stream
      // is established, a plain-text TCP one retries on a fresh channel of its own, whose
      // status tells what happened to that attempt, for tls_expected.
      if (!ever_established && plain_tcp)
        stub_ = v1::RefereeService::NewStub(make_channel(settings_, true));
      std::this_thread::sleep_for(pause);
      delay = std::min(delay * 2, kMaxDelay);
    }
  }

 private:
  void tell(const std::string& line) const { say(label_ + line); }

  // One stream, from Hello to its end.
  grpc::Status session(bool& established) {
    // A key's new stream plays no seat until a Welcome names one: the seat it left may go
    // to another stream of the process, and stays in the shared seats for it.
    if (key_) cur_.reset();
    merger_.reset();  // a new call starts with a complete observation
    grpc::ClientContext context;
    auto call = stub_->Play(&context);
    v1::PlayRequest hello;
    if (key_) {
      hello.mutable_hello()->set_key(settings_.key);
    } else {
      hello.mutable_hello()->set_ticket(ticket_);
    }
    hello.mutable_hello()->set_protocol_version(kProtocolVersion);
    hello.mutable_hello()->set_compact_observations(true);
    if (call->Write(hello)) {
      v1::PlayResponse response;
      while (call->Read(&response)) {
        established = true;
        std::optional<v1::PlayRequest> answer;
        if (!handle(response, answer)) {
          context.TryCancel();  // tells the referee we left
          break;
        }
        // Once the call is over, Write fails; the next Read reports how it ended.
        if (answer && !call->Write(*answer)) break;
      }
    }
    v1::PlayResponse rest;
    while (call->Read(&rest)) {
    }
    return call->Finish();
  }

  // Whether the response holds a Welcome to a seat other than the one played now (with a
  // key: the start of another match).
  bool reseats(const v1::PlayResponse& response) const {
    if (!key_) return false;
    for (const auto& event : response.events()) {
      if (!event.has_welcome()) continue;
      const SeatId id(event.welcome().match_id(), event.welcome().slot());
      if (!cur_ || cur_->id != id) return true;
    }
    return false;
  }

  // Pass the events to the bot and fill `answer` if the response asks for a decision.
  // False when the stream must stop (the bot failed; said already).
  bool handle(v1::PlayResponse& response, std::optional<v1::PlayRequest>& answer) {
    const bool has_request = response.has_request();
    const std::uint64_t request_id = response.request().request_id();
    // The first request after a Welcome is complete: nothing before it counts.
    for (const auto& event : response.events()) {
      if (event.has_welcome()) merger_.reset();
    }
    // After a reconnection the referee re-sends the open request with its events: the bot
    // has heard those events already if it saw this request (at the same seat).
    bool repeated = false;
    if (has_request && cur_ && !reseats(response)) {
      std::lock_guard<std::mutex> guard(cur_->lock);
      repeated = cur_->seen_request == request_id;
    }
    std::shared_ptr<Seat> seat;  // the seat being told, marked failed if its bot throws
    try {
      if (!repeated) {
        for (const auto& event : response.events()) {
          if (!note(event, seat)) return false;
        }
      }
      if (!has_request) return true;
      try {
        merger_.complete(*response.mutable_request()->mutable_observation());
      } catch (const CompactError& e) {
        tell(std::string(e.what()) + "; this stream stops");
        failed_ = true;
        return false;
      }
      seat = cur_;
      if (!seat) {
        tell("the referee sent a decision request outside any match (before a Welcome); this stream stops");
        failed_ = true;
        return false;
      }
      std::lock_guard<std::mutex> guard(seat->lock);
      if (!usable(*seat)) return false;
      seat->seen_request = request_id;
      const auto& request = response.request();
      std::uint32_t chosen = 0;
      if (seat->answered && seat->answered->first == request_id) {
        chosen = seat->answered->second;  // the re-sent request gets the same answer
      } else {
        const int choice = seat->bot->choose(Turn(request, index_));
        if (choice < 0) {
          tell("choose() returned " + std::to_string(choice) + ", which is no action id; this stream stops");
          seat->failed = true;
          failed_ = true;
          return false;
        }
        chosen = static_cast<std::uint32_t>(choice);
        const auto& legal = request.legal_actions();
        if (std::none_of(legal.begin(), legal.end(),
                         [&](const Action& a) { return a.id() == chosen; })) {
          tell("choose() returned " + std::to_string(chosen) +
               ", not a legal action id; sending it anyway");
        }
        seat->answered = std::make_pair(request_id, chosen);
      }
      answer.emplace();
      answer->mutable_decision()->set_request_id(request_id);
      answer->mutable_decision()->set_action_id(chosen);
      return true;
    } catch (const std::exception& e) {
      tell(std::string("the bot threw an exception; this stream stops: ") + e.what());
    } catch (...) {
      tell("the bot threw an exception (not a std::exception); this stream stops");
    }
    if (seat) {
      std::lock_guard<std::mutex> guard(seat->lock);
      seat->failed = true;
    }
    failed_ = true;
    return false;
  }

  // Whether the seat's bot may play on (the seat is locked); says why not, once.
  bool usable(const Seat& seat) {
    if (!seat.failed) return true;
    tell("the bot of this seat failed on another stream; this stream stops");
    failed_ = true;
    return false;
  }

  // One event: said if it is a rejection or an error, then passed to the bot of the seat
  // played now (`told` is set to it). False when the stream must stop.
  bool note(const Event& event, std::shared_ptr<Seat>& told) {
    if (event.has_action_rejected()) {
      const auto& r = event.action_rejected();
      // A stale answer (re-sent, or too late) closes no attempt: no count to show.
      std::string left = r.reason() == "stale_request"
                             ? ""
                             : "; " + std::to_string(r.attempts_left()) + " attempts left";
      tell("action " + std::to_string(r.action_id()) + " was rejected (" + r.reason() + ": " +
           r.message() + ")" + left);
    } else if (event.has_error()) {
      tell("referee reports " + event.error().reason() + ": " + event.error().message());
    }
    if (key_ && event.has_key_accepted()) {
      info_.entrant = event.key_accepted().entrant();
      return true;  // the stream's own news: no bot plays yet
    }
    if (key_ && event.has_welcome() &&
        !sit(SeatId(event.welcome().match_id(), event.welcome().slot())))
      return false;
    told = cur_;  // held here: a finished match's seat goes from cur_ and the shared seats
    if (!told) return true;  // with a key, between matches: no bot to tell
    std::lock_guard<std::mutex> guard(told->lock);
    if (!usable(*told)) return false;
    told->bot->on_event(event);
    if (event.has_match_over() && !told->over) {
      told->over = true;
      told->bot->on_match_over();
      if (key_) {
        std::lock_guard<std::mutex> seats(key_->seats_lock);
        key_->seats.erase(*told->id);
        cur_.reset();
      }
    }
    return true;
  }

  // Make `id` the seat this key's stream plays: the same bot when it is the seat played
  // now, or one another stream of the process left mid-match; else a new bot for a new
  // match. False when no bot could be made (said already).
  bool sit(const SeatId& id) {
    if (cur_ && cur_->id == id) return true;
    {
      std::lock_guard<std::mutex> guard(key_->seats_lock);
      auto found = key_->seats.find(id);
      if (found != key_->seats.end()) {
        cur_ = found->second;
        return true;
      }
    }
    StreamInfo info = info_;
    info.match_id = id.first;
    info.match_number = ++matches_;
    info.seed = match_seed(info_.seed, matches_);
    auto seat = std::make_shared<Seat>();
    seat->id = id;
    try {
      std::lock_guard<std::mutex> guard(key_->make_lock);
      seat->owned = key_->make_bot(info);
    } catch (const std::exception& e) {
      tell(std::string("making the bot threw an exception; this stream stops: ") + e.what());
      failed_ = true;
      return false;
    } catch (...) {
      tell("making the bot threw an exception (not a std::exception); this stream stops");
      failed_ = true;
      return false;
    }
    if (!seat->owned) {
      tell("the bot factory returned no bot; this stream stops");
      failed_ = true;
      return false;
    }
    seat->bot = seat->owned.get();
    {
      std::lock_guard<std::mutex> guard(key_->seats_lock);
      key_->seats[id] = seat;
    }
    cur_ = std::move(seat);
    return true;
  }

  std::unique_ptr<v1::RefereeService::Stub> stub_;
  std::shared_ptr<Seat> cur_;  // the seat played now: a ticket's only one; a key's, or none
  std::string ticket_;
  int index_;
  std::string label_;
  const Settings& settings_;
  KeyShared* key_ = nullptr;  // with a key
  StreamInfo info_;           // with a key: the stream's own
  int matches_ = 0;           // with a key: matches this stream made a bot for
  bool failed_ = false;
  CompactMerger merger_;  // makes this stream's observations complete for the bot
};

// A channel to the referee; with `own_subchannel`, one that shares no connection with
// another channel.
std::shared_ptr<grpc::Channel> make_channel(const Settings& settings, bool own_subchannel) {
  // A channel in backoff fails every call at once: keep its backoff no slower than ours.
  grpc::ChannelArguments args;
  if (own_subchannel) args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, static_cast<int>(kFirstDelay * 1000));
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, static_cast<int>(kFirstDelay * 1000));
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, static_cast<int>(kMaxDelay * 1000));
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  if (settings.tls_ca_pem.empty()) {
    credentials = grpc::InsecureChannelCredentials();
  } else {
    grpc::SslCredentialsOptions options;
    options.pem_root_certs = settings.tls_ca_pem;
    credentials = grpc::SslCredentials(options);
  }
  return grpc::CreateCustomChannel(settings.referee, credentials, args);
}

// Plays every stream, each on its own thread (the caller's for one stream); the worst code.
int play_all(const std::vector<std::unique_ptr<Stream>>& streams) {
  const std::size_t count = streams.size();
  if (count == 1) return streams[0]->play();
  std::vector<int> codes(count, kExitOk);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < count; ++i) {
    threads.emplace_back([&, i] { codes[i] = streams[i]->play(); });
  }
  for (auto& t : threads) t.join();
  return *std::max_element(codes.begin(), codes.end());
}

// Plays ticket i with *bots[i], each stream on its own thread (the caller's for one ticket).
int run_bots(const std::vector<Bot*>& bots, const Settings& settings) {
  auto channel = make_channel(settings);
  const int count = static_cast<int>(settings.tickets.size());
  std::vector<std::unique_ptr<Stream>> streams;
  for (int i = 0; i < count; ++i) {
    std::string label =
        count > 1 ? "ticket " + std::to_string(i + 1) + "/" + std::to_string(count) + ": " : "";
    auto seat = std::make_shared<Seat>();
    seat->bot = bots[i];
    streams.push_back(std::make_unique<Stream>(channel, std::move(seat), settings.tickets[i], i,
                                               std::move(label), settings));
  }
  channel.reset();  // the streams hold it: one that moves to a channel of its own lets it go
  return play_all(streams);
}

// Plays settings.key on settings.streams streams, a bot from `make_bot` per match.
int run_key(const BotFactory& make_bot, const Settings& settings) {
  auto channel = make_channel(settings);
  KeyShared shared(make_bot);
  const int count = settings.streams;
  std::vector<std::unique_ptr<Stream>> streams;
  for (int i = 0; i < count; ++i) {
    StreamInfo info;
    info.key = settings.key;
    info.index = i;
    info.count = count;
    info.seed = stream_seed(settings.seed, settings.key, i, count);
    std::string label =
        count > 1 ? "key stream " + std::to_string(i + 1) + "/" + std::to_string(count) + ": " : "";
    streams.push_back(
        std::make_unique<Stream>(channel, shared, std::move(info), std::move(label), settings));
  }
  channel.reset();  // the streams hold it: one that moves to a channel of its own lets it go
  return play_all(streams);
}

void quiet_grpc_logs() {
  // gRPC's core logs connection chatter; keep stderr for our own lines.
  setenv("GRPC_VERBOSITY", "ERROR", 0);
}

const char* const kNoReferee = "no referee address: set TAVOLO_REFEREE to host:port or unix:/path";
const char* const kTicketAndKey =
    "both TAVOLO_TICKET and TAVOLO_KEY are set: set one (a ticket plays one match, a key all of "
    "an entrant's matches)";
const char* const kNoTicket =
    "no ticket or key: set TAVOLO_TICKET (several tickets: comma-separated) or TAVOLO_KEY (a "
    "tournament's entrant key)";

// What is wrong with a unix: address, which must name a socket by its absolute path
// (unix:/path, or unix:///path); "" for a good one and for every host:port. gRPC's own
// "unix" resolver connects to that path as it is: no DNS.
std::string referee_problem(const std::string& referee) {
  if (referee.rfind("unix:", 0) != 0) return "";
  std::string path = referee.substr(5);
  if (path.rfind("//", 0) == 0) path = path.substr(2);  // unix:///path: an empty authority
  if (path.empty() || path[0] != '/' || path == "/")
    return "bad referee address '" + referee +
           "': set TAVOLO_REFEREE to host:port or unix:/path (an absolute path)";
  return "";
}

bool check_settings(const Settings& settings) {
  if (settings.referee.empty()) {
    say(kNoReferee);
    return false;
  }
  if (const std::string problem = referee_problem(settings.referee); !problem.empty()) {
    say(problem);
    return false;
  }
  if (!settings.key.empty() && !settings.tickets.empty()) {
    say(kTicketAndKey);
    return false;
  }
  if (settings.key.empty() && settings.tickets.empty()) {
    say(kNoTicket);
    return false;
  }
  if (!settings.key.empty() && settings.streams < 1) {
    say("streams must be at least 1, not " + std::to_string(settings.streams));
    return false;
  }
  return true;
}

}  // namespace

bool tls_expected(const Settings& settings, const grpc::Status& status) {
  // gRPC's C core (also under Python's grpcio) says "Socket closed"; "server preface" is
  // grpc-go's "error reading server preface: EOF", kept so that every SDK has one rule.
  const std::string& details = status.error_message();
  const bool closed = details.find("Socket closed") != std::string::npos ||
                      details.find("server preface") != std::string::npos;
  const bool tcp = settings.referee.rfind("unix:", 0) != 0;
  return settings.tls_ca_pem.empty() && tcp &&
         status.error_code() == grpc::StatusCode::UNAVAILABLE && closed;
}

Settings settings_from_env() {
  Settings settings;
  settings.referee = trim(std::getenv("TAVOLO_REFEREE"));
  if (settings.referee.empty()) throw ConfigError(kNoReferee);
  if (const std::string problem = referee_problem(settings.referee); !problem.empty())
    throw ConfigError(problem);
  std::stringstream tickets(trim(std::getenv("TAVOLO_TICKET")));
  for (std::string ticket; std::getline(tickets, ticket, ',');) {
    ticket = trim(ticket.c_str());
    if (!ticket.empty()) settings.tickets.push_back(ticket);
  }
  settings.key = trim(std::getenv("TAVOLO_KEY"));
  if (!settings.key.empty() && !settings.tickets.empty()) throw ConfigError(kTicketAndKey);
  if (settings.key.empty() && settings.tickets.empty()) throw ConfigError(kNoTicket);
  const std::string streams = trim(std::getenv("TAVOLO_STREAMS"));
  if (!streams.empty()) {
    // Digits only, and few enough of them for an int; with tickets it is not used.
    const bool whole = streams.size() <= 6 &&
                       std::all_of(streams.begin(), streams.end(),
                                   [](char c) { return c >= '0' && c <= '9'; });
    if (!whole || std::stoi(streams) < 1)
      throw ConfigError("TAVOLO_STREAMS must be a whole number >= 1, not '" + streams + "'");
    settings.streams = std::stoi(streams);
  }
  const std::string ca_path = trim(std::getenv("TAVOLO_TLS_CA"));
  if (!ca_path.empty()) {
    std::ifstream file(ca_path, std::ios::binary);
    std::ostringstream pem;
    if (!file || !(pem << file.rdbuf()) || pem.str().empty())
      throw ConfigError("cannot read TAVOLO_TLS_CA '" + ca_path + "' (a PEM root certificate)");
    settings.tls_ca_pem = pem.str();
  }
  const std::string reconnect = trim(std::getenv("TAVOLO_RECONNECT_SECONDS"));
  if (!reconnect.empty()) {
    char* end = nullptr;
    errno = 0;
    const double value = std::strtod(reconnect.c_str(), &end);
    if (errno != 0 || *end != '\0' || !(value >= 0) || std::isinf(value))
      throw ConfigError("TAVOLO_RECONNECT_SECONDS must be seconds >= 0, not '" + reconnect + "'");
    settings.reconnect_seconds = value;
  }
  if (const char* seed = std::getenv("TAVOLO_SEED")) settings.seed = seed;  // as given
  return settings;
}

std::string StreamInfo::game_seed(std::uint32_t game) const {
  return tavolo::game_seed(seed, game);
}

std::string stream_seed(const std::string& seed, const std::string& ticket, int index,
                        int count) {
  std::string text = seed.empty() ? ticket : seed;
  if (count > 1) text += "/" + std::to_string(index);
  return text;
}

std::string match_seed(const std::string& stream_seed, int number) {
  return stream_seed + "/match/" + std::to_string(number);
}

std::string game_seed(const std::string& stream_seed, std::uint32_t game) {
  return stream_seed + "/game/" + std::to_string(game);
}

std::uint64_t seed_number(std::string_view text) {
  std::uint64_t hash = 14695981039346656037ull;  // FNV-1a
  for (char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;
  }
  return hash;
}

int run(Bot& bot, const Settings& settings) {
  if (!check_settings(settings)) return kExitUsage;
  if (!settings.key.empty()) {
    say("run(Bot&) plays one ticket, and a key plays every match of an entrant with a fresh "
        "bot each: give tavolo::run a bot factory instead");
    return kExitUsage;
  }
  if (settings.tickets.size() > 1) {
    say("run(Bot&) plays one ticket, and TAVOLO_TICKET holds " +
        std::to_string(settings.tickets.size()) +
        ": give tavolo::run a bot factory instead (one bot per ticket)");
    return kExitUsage;
  }
  quiet_grpc_logs();
  return run_bots({&bot}, settings);
}

int run(const BotFactory& make_bot, const Settings& settings) {
  if (!check_settings(settings)) return kExitUsage;
  if (!make_bot) {
    say("run() was given an empty bot factory");
    return kExitUsage;
  }
  quiet_grpc_logs();
  if (!settings.key.empty()) return run_key(make_bot, settings);
  const int count = static_cast<int>(settings.tickets.size());
  std::vector<std::unique_ptr<Bot>> owned;
  std::vector<Bot*> bots;
  for (int i = 0; i < count; ++i) {
    StreamInfo info;
    info.ticket = settings.tickets[i];
    info.index = i;
    info.count = count;
    info.seed = stream_seed(settings.seed, settings.tickets[i], i, count);
    try {
      owned.push_back(make_bot(info));
    } catch (const std::exception& e) {
      say(std::string("making the bot threw an exception: ") + e.what());
      return kExitFailed;
    } catch (...) {
      say("making the bot threw an exception (not a std::exception)");
      return kExitFailed;
    }
    if (!owned.back()) {
      say("the bot factory returned no bot");
      return kExitFailed;
    }
    bots.push_back(owned.back().get());
  }
  return run_bots(bots, settings);
}

int run(const PlainBotFactory& make_bot, const Settings& settings) {
  if (!make_bot) return run(BotFactory(), settings);
  return run(BotFactory([&](const StreamInfo&) { return make_bot(); }), settings);
}

namespace {

template <typename Play>
int with_env_settings(const Play& play) {
  try {
    return play(settings_from_env());
  } catch (const ConfigError& e) {
    say(e.what());
    return kExitUsage;
  }
}

}  // namespace

int run(Bot& bot) {
  return with_env_settings([&](const Settings& s) { return run(bot, s); });
}

int run(const BotFactory& make_bot) {
  return with_env_settings([&](const Settings& s) { return run(make_bot, s); });
}

int run(const PlainBotFactory& make_bot) {
  return with_env_settings([&](const Settings& s) { return run(make_bot, s); });
}

}  // namespace tavolo
