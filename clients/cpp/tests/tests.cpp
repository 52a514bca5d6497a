// Unit tests of the card helpers, Turn, the example bot's choices on hand-made requests,
// run() against a fake referee on a Unix-domain socket (unix:/path) and on TCP (host:port),
// and the contract every SDK keeps: which ticket refusals end a stream at once and which
// are retried, one bot per ticket, and the seed texts; and entrant keys: match after match
// on a key's streams, a fresh bot each, reconnections, refusals and settings; and compact
// observations: the merge against tests/fixtures/compact/, and run() asking for them; and
// a plain-text bot told that the referee serves TLS after three closes at once.
// Run: cmake -S . -B build-tests -DTAVOLO_BUILD_TESTS=ON && cmake --build build-tests -j 2
//      && ctest --test-dir build-tests --output-on-failure
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <google/protobuf/util/message_differencer.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <regex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "example_bot.hpp"
#include "tavolo/compact.hpp"
#include "tavolo/tls.hpp"
#include "tavolo/v1/referee.grpc.pb.h"

namespace {

int failures = 0;

#define CHECK(cond)                                                                   \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      std::cerr << __FILE__ << ":" << __LINE__ << ": CHECK failed: " #cond "\n";     \
      ++failures;                                                                     \
    }                                                                                 \
  } while (0)

using namespace tavolo;

// Action ids as the referee makes them: signal * 40 + card id; 300 + declaration; 320; 321.
int card_id(const std::string& card) {
  return static_cast<int>(kSuits.find(card[1]) * 10 + kRanks.find(card[0]));
}

void add_play(DecisionRequest& r, const std::string& card, int signal = 0) {
  Action* a = r.add_legal_actions();
  a->set_id(signal * 40 + card_id(card));
  a->set_kind(v1::ACTION_KIND_PLAY);
  a->set_card(card);
  a->set_signal(static_cast<v1::Signal>(signal));
  a->set_text(signal ? card + " " + std::string(signal_name(signal)) : card);
}

void add_other(DecisionRequest& r, int id, int kind, const std::string& text) {
  Action* a = r.add_legal_actions();
  a->set_id(id);
  a->set_kind(static_cast<v1::ActionKind>(kind));
  a->set_text(text);
  if (kind == v1::ACTION_KIND_DECLARE) a->set_declaration(text.substr(8));
}

void add_trick(DecisionRequest& r, int seat, const std::string& card) {
  auto* play = r.mutable_observation()->add_trick();
  play->set_seat(seat);
  play->mutable_action()->set_kind(v1::ACTION_KIND_PLAY);
  play->mutable_action()->set_card(card);
  play->mutable_action()->set_text(card);
}

int choose(const DecisionRequest& r) {
  ExampleBot bot;
  return bot.choose(Turn(r));
}

void test_cards() {
  CHECK(is_card("3D") && is_card(" qb ") && !is_card("1D") && !is_card("3X") && !is_card(""));
  CHECK(canonical_card("as") == "AS");
  CHECK(rank_of("3D") == 0 && rank_of("4B") == 9);
  CHECK(strength("3D") == 9 && strength("4B") == 0);
  CHECK(suit_of("QB") == 'B');
  CHECK(points_in_thirds("AS") == 3 && points_in_thirds("KS") == 1 && points_in_thirds("7S") == 0);
  CHECK(beats("3C", "AC", 'C') && !beats("AC", "3C", 'C') && !beats("3D", "4C", 'C'));
  CHECK(beats("4C", "3D", 'C'));
  CHECK(winning_card({"KC", "3D", "2C"}) == std::optional<std::string>("2C"));
  CHECK(!winning_card({}).has_value());
  CHECK((sort_cards({"4B", "3D", "AD", "2C"}) == std::vector<std::string>{"3D", "AD", "2C", "4B"}));
  CHECK(all_cards().size() == 40 && all_cards()[0] == "3D" && all_cards()[39] == "4B");
  CHECK(signal_name(2) == "volo" && signal_name(0).empty() && signal_name(99).empty());
  bool threw = false;
  try {
    rank_of("ZZ");
  } catch (const BadCard&) {
    threw = true;
  }
  CHECK(threw);
}

void test_turn() {
  DecisionRequest r;
  r.mutable_observation()->set_seat(1);
  r.mutable_observation()->set_players(4);
  add_trick(r, 0, "KC");
  add_play(r, "AC");
  add_play(r, "4C", 2);
  add_other(r, 321, v1::ACTION_KIND_CALL_OUT, "call-out");
  Turn t(r);
  CHECK(t.seat() == 1 && t.partner() == std::optional<int>(3) && t.players() == 4);
  CHECK(t.led_suit() == std::optional<char>('C') && !t.is_leading());
  CHECK(t.plays().size() == 2 && t.declarations().empty());
  CHECK(t.find("4C volo").has_value() && !t.find("4C").has_value());
  CHECK(t.trick().size() == 1 && t.trick()[0].card == "KC");
  // A play known only by its text still reads as a play.
  Action text_only;
  text_only.set_id(7);
  text_only.set_text("AS volo");
  CHECK(is_play(text_only) && card_of(text_only) == std::optional<std::string>("AS"));
}

void test_bot_declares_then_ends() {
  DecisionRequest r;
  add_other(r, 300, v1::ACTION_KIND_DECLARE, "declare napoli-D");
  add_other(r, 320, v1::ACTION_KIND_END_DECLARATIONS, "end-declarations");
  CHECK(choose(r) == 300);
  DecisionRequest end;
  add_other(end, 320, v1::ACTION_KIND_END_DECLARATIONS, "end-declarations");
  CHECK(choose(end) == 320);
}

void test_bot_leads_cheapest_quiet_card() {
  DecisionRequest r;
  add_play(r, "3D", 1);  // busso: skipped
  add_play(r, "3D");
  add_play(r, "AD");
  add_play(r, "7C");
  add_play(r, "5C");
  add_play(r, "KB");
  add_other(r, 321, v1::ACTION_KIND_CALL_OUT, "call-out");
  CHECK(choose(r) == card_id("5C"));
}

void test_bot_takes_trick_cheaply() {
  DecisionRequest r;
  add_trick(r, 0, "KC");
  add_trick(r, 1, "QC");
  add_play(r, "3C");
  add_play(r, "2C");
  add_play(r, "AC");
  add_play(r, "4C");
  CHECK(choose(r) == card_id("2C"));  // 3C and 2C beat KC, both worth 1/3: the weaker
}

void test_bot_throws_cheapest_when_it_cannot_win() {
  DecisionRequest r;
  add_trick(r, 2, "3S");
  add_play(r, "AS");
  add_play(r, "KS");
  add_play(r, "6S", 3);  // striscio only: skipped while quiet plays exist
  CHECK(choose(r) == card_id("KS"));
  DecisionRequest off_suit;  // void in the led suit: no card can win
  add_trick(off_suit, 2, "4S");
  add_play(off_suit, "AD");
  add_play(off_suit, "7B");
  CHECK(choose(off_suit) == card_id("7B"));
}

void test_bot_only_signalled_plays() {
  DecisionRequest r;
  add_play(r, "6S", 2);
  add_play(r, "2S", 3);
  CHECK(choose(r) == 2 * 40 + card_id("6S"));
}

void test_bot_unknown_kinds() {
  DecisionRequest r;
  add_other(r, 321, v1::ACTION_KIND_CALL_OUT, "call-out");
  add_other(r, 400, 9, "bid 60");  // a kind from a later protocol
  add_other(r, 401, 9, "pass");
  CHECK(choose(r) == 400);
  DecisionRequest only_call_out;
  add_other(only_call_out, 321, v1::ACTION_KIND_CALL_OUT, "call-out");
  CHECK(choose(only_call_out) == 321);
}

void test_briscola_cards() {
  CHECK(briscola_strength("AD") == 9 && briscola_strength("3D") == 8 && briscola_strength("2D") == 0);
  int total = 0;
  for (const auto& card : all_cards()) total += briscola_points(card);
  CHECK(total == 120);
  CHECK(briscola_beats("2B", "AD", 'D', 'B') && !briscola_beats("AD", "2B", 'D', 'B'));
  CHECK(briscola_beats("AD", "3D", 'D', 'B') && !briscola_beats("AS", "4D", 'D', 'B'));
  CHECK(briscola_winning_card({"KD", "2B", "AD", "4B"}, 'B') == std::optional<std::string>("4B"));
  CHECK(briscola_winning_card({"KD", "AS", "AD"}, 'B') == std::optional<std::string>("AD"));
  CHECK(!briscola_winning_card({}, 'B').has_value());
}

void test_bot_plays_briscola() {
  ExampleBot bot;
  Event started;
  started.mutable_match_started()->set_game("briscola-a-quattro");
  bot.on_event(started);
  auto briscola = [&](const std::vector<std::string>& trick, const std::vector<std::string>& legal) {
    DecisionRequest r;
    r.mutable_observation()->set_trump("5B");  // bastoni are trumps
    for (std::size_t i = 0; i < trick.size(); ++i) add_trick(r, static_cast<int>(i), trick[i]);
    for (const auto& card : legal) add_play(r, card);
    return bot.choose(Turn(r));
  };
  CHECK(briscola({}, {"2B", "JD", "4S"}) == card_id("4S"));  // lead the cheapest non-trump
  CHECK(briscola({"KD"}, {"3D", "AD", "4B"}) == card_id("3D"));  // take it cheaply, no trump
  CHECK(briscola({"AD"}, {"3D", "4B", "KB"}) == card_id("4B"));  // only a trump takes it
  CHECK(briscola({"AD", "3B"}, {"KD", "2S", "4B"}) == card_id("2S"));  // none does: the cheapest
}

// A referee that sends one request and ends the match after the right answer.
class FakeReferee final : public v1::RefereeService::Service {
 public:
  grpc::Status Play(grpc::ServerContext*,
                    grpc::ServerReaderWriter<v1::PlayResponse, v1::PlayRequest>* stream) override {
    v1::PlayRequest in;
    if (!stream->Read(&in) || in.hello().ticket() != "tk" || in.hello().protocol_version() != 1)
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "no_hello: bad hello");
    v1::PlayResponse out;
    out.add_events()->mutable_welcome()->set_match_id("m");
    out.mutable_request()->set_request_id(5);
    out.mutable_request()->set_deadline_ms(1000);
    add_play(*out.mutable_request(), "6C");
    stream->Write(out);
    if (!stream->Read(&in) || in.decision().request_id() != 5 ||
        in.decision().action_id() != static_cast<std::uint32_t>(card_id("6C")))
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "bad decision");
    v1::PlayResponse over;
    over.add_events()->mutable_match_over()->set_match_id("m");
    stream->Write(over);
    return grpc::Status::OK;
  }
};

class CountingBot : public Bot {
 public:
  int choose(const Turn& turn) override {
    ++chosen;
    return static_cast<int>(turn.legal()[0].id());
  }
  void on_match_over() override { over = true; }
  int chosen = 0;
  bool over = false;
};

// The fake referee listening on `address` ("127.0.0.1:0" picks a port, put in *port).
std::unique_ptr<grpc::Server> serve(FakeReferee& referee, const std::string& address,
                                    int* port = nullptr) {
  grpc::ServerBuilder builder;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), port);
  builder.RegisterService(&referee);
  return builder.BuildAndStart();
}

// Plays one match with TAVOLO_REFEREE=referee; true if it ended as it should.
bool plays_one_match(const std::string& referee) {
  Settings settings;
  settings.referee = referee;
  settings.tickets = {"tk"};
  settings.reconnect_seconds = 2;
  CountingBot bot;
  const int code = run(bot, settings);
  if (code != kExitOk || bot.chosen != 1 || !bot.over) {
    std::cerr << referee << ": exit " << code << ", chosen " << bot.chosen << ", over "
              << bot.over << "\n";
    return false;
  }
  return true;
}

// A new folder under $TMPDIR (or /tmp) for a test's Unix socket; "" if none could be made.
std::string temp_folder() {
  const char* tmp = std::getenv("TMPDIR");
  std::string folder = std::string(tmp && *tmp ? tmp : "/tmp") + "/tavolo-cpp-XXXXXX";
  return mkdtemp(folder.data()) ? folder : std::string();
}

void test_run_over_unix_socket() {
  const std::string folder = temp_folder();
  if (folder.empty()) {
    CHECK(!"mkdtemp failed");
    return;
  }
  const std::string socket = folder + "/referee.sock";
  {
    FakeReferee referee;
    auto server = serve(referee, "unix:" + socket);
    CHECK(server != nullptr);
    if (server) {
      CHECK(plays_one_match("unix:" + socket));
      CHECK(plays_one_match("unix://" + socket));
      server->Shutdown();
    }
  }
  std::remove(socket.c_str());
  rmdir(folder.c_str());
}

void test_run_over_tcp() {
  FakeReferee referee;
  int port = 0;
  auto server = serve(referee, "127.0.0.1:0", &port);
  CHECK(server != nullptr && port > 0);
  if (!server) return;
  CHECK(plays_one_match("127.0.0.1:" + std::to_string(port)));
  CHECK(plays_one_match("localhost:" + std::to_string(port)));
  server->Shutdown();
}

// What settings_from_env makes of TAVOLO_REFEREE: the address, or the ConfigError's text.
std::string referee_from_env(const char* referee) {
  setenv("TAVOLO_REFEREE", referee, 1);
  setenv("TAVOLO_TICKET", "tk", 1);
  try {
    return settings_from_env().referee;
  } catch (const ConfigError& e) {
    return std::string("error: ") + e.what();
  }
}

void test_referee_addresses() {
  for (const char* good : {"127.0.0.1:50051", "referee.example.org:443", "[::1]:50051",
                           "unix:/run/tavolo/referee.sock", "unix:///tmp/x/referee.sock"}) {
    CHECK(referee_from_env(good) == good);
  }
  CHECK(referee_from_env(" unix:/tmp/referee.sock ") == "unix:/tmp/referee.sock");
  const std::string format = "host:port or unix:/path";
  for (const char* bad : {"", "unix:", "unix:/", "unix:referee.sock", "unix://host/referee.sock"}) {
    const std::string got = referee_from_env(bad);
    CHECK(got.rfind("error: ", 0) == 0 && got.find(format) != std::string::npos);
  }
  // run() with settings made by hand checks the address too: usage error, nothing played
  // (and one line on stderr saying so).
  CountingBot bot;
  Settings settings;
  settings.referee = "unix:referee.sock";
  settings.tickets = {"tk"};
  CHECK(run(bot, settings) == kExitUsage && bot.chosen == 0);
  unsetenv("TAVOLO_REFEREE");
  unsetenv("TAVOLO_TICKET");
}

// --- the contract -------------------------------------------------------------------------

using PlayStream = grpc::ServerReaderWriter<v1::PlayResponse, v1::PlayRequest>;

// A referee whose every stream follows `script`, given the attempt number (1 for the first
// stream it sees) and the ticket of the Hello; it counts the streams opened.
class ScriptedReferee final : public v1::RefereeService::Service {
 public:
  using Script = std::function<grpc::Status(int attempt, const std::string& ticket, PlayStream*)>;
  explicit ScriptedReferee(Script script) : script_(std::move(script)) {}

  grpc::Status Play(grpc::ServerContext*, PlayStream* stream) override {
    const int attempt = ++attempts;
    v1::PlayRequest hello;
    if (!stream->Read(&hello) || !hello.has_hello())
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "no_hello: bad hello");
    {
      std::lock_guard<std::mutex> guard(hellos_lock);
      hellos.push_back(hello.hello());
    }
    return script_(attempt, hello.hello().ticket(), stream);
  }

  std::atomic<int> attempts{0};
  std::mutex hellos_lock;
  std::vector<v1::Hello> hellos;  // every stream's Hello

 private:
  Script script_;
};

// The fake on a fresh port of 127.0.0.1; *address is its host:port.
std::unique_ptr<grpc::Server> serve_scripted(ScriptedReferee& referee, std::string* address) {
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&referee);
  auto server = builder.BuildAndStart();
  *address = "127.0.0.1:" + std::to_string(port);
  return server;
}

void send_welcome(const std::string& ticket, PlayStream* stream) {
  v1::PlayResponse welcome;
  welcome.add_events()->mutable_welcome()->set_match_id(ticket);  // for the bot to check
  stream->Write(welcome);
}

// Welcome (its match id is the ticket), one request, the right answer, MatchOver.
grpc::Status one_request_match(const std::string& ticket, PlayStream* stream) {
  send_welcome(ticket, stream);
  v1::PlayResponse out;
  out.mutable_request()->set_request_id(5);
  out.mutable_request()->set_deadline_ms(1000);
  add_play(*out.mutable_request(), "6C");
  stream->Write(out);
  v1::PlayRequest in;
  if (!stream->Read(&in) || in.decision().request_id() != 5 ||
      in.decision().action_id() != static_cast<std::uint32_t>(card_id("6C")))
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "bad decision");
  v1::PlayResponse over;
  over.add_events()->mutable_match_over()->set_match_id(ticket);
  stream->Write(over);
  return grpc::Status::OK;
}

Settings settings_for(const std::string& referee, std::vector<std::string> tickets,
                      const std::string& seed, double reconnect_seconds) {
  Settings settings;
  settings.referee = referee;
  settings.tickets = std::move(tickets);
  settings.seed = seed;
  settings.reconnect_seconds = reconnect_seconds;
  return settings;
}

// What run() returned, the SDK's lines on stderr (without "tavolo-cpp: "), and how long
// it took.
struct Outcome {
  int code = -1;
  std::vector<std::string> lines;
  double seconds = 0;
};

Outcome capture(const std::function<int()>& play) {
  Outcome outcome;
  std::fflush(stderr);
  FILE* file = std::tmpfile();
  const int saved = dup(2);
  dup2(fileno(file), 2);
  const auto started = std::chrono::steady_clock::now();
  outcome.code = play();
  outcome.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  std::rewind(file);
  std::string line;
  for (int c; (c = std::fgetc(file)) != EOF;) {
    if (c != '\n') {
      line += static_cast<char>(c);
      continue;
    }
    const std::string prefix = "tavolo-cpp: ";
    if (line.rfind(prefix, 0) == 0) outcome.lines.push_back(line.substr(prefix.size()));
    line.clear();
  }
  std::fclose(file);
  return outcome;
}

// (a bot's serial number, the match id of its Welcome, how often it chose), logged at
// MatchOver by every RecordingBot.
struct Played {
  std::mutex lock;
  std::vector<std::tuple<int, std::string, int>> bots;
};

class RecordingBot : public Bot {
 public:
  RecordingBot(Played& log, int serial) : log_(log), serial_(serial) {}
  int choose(const Turn& turn) override {
    ++chosen_;
    return static_cast<int>(turn.legal()[0].id());
  }
  void on_event(const Event& event) override {
    if (event.has_welcome()) welcome_ = event.welcome().match_id();
  }
  void on_match_over() override {
    std::lock_guard<std::mutex> guard(log_.lock);
    log_.bots.emplace_back(serial_, welcome_, chosen_);
  }

 private:
  Played& log_;
  int serial_;
  std::string welcome_;
  int chosen_ = 0;
};

const char* const kTicketUsed = "ticket_used: this ticket has been used and its seat is closed";
const char* const kSeatTaken = "seat_taken: a connection for this seat is already open";

void test_ticket_refusals_end_the_stream_at_once() {
  const std::vector<std::pair<grpc::StatusCode, std::string>> cases = {
      {grpc::StatusCode::ALREADY_EXISTS, kTicketUsed},
      {grpc::StatusCode::PERMISSION_DENIED,
       "wrong_socket: this ticket works only on its own slot's socket"},
      {grpc::StatusCode::PERMISSION_DENIED,
       "process_gone: the bot process this ticket was made for has ended"},
      {grpc::StatusCode::UNAUTHENTICATED, "unknown_ticket: unknown ticket"},
  };
  const std::vector<std::string> names = {"ALREADY_EXISTS", "PERMISSION_DENIED",
                                          "PERMISSION_DENIED", "UNAUTHENTICATED"};
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto& [code, details] = cases[i];
    ScriptedReferee referee([&](int, const std::string&, PlayStream*) {
      return grpc::Status(code, details);
    });
    std::string address;
    auto server = serve_scripted(referee, &address);
    Played log;
    const Outcome got = capture([&] {
      return run([&](const StreamInfo&) { return std::make_unique<RecordingBot>(log, 0); },
                 settings_for(address, {"tk"}, "", 5));
    });
    const std::string want =
        "the referee at " + address + " ended the stream: " + names[i] + ": " + details + " (";
    CHECK(got.code == kExitFailed);
    CHECK(referee.attempts == 1);  // no retry
    CHECK(got.seconds < 2);
    CHECK(got.lines.size() == 1 && got.lines[0].rfind(want, 0) == 0);
    if (referee.attempts != 1 || got.lines.size() != 1)
      std::cerr << details << ": " << referee.attempts << " attempts, " << got.lines.size()
                << " lines\n";
    server->Shutdown();
  }
}

void test_ticket_used_after_a_drop_ends_the_stream() {
  ScriptedReferee referee([](int attempt, const std::string& ticket, PlayStream* stream) {
    if (attempt > 1) return grpc::Status(grpc::StatusCode::ALREADY_EXISTS, kTicketUsed);
    send_welcome(ticket, stream);
    return grpc::Status(grpc::StatusCode::UNAVAILABLE, "gone");  // the line drops
  });
  std::string address;
  auto server = serve_scripted(referee, &address);
  Played log;
  const Outcome got = capture([&] {
    return run([&](const StreamInfo&) { return std::make_unique<RecordingBot>(log, 0); },
               settings_for(address, {"tk"}, "", 5));
  });
  CHECK(got.code == kExitFailed);
  CHECK(referee.attempts == 2);  // one reconnection, then no retry
  CHECK(got.lines.size() == 1 &&
        got.lines[0].find("ALREADY_EXISTS: ticket_used: ") != std::string::npos);
  server->Shutdown();
}

void test_seat_taken_is_retried() {
  ScriptedReferee referee([](int attempt, const std::string& ticket, PlayStream* stream) {
    // Refused twice, even before this process ever had a working stream.
    if (attempt <= 2) return grpc::Status(grpc::StatusCode::ALREADY_EXISTS, kSeatTaken);
    return one_request_match(ticket, stream);
  });
  std::string address;
  auto server = serve_scripted(referee, &address);
  Played log;
  const Outcome got = capture([&] {
    return run([&](const StreamInfo&) { return std::make_unique<RecordingBot>(log, 0); },
               settings_for(address, {"tk"}, "", 5));
  });
  CHECK(got.code == kExitOk);
  CHECK(referee.attempts == 3);
  CHECK(got.lines.empty());
  CHECK(log.bots.size() == 1 && log.bots[0] == std::make_tuple(0, std::string("tk"), 1));
  server->Shutdown();
}

void test_seat_taken_gives_up_after_the_reconnect_window() {
  ScriptedReferee referee([](int, const std::string&, PlayStream*) {
    return grpc::Status(grpc::StatusCode::ALREADY_EXISTS, kSeatTaken);
  });
  std::string address;
  auto server = serve_scripted(referee, &address);
  Played log;
  const Outcome got = capture([&] {
    return run([&](const StreamInfo&) { return std::make_unique<RecordingBot>(log, 0); },
               settings_for(address, {"tk"}, "", 0.7));
  });
  CHECK(got.code == kExitFailed);
  CHECK(referee.attempts >= 3);
  // Retries 0.1 s apart, doubling: it stops when the next one would be past the window.
  CHECK(got.seconds > 0.25 && got.seconds < 3);
  CHECK(got.lines.size() == 1 &&
        got.lines[0].find("ALREADY_EXISTS: seat_taken: ") != std::string::npos &&
        got.lines[0].find("gave up after retrying") != std::string::npos);
  server->Shutdown();
}

void test_one_bot_per_ticket() {
  ScriptedReferee referee([](int, const std::string& ticket, PlayStream* stream) {
    return one_request_match(ticket, stream);
  });
  std::string address;
  auto server = serve_scripted(referee, &address);
  const std::vector<std::string> tickets = {"ta", "tb", "tc"};
  for (const std::string seed : {"", "s"}) {
    Played log;
    std::vector<StreamInfo> infos;
    const Outcome got = capture([&] {
      return run(
          [&](const StreamInfo& info) {
            infos.push_back(info);
            return std::make_unique<RecordingBot>(log, static_cast<int>(infos.size()) - 1);
          },
          settings_for(address, tickets, seed, 5));
    });
    CHECK(got.code == kExitOk && got.lines.empty());
    CHECK(infos.size() == 3);  // one factory call per ticket
    std::sort(log.bots.begin(), log.bots.end());
    CHECK(log.bots.size() == 3);
    for (std::size_t i = 0; i < tickets.size() && i < infos.size() && i < log.bots.size(); ++i) {
      // Each stream's own ticket, not the first one, when TAVOLO_SEED is unset.
      const std::string base = seed.empty() ? tickets[i] : seed;
      CHECK(infos[i].ticket == tickets[i] && infos[i].index == static_cast<int>(i) &&
            infos[i].count == 3);
      CHECK(infos[i].seed == base + "/" + std::to_string(i));
      // Bot i played ticket i's stream, and only it.
      CHECK(log.bots[i] == std::make_tuple(static_cast<int>(i), tickets[i], 1));
    }
  }
  // A factory that needs nothing of the stream works too.
  Played log;
  const Outcome got = capture([&] {
    return run(PlainBotFactory([&] { return std::make_unique<RecordingBot>(log, 7); }),
               settings_for(address, {"ta"}, "", 5));
  });
  CHECK(got.code == kExitOk && log.bots.size() == 1);
  server->Shutdown();
}

void test_one_bot_cannot_play_several_tickets() {
  ScriptedReferee referee([](int, const std::string& ticket, PlayStream* stream) {
    return one_request_match(ticket, stream);
  });
  std::string address;
  auto server = serve_scripted(referee, &address);
  Played log;
  RecordingBot bot(log, 0);
  const Outcome got = capture([&] { return run(bot, settings_for(address, {"ta", "tb"}, "", 5)); });
  CHECK(got.code == kExitUsage);
  CHECK(referee.attempts == 0);  // nothing played
  CHECK(got.lines.size() == 1 && got.lines[0].find("bot factory") != std::string::npos);
  // One ticket is fine.
  const Outcome one = capture([&] { return run(bot, settings_for(address, {"ta"}, "", 5)); });
  CHECK(one.code == kExitOk && referee.attempts == 1);
  server->Shutdown();
}

void test_seeds() {
  setenv("TAVOLO_REFEREE", "127.0.0.1:1", 1);
  setenv("TAVOLO_TICKET", "ta,tb", 1);
  unsetenv("TAVOLO_SEED");
  CHECK(settings_from_env().seed.empty());
  setenv("TAVOLO_SEED", " my seed ", 1);
  CHECK(settings_from_env().seed == " my seed ");  // as given
  unsetenv("TAVOLO_SEED");
  unsetenv("TAVOLO_REFEREE");
  unsetenv("TAVOLO_TICKET");

  CHECK(stream_seed("", "ta", 0, 1) == "ta");
  CHECK(stream_seed("", "tb", 1, 2) == "tb/1");
  CHECK(stream_seed("s", "ta", 0, 1) == "s");
  CHECK(stream_seed("s", "ta", 0, 2) == "s/0");
  CHECK(stream_seed("s", "tb", 1, 2) == "s/1");
  StreamInfo info;
  info.ticket = "tb";
  info.index = 1;
  info.count = 2;
  info.seed = "s/1";
  CHECK(info.game_seed(3) == "s/1/game/3");
  CHECK(game_seed("tk", 0) == "tk/game/0");
  CHECK(seed_number("") == 14695981039346656037ull);  // FNV-1a
  CHECK(seed_number("a") == 0xaf63dc4c8601ec8cull);
  CHECK(seed_number("s/1/game/3") != seed_number("s/1/game/4"));
}

// --- a referee that serves TLS, and a bot that speaks plain text ---------------------------

// What gRPC C++ 1.51 said when a referee serving TLS closed a plain-text connection, on a
// channel's first attempt.
const char* const kClosedAtOnce =
    "failed to connect to all addresses; last error: UNAVAILABLE: ipv4:127.0.0.1:50051: "
    "Socket closed";

void test_tls_expected() {
  Settings tcp;
  tcp.referee = "127.0.0.1:50051";
  const grpc::Status closed(grpc::StatusCode::UNAVAILABLE, kClosedAtOnce);
  CHECK(tls_expected(tcp, closed));
  for (const char* referee : {"localhost:50051", "[::1]:50051", "referee.example.org:443"}) {
    Settings other = tcp;
    other.referee = referee;
    CHECK(tls_expected(other, closed));
  }
  // grpc-go's words for the same.
  CHECK(tls_expected(tcp, grpc::Status(grpc::StatusCode::UNAVAILABLE,
                                       "connection error: desc = \"error reading server "
                                       "preface: EOF\"")));
  // A slot's own Unix socket never serves TLS.
  for (const char* referee : {"unix:/run/tavolo/referee.sock", "unix:///tmp/x/referee.sock"}) {
    Settings unix_socket = tcp;
    unix_socket.referee = referee;
    CHECK(!tls_expected(unix_socket, closed));
  }
  // With a CA the bot spoke TLS already.
  Settings with_ca = tcp;
  with_ca.tls_ca_pem = "-----BEGIN CERTIFICATE-----\n";
  CHECK(!tls_expected(with_ca, closed));
  for (const auto code : {grpc::StatusCode::UNKNOWN, grpc::StatusCode::CANCELLED,
                          grpc::StatusCode::INTERNAL, grpc::StatusCode::ABORTED,
                          grpc::StatusCode::DEADLINE_EXCEEDED}) {
    CHECK(!tls_expected(tcp, grpc::Status(code, kClosedAtOnce)));
  }
  // A referee not (yet) listening refuses the connection: retried as before.
  CHECK(!tls_expected(tcp, grpc::Status(grpc::StatusCode::UNAVAILABLE,
                                        "failed to connect to all addresses; last error: "
                                        "UNKNOWN: ipv4:127.0.0.1:1: Failed to connect to "
                                        "remote host: Connection refused")));
  // What later attempts on the same channel said, to a referee serving TLS and to one
  // refusing the connection alike: no sign of a close at once (run() retries such a stream
  // on a fresh channel, which says "Socket closed" or "Connection refused" again).
  CHECK(!tls_expected(tcp, grpc::Status(grpc::StatusCode::UNAVAILABLE,
                                        "failed to connect to all addresses; last error: "
                                        "UNKNOWN: ipv4:127.0.0.1:50051: tcp handshaker "
                                        "shutdown")));
  CHECK(!tls_expected(tcp, grpc::Status(grpc::StatusCode::UNAVAILABLE, "gone")));
}

// A listener that closes every connection before saying a word, as a referee serving TLS
// closes a plain-text one; on 127.0.0.1 (address "host:port") or a Unix socket path. With
// `closes`, it stops listening after that many, so that later connections are refused.
class ClosingListener {
 public:
  explicit ClosingListener(const std::string& unix_path = "", int closes = 0) {
    if (unix_path.empty()) {
      fd_ = socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in in{};
      in.sin_family = AF_INET;
      in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      socklen_t size = sizeof in;
      if (fd_ < 0 || bind(fd_, reinterpret_cast<sockaddr*>(&in), size) != 0 ||
          getsockname(fd_, reinterpret_cast<sockaddr*>(&in), &size) != 0)
        return;
      address = "127.0.0.1:" + std::to_string(ntohs(in.sin_port));
    } else {
      fd_ = socket(AF_UNIX, SOCK_STREAM, 0);
      sockaddr_un un{};
      un.sun_family = AF_UNIX;
      if (fd_ < 0 || unix_path.size() >= sizeof un.sun_path) return;
      unix_path.copy(un.sun_path, unix_path.size());
      if (bind(fd_, reinterpret_cast<sockaddr*>(&un), sizeof un) != 0) return;
      address = "unix:" + unix_path;
    }
    if (listen(fd_, 16) != 0) {
      address.clear();
      return;
    }
    thread_ = std::thread([this, closes] {
      for (int conn; (conn = accept(fd_, nullptr, nullptr)) >= 0;) {
        if (++accepted == closes) shutdown(fd_, SHUT_RDWR);  // refuses from now on
        // FIN at once, then wait for the client to hang up: no unread bytes, so no reset.
        shutdown(conn, SHUT_WR);
        const timeval wait{2, 0};
        setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
        char buffer[4096];
        while (read(conn, buffer, sizeof buffer) > 0) {
        }
        close(conn);
      }
    });
  }
  ~ClosingListener() {
    if (fd_ >= 0) shutdown(fd_, SHUT_RDWR);  // wakes accept()
    if (thread_.joinable()) thread_.join();
    if (fd_ >= 0) close(fd_);
  }

  std::string address;  // empty if it could not listen
  std::atomic<int> accepted{0};

 private:
  int fd_ = -1;
  std::thread thread_;
};

void test_tls_referee_tells_a_plain_text_bot_after_three_closes() {
  ClosingListener tls_referee;
  CHECK(!tls_referee.address.empty());
  if (tls_referee.address.empty()) return;
  Played log;
  const Outcome got = capture([&] {
    return run([&](const StreamInfo&) { return std::make_unique<RecordingBot>(log, 0); },
               settings_for(tls_referee.address, {"tk"}, "", 5));
  });
  const std::string want = "the referee at " + tls_referee.address +
                           " closed the connection before a word was said (UNAVAILABLE: ";
  const std::string advice =
      "): it serves TLS, and this bot spoke plain text; give it the referee's certificate in "
      "TAVOLO_TLS_CA";
  CHECK(got.code == kExitFailed);
  CHECK(got.seconds < 2);  // three attempts, about 0.3 s; not TAVOLO_RECONNECT_SECONDS
  CHECK(tls_referee.accepted == 3);
  const bool told = got.lines.size() == 1 && got.lines[0].rfind(want, 0) == 0 &&
                    got.lines[0].find("Socket closed" + advice) != std::string::npos;
  CHECK(told);
  if (!told)
    for (const auto& line : got.lines) std::cerr << "said: " << line << "\n";
  CHECK(log.bots.empty());
}

// A referee going down in the middle of a connection closes it at once too: a close or two
// followed by refused connections is retried as before, with no word of TLS.
void test_a_close_then_refused_connections_are_retried() {
  for (const int closes : {1, 2}) {
    ClosingListener going_down("", closes);
    CHECK(!going_down.address.empty());
    if (going_down.address.empty()) return;
    Played log;
    const Outcome got = capture([&] {
      return run([&](const StreamInfo&) { return std::make_unique<RecordingBot>(log, 0); },
                 settings_for(going_down.address, {"tk"}, "", 0.7));
    });
    CHECK(got.code == kExitFailed);
    CHECK(going_down.accepted == closes);
    const bool retried = got.lines.size() == 1 &&
                         got.lines[0].find("cannot reach the referee") != std::string::npos &&
                         got.lines[0].find("Connection refused") != std::string::npos &&
                         got.lines[0].find("TLS") == std::string::npos;
    CHECK(retried);
    if (!retried)
      for (const auto& line : got.lines) std::cerr << "said: " << line << "\n";
    CHECK(log.bots.empty());
  }
}

// gRPC says "Socket closed" here too, but a slot's own socket serves no TLS: a referee
// closing it is retried as before. The window is 2 s, not 0.7: a Unix socket's channel is
// kept between attempts, and its own backoff (0.1 s, jittered, growing) may answer one of
// three quick retries at once on a loaded machine without dialling; 2 s makes five.
void test_unix_socket_closing_at_once_is_retried() {
  const std::string folder = temp_folder();
  if (folder.empty()) {
    CHECK(!"mkdtemp failed");
    return;
  }
  const std::string socket = folder + "/referee.sock";
  {
    ClosingListener slot(socket);
    CHECK(!slot.address.empty());
    if (!slot.address.empty()) {
      Played log;
      const Outcome got = capture([&] {
        return run([&](const StreamInfo&) { return std::make_unique<RecordingBot>(log, 0); },
                   settings_for(slot.address, {"tk"}, "", 2.0));
      });
      CHECK(got.code == kExitFailed);
      CHECK(slot.accepted >= 2);
      const bool retried = got.lines.size() == 1 &&
                           got.lines[0].find("gave up after retrying") != std::string::npos &&
                           got.lines[0].find("TLS") == std::string::npos;
      CHECK(retried);
      if (!retried)
        for (const auto& line : got.lines) std::cerr << "said: " << line << "\n";
    }
  }
  std::remove(socket.c_str());
  rmdir(folder.c_str());
}

// --- entrant keys -------------------------------------------------------------------------

void key_accepted(PlayStream* stream) {
  v1::PlayResponse out;
  auto* accepted = out.add_events()->mutable_key_accepted();
  accepted->set_entrant("alice");
  accepted->set_streams_per_table(2);
  accepted->set_matches_left(2);
  stream->Write(out);
}

void welcome_to(PlayStream* stream, const std::string& match, std::uint32_t slot) {
  v1::PlayResponse out;
  out.add_events()->mutable_welcome()->set_match_id(match);
  out.mutable_events(0)->mutable_welcome()->set_slot(slot);
  stream->Write(out);
}

// Request 5 (one legal play, 6C), with an event of a kind this SDK does not know.
void send_request(PlayStream* stream) {
  v1::PlayResponse out;
  out.add_events();
  out.mutable_request()->set_request_id(5);
  out.mutable_request()->set_deadline_ms(1000);
  add_play(*out.mutable_request(), "6C");
  stream->Write(out);
}

bool got_answer(PlayStream* stream) {
  v1::PlayRequest in;
  return stream->Read(&in) && in.decision().request_id() == 5 &&
         in.decision().action_id() == static_cast<std::uint32_t>(card_id("6C"));
}

void match_over(PlayStream* stream, const std::string& match) {
  v1::PlayResponse over;
  over.add_events()->mutable_match_over()->set_match_id(match);
  stream->Write(over);
}

// Welcome, request 5, its answer, MatchOver; false if the answer was wrong.
bool key_match(PlayStream* stream, const std::string& match, std::uint32_t slot) {
  welcome_to(stream, match, slot);
  send_request(stream);
  if (!got_answer(stream)) return false;
  match_over(stream, match);
  return true;
}

const grpc::Status kBadDecision(grpc::StatusCode::INVALID_ARGUMENT, "bad decision");

// What one bot of a key was made for and what it saw.
struct MatchLog {
  StreamInfo info;
  int chosen = 0;
  std::vector<std::string> events;
  bool over = false;
};

struct KeyBots {
  std::mutex lock;
  std::vector<std::shared_ptr<MatchLog>> made;  // in the order the factory made them

  BotFactory factory() {
    return [this](const StreamInfo& info) -> std::unique_ptr<Bot> {
      auto log = std::make_shared<MatchLog>();
      log->info = info;
      std::lock_guard<std::mutex> guard(lock);
      made.push_back(log);
      return std::make_unique<KeyBot>(log);
    };
  }

  class KeyBot : public Bot {
   public:
    explicit KeyBot(std::shared_ptr<MatchLog> log) : log_(std::move(log)) {}
    int choose(const Turn& turn) override {
      ++log_->chosen;
      return static_cast<int>(turn.legal()[0].id());
    }
    void on_event(const Event& event) override {
      if (event.has_welcome())
        log_->events.push_back("welcome " + event.welcome().match_id() + "/" +
                               std::to_string(event.welcome().slot()));
      else if (event.has_match_over())
        log_->events.push_back("match_over " + event.match_over().match_id());
      else if (event.has_key_accepted())
        log_->events.push_back("key_accepted");  // must not happen
      else
        log_->events.push_back("other");
    }
    void on_match_over() override { log_->over = true; }

   private:
    std::shared_ptr<MatchLog> log_;
  };
};

Settings key_settings(const std::string& referee, int streams, const std::string& seed) {
  Settings settings;
  settings.referee = referee;
  settings.key = "kk";
  settings.streams = streams;
  settings.seed = seed;
  settings.reconnect_seconds = 2;
  return settings;
}

bool hellos_carry_the_key(ScriptedReferee& referee) {
  std::lock_guard<std::mutex> guard(referee.hellos_lock);
  return !referee.hellos.empty() &&
         std::all_of(referee.hellos.begin(), referee.hellos.end(), [](const v1::Hello& h) {
           return h.key() == "kk" && h.ticket().empty() && h.protocol_version() == 1 &&
                  h.compact_observations();
         });
}

using Events = std::vector<std::string>;

void test_key_two_matches_on_one_stream() {
  ScriptedReferee referee([](int, const std::string&, PlayStream* stream) {
    key_accepted(stream);
    if (!key_match(stream, "m1", 0) || !key_match(stream, "m2", 2)) return kBadDecision;
    return grpc::Status::OK;  // no match left
  });
  std::string address;
  auto server = serve_scripted(referee, &address);
  for (const std::string seed : {"", "s"}) {
    KeyBots bots;
    const Outcome got = capture([&] { return run(bots.factory(), key_settings(address, 1, seed)); });
    CHECK(got.code == kExitOk && got.lines.empty());
    CHECK(bots.made.size() == 2);  // a fresh bot per match
    const std::string base = seed.empty() ? "kk" : seed;
    const std::vector<std::pair<std::string, int>> seats = {{"m1", 0}, {"m2", 2}};
    for (std::size_t i = 0; i < bots.made.size() && i < 2; ++i) {
      const MatchLog& log = *bots.made[i];
      const auto& [match, slot] = seats[i];
      CHECK(log.info.key == "kk" && log.info.ticket.empty() && log.info.index == 0 &&
            log.info.count == 1);
      CHECK(log.info.entrant == "alice" && log.info.match_id == match &&
            log.info.match_number == static_cast<int>(i) + 1);
      CHECK(log.info.seed == base + "/match/" + std::to_string(i + 1));
      CHECK((log.events == Events{"welcome " + match + "/" + std::to_string(slot), "other",
                                  "match_over " + match}));
      CHECK(log.chosen == 1 && log.over);
    }
  }
  CHECK(hellos_carry_the_key(referee));
  server->Shutdown();
}

void test_key_reconnection_mid_match_keeps_the_bot() {
  ScriptedReferee referee([](int attempt, const std::string&, PlayStream* stream) {
    key_accepted(stream);
    welcome_to(stream, "m1", 1);
    send_request(stream);
    // The line drops before the answer: KeyAccepted, Welcome, the request again.
    if (attempt == 1) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "gone");
    if (!got_answer(stream)) return kBadDecision;
    match_over(stream, "m1");
    return grpc::Status::OK;
  });
  std::string address;
  auto server = serve_scripted(referee, &address);
  KeyBots bots;
  const Outcome got = capture([&] { return run(bots.factory(), key_settings(address, 1, "")); });
  CHECK(got.code == kExitOk && got.lines.empty());
  CHECK(bots.made.size() == 1);  // the same bot plays on
  if (bots.made.size() == 1) {
    const MatchLog& log = *bots.made[0];
    // The unknown event once: not again with the re-sent request.
    CHECK((log.events == Events{"welcome m1/1", "other", "welcome m1/1", "match_over m1"}));
    CHECK(log.chosen == 1 && log.over);
  }
  CHECK(referee.attempts == 2);
  server->Shutdown();
}

void test_key_reconnection_between_matches() {
  ScriptedReferee referee([](int attempt, const std::string&, PlayStream* stream) {
    key_accepted(stream);
    if (attempt == 1) {
      if (!key_match(stream, "m1", 0)) return kBadDecision;
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "gone");  // waiting for m2
    }
    if (!key_match(stream, "m2", 0)) return kBadDecision;
    return grpc::Status::OK;
  });
  std::string address;
  auto server = serve_scripted(referee, &address);
  KeyBots bots;
  const Outcome got = capture([&] { return run(bots.factory(), key_settings(address, 1, "s")); });
  CHECK(got.code == kExitOk && got.lines.empty());
  CHECK(bots.made.size() == 2);
  for (std::size_t i = 0; i < bots.made.size(); ++i) {
    CHECK(bots.made[i]->info.match_number == static_cast<int>(i) + 1);
    CHECK(bots.made[i]->info.seed == "s/match/" + std::to_string(i + 1));
    CHECK(bots.made[i]->chosen == 1 && bots.made[i]->over);
  }
  server->Shutdown();
}

void test_key_seat_taken_over_by_another_stream() {
  // The stream seated first loses its line after answering; the referee seats the other
  // stream of the process where it played, and re-sends the request.
  std::promise<void> first_done;
  std::shared_future<void> first = first_done.get_future().share();
  ScriptedReferee referee([&](int attempt, const std::string&, PlayStream* stream) {
    key_accepted(stream);
    if (attempt == 1) {
      welcome_to(stream, "m1", 0);
      send_request(stream);
      const bool answered = got_answer(stream);
      first_done.set_value();
      return answered ? grpc::Status(grpc::StatusCode::UNAVAILABLE, "gone") : kBadDecision;
    }
    if (attempt == 2) {
      first.wait();
      if (!key_match(stream, "m1", 0)) return kBadDecision;
    }
    return grpc::Status::OK;  // the first stream, back: nothing left
  });
  std::string address;
  auto server = serve_scripted(referee, &address);
  KeyBots bots;
  const Outcome got = capture([&] { return run(bots.factory(), key_settings(address, 2, "")); });
  CHECK(got.code == kExitOk && got.lines.empty());
  CHECK(bots.made.size() == 1);  // one bot for the seat, on either stream
  if (bots.made.size() == 1) {
    CHECK(bots.made[0]->chosen == 1 && bots.made[0]->over);  // not asked again
    CHECK((bots.made[0]->events == Events{"welcome m1/0", "other", "welcome m1/0", "match_over m1"}));
  }
  server->Shutdown();
}

void test_key_opens_two_streams_by_default() {
  std::atomic<int> matches{0};
  ScriptedReferee referee([&](int, const std::string&, PlayStream* stream) {
    key_accepted(stream);
    if (!key_match(stream, "m" + std::to_string(++matches), 0)) return kBadDecision;
    return grpc::Status::OK;
  });
  std::string address;
  auto server = serve_scripted(referee, &address);
  setenv("TAVOLO_REFEREE", address.c_str(), 1);
  setenv("TAVOLO_KEY", "kk", 1);
  unsetenv("TAVOLO_TICKET");
  unsetenv("TAVOLO_STREAMS");
  unsetenv("TAVOLO_SEED");
  KeyBots bots;
  const Outcome got = capture([&] { return run(bots.factory()); });
  unsetenv("TAVOLO_REFEREE");
  unsetenv("TAVOLO_KEY");
  CHECK(got.code == kExitOk && got.lines.empty());
  CHECK(bots.made.size() == static_cast<std::size_t>(kDefaultStreams));
  std::vector<std::string> seeds;
  for (const auto& log : bots.made) {
    CHECK(log->info.count == 2 && log->info.match_number == 1);
    seeds.push_back(log->info.seed);
  }
  std::sort(seeds.begin(), seeds.end());
  CHECK((seeds == std::vector<std::string>{"kk/0/match/1", "kk/1/match/1"}));
  CHECK(hellos_carry_the_key(referee));
  server->Shutdown();
}

void test_key_refusals_end_the_stream_at_once() {
  const std::vector<std::tuple<grpc::StatusCode, std::string, std::string, std::string>> cases = {
      {grpc::StatusCode::UNAUTHENTICATED, "UNAUTHENTICATED", "unknown_key: no entrant has this key",
       "the referee knows no entrant with this key"},
      {grpc::StatusCode::PERMISSION_DENIED, "PERMISSION_DENIED",
       "key_revoked: the organiser revoked the key of entrant 'alice'",
       "the organiser revoked this key"},
      {grpc::StatusCode::RESOURCE_EXHAUSTED, "RESOURCE_EXHAUSTED",
       "too_many_streams: entrant 'alice' has 32 streams open already",
       "the referee is over a limit"},
  };
  for (const auto& [code, name, details, hint] : cases) {
    ScriptedReferee referee([&](int, const std::string&, PlayStream*) {
      return grpc::Status(code, details);
    });
    std::string address;
    auto server = serve_scripted(referee, &address);
    KeyBots bots;
    const Outcome got = capture([&] { return run(bots.factory(), key_settings(address, 1, "")); });
    const std::string want = "the referee at " + address + " ended the stream: " + name + ": " +
                             details + " (" + hint + ")";
    CHECK(got.code == kExitFailed);
    CHECK(referee.attempts == 1);  // no retry
    CHECK(got.lines.size() == 1 && got.lines[0] == want);
    CHECK(bots.made.empty());
    if (got.lines.size() != 1 || got.lines[0] != want)
      std::cerr << details << ": " << (got.lines.empty() ? "no line" : got.lines[0]) << "\n";
    server->Shutdown();
  }
}

void test_key_revoked_between_matches() {
  ScriptedReferee referee([](int attempt, const std::string&, PlayStream* stream) {
    if (attempt > 1)
      return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                          "key_revoked: the organiser revoked the key of entrant 'alice'");
    key_accepted(stream);
    if (!key_match(stream, "m1", 0)) return kBadDecision;
    return grpc::Status(grpc::StatusCode::UNAVAILABLE, "gone");
  });
  std::string address;
  auto server = serve_scripted(referee, &address);
  KeyBots bots;
  const Outcome got = capture([&] { return run(bots.factory(), key_settings(address, 1, "")); });
  CHECK(got.code == kExitFailed);
  CHECK(got.lines.size() == 1 &&
        got.lines[0].find("PERMISSION_DENIED: key_revoked: ") != std::string::npos);
  CHECK(bots.made.size() == 1 && bots.made[0]->over);
  server->Shutdown();
}

void test_key_stream_ended_mid_match() {
  ScriptedReferee referee([](int, const std::string&, PlayStream* stream) {
    key_accepted(stream);
    welcome_to(stream, "m1", 0);
    return grpc::Status::OK;  // the match not over
  });
  std::string address;
  auto server = serve_scripted(referee, &address);
  KeyBots bots;
  const Outcome got = capture([&] { return run(bots.factory(), key_settings(address, 1, "")); });
  CHECK(got.code == kExitFailed);
  CHECK(got.lines.size() == 1 &&
        got.lines[0] == "the referee ended the stream before match m1 was over");
  server->Shutdown();
}

void test_key_request_before_a_welcome() {
  ScriptedReferee referee([](int, const std::string&, PlayStream* stream) {
    key_accepted(stream);
    send_request(stream);
    v1::PlayRequest in;
    stream->Read(&in);  // the bot leaves
    return grpc::Status::OK;
  });
  std::string address;
  auto server = serve_scripted(referee, &address);
  KeyBots bots;
  const Outcome got = capture([&] { return run(bots.factory(), key_settings(address, 1, "")); });
  CHECK(got.code == kExitFailed && bots.made.empty());
  CHECK(got.lines.size() == 1 && got.lines[0].find("outside any match") != std::string::npos);
  server->Shutdown();
}

// What settings_from_env makes of these variables (the rest unset): "streams N" or the error.
std::string key_env(const char* key, const char* ticket, const char* streams) {
  setenv("TAVOLO_REFEREE", "127.0.0.1:1", 1);
  for (const auto& [name, value] :
       {std::pair{"TAVOLO_KEY", key}, {"TAVOLO_TICKET", ticket}, {"TAVOLO_STREAMS", streams}}) {
    if (value) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  std::string got;
  try {
    const Settings s = settings_from_env();
    got = "key " + s.key + ", " + std::to_string(s.tickets.size()) + " tickets, streams " +
          std::to_string(s.streams);
  } catch (const ConfigError& e) {
    got = std::string("error: ") + e.what();
  }
  for (const char* name : {"TAVOLO_REFEREE", "TAVOLO_KEY", "TAVOLO_TICKET", "TAVOLO_STREAMS"})
    unsetenv(name);
  return got;
}

void test_key_settings() {
  CHECK(key_env(" kk ", nullptr, nullptr) == "key kk, 0 tickets, streams 2");
  CHECK(key_env("kk", nullptr, " 3 ") == "key kk, 0 tickets, streams 3");
  for (const char* bad : {"0", "-1", "1.5", "two", "+2", "99999999999"}) {
    const std::string got = key_env("kk", nullptr, bad);
    CHECK(got.rfind("error: TAVOLO_STREAMS must be a whole number >= 1", 0) == 0);
  }
  CHECK(key_env("kk", "tk", nullptr).rfind("error: both TAVOLO_TICKET and TAVOLO_KEY are set", 0) == 0);
  CHECK(key_env(nullptr, nullptr, nullptr).rfind("error: no ticket or key", 0) == 0);
  // With tickets, each ticket is one stream: TAVOLO_STREAMS does not matter.
  CHECK(key_env(nullptr, "ta,tb", "5") == "key , 2 tickets, streams 5");
}

void test_key_and_ticket_is_a_usage_error() {
  ScriptedReferee referee([](int, const std::string& ticket, PlayStream* stream) {
    return one_request_match(ticket, stream);
  });
  std::string address;
  auto server = serve_scripted(referee, &address);
  KeyBots bots;
  Settings both = key_settings(address, 1, "");
  both.tickets = {"tk"};
  const Outcome got = capture([&] { return run(bots.factory(), both); });
  CHECK(got.code == kExitUsage && got.lines.size() == 1);
  CHECK(got.lines.size() == 1 && got.lines[0].rfind("both TAVOLO_TICKET and TAVOLO_KEY", 0) == 0);
  // One bot cannot play a key's matches: each needs a fresh one.
  Played log;
  RecordingBot bot(log, 0);
  const Outcome one = capture([&] { return run(bot, key_settings(address, 1, "")); });
  CHECK(one.code == kExitUsage && one.lines.size() == 1 &&
        one.lines[0].find("bot factory") != std::string::npos);
  CHECK(referee.attempts == 0 && bots.made.empty());  // nothing played
  server->Shutdown();
}


// --- compact observations -----------------------------------------------------------------

// Standard base64 (RFC 4648, with padding) to bytes; throws on anything else.
std::string from_base64(const std::string& text) {
  static const std::string digits =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  if (text.size() % 4 != 0) throw std::runtime_error("base64 of a length not a multiple of 4");
  std::string out;
  for (std::size_t i = 0; i < text.size(); i += 4) {
    std::uint32_t group = 0;
    int pad = 0;
    for (std::size_t j = 0; j < 4; ++j) {
      const char c = text[i + j];
      std::size_t value = 0;
      if (c == '=' && i + 4 == text.size() && j >= 2) {
        ++pad;
      } else if (pad > 0 || (value = digits.find(c)) == std::string::npos) {
        throw std::runtime_error(std::string("not base64: '") + c + "'");
      }
      group = (group << 6) | static_cast<std::uint32_t>(value);
    }
    out += static_cast<char>(group >> 16);
    if (pad < 2) out += static_cast<char>((group >> 8) & 0xff);
    if (pad < 1) out += static_cast<char>(group & 0xff);
  }
  return out;
}

// The value of `"key": ...` in a fixture line (a number, or a string's contents), or "".
std::string json_value(const std::string& line, const std::string& key) {
  const std::regex pattern("\"" + key + "\"\\s*:\\s*(\"([^\"]*)\"|([0-9]+))");
  std::smatch m;
  if (!std::regex_search(line, m, pattern)) return "";
  return m[2].matched ? m[2].str() : m[3].str();
}

bool same(const Observation& a, const Observation& b) {
  return google::protobuf::util::MessageDifferencer::Equals(a, b);
}

void test_compact_fixture() {
  namespace fs = std::filesystem;
  const fs::path folder = TAVOLO_COMPACT_FIXTURES;
  std::vector<fs::path> files;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(folder, error)) {
    if (entry.path().extension() == ".jsonl") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) std::cerr << "no .jsonl files in " << folder << "\n";
  CHECK(!files.empty());
  int compact_seen = 0;
  for (const auto& file : files) {
    std::ifstream in(file);
    std::map<std::string, CompactMerger> streams;  // per slot
    int number = 0;
    int mismatches = 0;
    for (std::string line; std::getline(in, line);) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      ++number;
      const std::string where = file.filename().string() + " line " + std::to_string(number);
      const std::string slot = json_value(line, "slot");
      Observation compact;
      Observation full;
      try {
        if (slot.empty() || !compact.ParseFromString(from_base64(json_value(line, "compact"))) ||
            !full.ParseFromString(from_base64(json_value(line, "full")))) {
          throw std::runtime_error("no slot, compact or full Observation");
        }
        compact_seen += compact.compact() ? 1 : 0;
        streams[slot].complete(compact);
      } catch (const std::exception& e) {
        std::cerr << where << ": " << e.what() << "\n";
        ++mismatches;
        continue;
      }
      if (!same(compact, full)) {
        if (mismatches == 0) {
          std::cerr << where << " (request " << json_value(line, "request_id")
                    << "): merged\n" << compact.DebugString() << "full\n" << full.DebugString();
        }
        ++mismatches;
      }
    }
    if (mismatches) std::cerr << file << ": " << mismatches << " of " << number << " lines differ\n";
    CHECK(number > 0 && mismatches == 0);
  }
  CHECK(compact_seen > 0);  // else the fixture tests no merge at all
}

v1::Trick make_trick(const std::vector<std::string>& cards) {
  v1::Trick trick;
  for (std::size_t i = 0; i < cards.size(); ++i) {
    auto* play = trick.add_plays();
    play->set_seat(static_cast<std::uint32_t>(i));
    play->mutable_action()->set_card(cards[i]);
    play->mutable_action()->set_text(cards[i]);
  }
  return trick;
}

Observation deal_of(std::uint32_t game, std::uint32_t deal) {
  Observation o;
  o.set_seat(1);
  o.set_game(game);
  o.set_deal(deal);
  o.set_players(4);
  o.add_hand("3D");
  return o;
}

void test_compact_merge_by_hand() {
  CompactMerger merger;
  Observation first = deal_of(1, 1);
  *first.add_tricks() = make_trick({"AS", "4S", "5S", "6S"});
  first.add_declarations()->set_declaration("napoli-D");
  first.add_draws()->set_card("7C");
  first.mutable_calabresella()->set_soloist(-1);
  first.mutable_calabresella()->add_bids()->set_bid("pass");
  Observation got = first;
  merger.complete(got);
  CHECK(same(got, first));  // a complete observation is taken as it is

  Observation second = deal_of(1, 1);
  second.set_compact(true);
  second.set_hand(0, "2C");
  *second.add_tricks() = make_trick({"3C", "4C", "5C", "6C"});
  second.add_draws()->set_card("KB");
  second.mutable_calabresella()->set_soloist(1);
  second.mutable_calabresella()->set_contract("solo");
  second.mutable_calabresella()->add_bids()->set_bid("solo");
  merger.complete(second);
  Observation expected = first;
  expected.set_hand(0, "2C");
  *expected.add_tricks() = make_trick({"3C", "4C", "5C", "6C"});
  expected.add_draws()->set_card("KB");
  expected.mutable_calabresella()->set_soloist(1);
  expected.mutable_calabresella()->set_contract("solo");
  expected.mutable_calabresella()->add_bids()->set_bid("solo");
  CHECK(same(second, expected) && !second.compact());

  // The next compact one adds to the merged one; without a view it gets none.
  Observation third = deal_of(1, 1);
  third.set_compact(true);
  *third.add_tricks() = make_trick({"KD", "QD", "JD", "7D"});
  merger.complete(third);
  CHECK(third.tricks_size() == 3 && third.draws_size() == 2 && third.declarations_size() == 1);
  CHECK(!third.has_calabresella());

  // A complete observation of a new deal replaces everything.
  Observation new_deal = deal_of(1, 2);
  new_deal.set_hand(0, "AC");
  Observation replaced = new_deal;
  merger.complete(replaced);
  CHECK(same(replaced, new_deal));
  Observation next = deal_of(1, 2);
  next.clear_hand();
  next.set_compact(true);
  *next.add_tricks() = make_trick({"AC", "2C", "3C", "4C"});
  merger.complete(next);
  CHECK(next.tricks_size() == 1 && next.tricks(0).plays(0).action().card() == "AC");
  CHECK(next.declarations_size() == 0 && next.draws_size() == 0);
}

// The CompactError's text for `observation` after `before` (nothing, when null), or "".
std::string compact_refusal(const Observation* before, Observation observation) {
  CompactMerger merger;
  if (before) {
    Observation copy = *before;
    merger.complete(copy);
  }
  try {
    merger.complete(observation);
  } catch (const CompactError& e) {
    return e.what();
  }
  return "";
}

void test_compact_refusals() {
  Observation compact = deal_of(2, 1);
  compact.set_compact(true);
  CHECK(compact_refusal(nullptr, compact) ==
        "the referee sent a compact observation (game 2, deal 1) as the first of this stream, "
        "with nothing to add it to");
  Observation other_deal = deal_of(2, 2);
  other_deal.set_compact(true);
  const Observation before = deal_of(2, 1);
  CHECK(compact_refusal(&before, other_deal) ==
        "the referee sent a compact observation of game 2, deal 2 after one of game 2, deal 1 "
        "(a new deal must come complete)");
  CHECK(compact_refusal(&before, compact).empty());
  CompactMerger merger;
  Observation copy = before;
  merger.complete(copy);
  merger.reset();
  bool threw = false;
  try {
    merger.complete(compact);
  } catch (const CompactError&) {
    threw = true;
  }
  CHECK(threw);
}

// A ticket's match of one request per observation (the first with a Welcome), then MatchOver.
grpc::Status observations_match(const std::vector<Observation>& observations, PlayStream* stream) {
  for (std::size_t i = 0; i < observations.size(); ++i) {
    v1::PlayResponse out;
    if (i == 0) out.add_events()->mutable_welcome()->set_match_id("m");
    out.mutable_request()->set_request_id(i + 1);
    out.mutable_request()->set_deadline_ms(1000);
    *out.mutable_request()->mutable_observation() = observations[i];
    add_play(*out.mutable_request(), "3D");
    stream->Write(out);
    v1::PlayRequest in;
    if (!stream->Read(&in) || in.decision().request_id() != i + 1)
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "bad decision");
  }
  v1::PlayResponse over;
  over.add_events()->mutable_match_over()->set_match_id("m");
  stream->Write(over);
  return grpc::Status::OK;
}

class ObservingBot : public Bot {
 public:
  int choose(const Turn& turn) override {
    seen.push_back(turn.observation());
    return static_cast<int>(turn.legal()[0].id());
  }
  std::vector<Observation> seen;
};

void test_run_asks_for_compact_observations() {
  Observation t1 = deal_of(1, 1);
  *t1.add_tricks() = make_trick({"AS", "4S", "5S", "6S"});
  Observation t2 = deal_of(1, 1);
  t2.set_compact(true);
  *t2.add_tricks() = make_trick({"3C", "4C", "5C", "6C"});
  Observation d2 = deal_of(1, 2);
  Observation d2t = deal_of(1, 2);
  d2t.set_compact(true);
  *d2t.add_tricks() = make_trick({"KD", "QD", "JD", "7D"});
  const std::vector<Observation> sent = {t1, t2, d2, d2t};
  ScriptedReferee referee([&](int, const std::string&, PlayStream* stream) {
    return observations_match(sent, stream);
  });
  std::string address;
  auto server = serve_scripted(referee, &address);
  ObservingBot bot;
  const Outcome got = capture([&] { return run(bot, settings_for(address, {"tk"}, "", 1)); });
  CHECK(got.code == kExitOk && got.lines.empty());
  {
    std::lock_guard<std::mutex> guard(referee.hellos_lock);
    CHECK(referee.hellos.size() == 1 && referee.hellos[0].compact_observations());
  }
  Observation both = t1;
  *both.add_tricks() = make_trick({"3C", "4C", "5C", "6C"});
  Observation d2_full = d2;
  *d2_full.add_tricks() = make_trick({"KD", "QD", "JD", "7D"});
  CHECK(bot.seen.size() == 4);
  if (bot.seen.size() == 4) {
    CHECK(same(bot.seen[0], t1) && same(bot.seen[1], both) && same(bot.seen[2], d2) &&
          same(bot.seen[3], d2_full));
  }

  // A compact observation of another deal: one line, the bot is not asked, exit 1.
  Observation wrong = deal_of(1, 2);
  wrong.set_compact(true);
  const std::vector<Observation> broken = {t1, wrong};
  ScriptedReferee bad([&](int, const std::string&, PlayStream* stream) {
    return observations_match(broken, stream);
  });
  std::string bad_address;
  auto bad_server = serve_scripted(bad, &bad_address);
  ObservingBot bot2;
  const Outcome failed =
      capture([&] { return run(bot2, settings_for(bad_address, {"tk"}, "", 1)); });
  CHECK(failed.code == kExitFailed && bot2.seen.size() == 1);
  CHECK((failed.lines == std::vector<std::string>{
             "the referee sent a compact observation of game 1, deal 2 after one of game 1, "
             "deal 1 (a new deal must come complete); this stream stops"}));
  bad_server->Shutdown();
  server->Shutdown();
}

}  // namespace

int main() {
  const std::vector<std::pair<const char*, std::function<void()>>> tests = {
      {"cards", test_cards},
      {"turn", test_turn},
      {"bot declares then ends", test_bot_declares_then_ends},
      {"bot leads the cheapest quiet card", test_bot_leads_cheapest_quiet_card},
      {"bot takes the trick cheaply", test_bot_takes_trick_cheaply},
      {"bot throws the cheapest card", test_bot_throws_cheapest_when_it_cannot_win},
      {"bot with only signalled plays", test_bot_only_signalled_plays},
      {"bot with unknown kinds", test_bot_unknown_kinds},
      {"briscola cards", test_briscola_cards},
      {"bot plays briscola", test_bot_plays_briscola},
      {"referee addresses: host:port or unix:/path", test_referee_addresses},
      {"run over a Unix-domain socket", test_run_over_unix_socket},
      {"run over TCP", test_run_over_tcp},
      {"ticket_used, wrong_socket, process_gone, unknown_ticket: no retry",
       test_ticket_refusals_end_the_stream_at_once},
      {"ticket_used after a drop: no retry", test_ticket_used_after_a_drop_ends_the_stream},
      {"seat_taken is retried", test_seat_taken_is_retried},
      {"seat_taken gives up after the reconnect window",
       test_seat_taken_gives_up_after_the_reconnect_window},
      {"one bot per ticket", test_one_bot_per_ticket},
      {"run(Bot&) refuses several tickets", test_one_bot_cannot_play_several_tickets},
      {"seeds: settings, streams, games", test_seeds},
      {"tls_expected: TCP, no CA, closed at once, UNAVAILABLE", test_tls_expected},
      {"a TLS referee tells a plain-text bot after three closes", test_tls_referee_tells_a_plain_text_bot_after_three_closes},
      {"a close then refused connections are retried", test_a_close_then_refused_connections_are_retried},
      {"a Unix socket closing at once is retried", test_unix_socket_closing_at_once_is_retried},
      {"key: two matches on one stream, a fresh bot each", test_key_two_matches_on_one_stream},
      {"key: a reconnection mid-match keeps the bot", test_key_reconnection_mid_match_keeps_the_bot},
      {"key: a reconnection between matches", test_key_reconnection_between_matches},
      {"key: a seat taken over by the other stream keeps its bot",
       test_key_seat_taken_over_by_another_stream},
      {"key: two streams by default, and their seeds", test_key_opens_two_streams_by_default},
      {"key: unknown_key, key_revoked, too_many_streams: no retry",
       test_key_refusals_end_the_stream_at_once},
      {"key: key_revoked between matches", test_key_revoked_between_matches},
      {"key: a stream ended mid-match fails", test_key_stream_ended_mid_match},
      {"key: a request before a Welcome fails", test_key_request_before_a_welcome},
      {"key: settings (TAVOLO_KEY, TAVOLO_STREAMS)", test_key_settings},
      {"key: with a ticket too, or with run(Bot&): usage error", test_key_and_ticket_is_a_usage_error},
      {"compact: merging the fixture's observations gives the full ones", test_compact_fixture},
      {"compact: items appended, a new deal replaces everything", test_compact_merge_by_hand},
      {"compact: nothing to add to is refused", test_compact_refusals},
      {"compact: run() asks for them, the bot sees complete ones", test_run_asks_for_compact_observations},
  };
  for (const auto& [name, test] : tests) {
    const int before = failures;
    test();
    std::cout << (failures == before ? "ok   " : "FAIL ") << name << "\n";
  }
  std::cout << (failures ? "FAILED: " + std::to_string(failures) + " checks\n" : "all passed\n");
  return failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
