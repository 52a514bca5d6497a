// Unit tests of the card helpers, Turn, the example bot's choices on hand-made requests, and
// run() against a fake referee on a Unix-domain socket (unix:/path) and on TCP (host:port).
// Run: cmake -S . -B build-tests -DTAVOLO_BUILD_TESTS=ON && cmake --build build-tests -j 2
//      && ctest --test-dir build-tests --output-on-failure
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "example_bot.hpp"
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

void test_run_over_unix_socket() {
  const char* tmp = std::getenv("TMPDIR");
  std::string folder = std::string(tmp && *tmp ? tmp : "/tmp") + "/tavolo-cpp-XXXXXX";
  if (!mkdtemp(folder.data())) {
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
      {"referee addresses: host:port or unix:/path", test_referee_addresses},
      {"run over a Unix-domain socket", test_run_over_unix_socket},
      {"run over TCP", test_run_over_tcp},
  };
  for (const auto& [name, test] : tests) {
    const int before = failures;
    test();
    std::cout << (failures == before ? "ok   " : "FAIL ") << name << "\n";
  }
  std::cout << (failures ? "FAILED: " + std::to_string(failures) + " checks\n" : "all passed\n");
  return failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
