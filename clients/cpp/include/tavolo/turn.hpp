// The bot's view of one decision: a thin read-only wrapper around a DecisionRequest.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tavolo/v1/referee.pb.h"

namespace tavolo {

// The generated protobuf messages a bot meets most (namespace tavolo::v1).
using Action = v1::Action;
using ActionKind = v1::ActionKind;
using DecisionRequest = v1::DecisionRequest;
using Event = v1::Event;
using Observation = v1::Observation;
using Signal = v1::Signal;

// One card of the current trick.
struct TrickCard {
  std::uint32_t seat = 0;
  std::string card;
  Signal signal = v1::SIGNAL_UNSPECIFIED;
};

// The card a play action plays ("AS"), or nullopt for any other action.
std::optional<std::string> card_of(const Action& action);
// Whether the action plays a card.
bool is_play(const Action& action);
// Whether the action declares a combination.
bool is_declaration(const Action& action);

class Turn {
 public:
  explicit Turn(const DecisionRequest& request, int stream_index = 0);

  // -- the request as sent --
  const DecisionRequest& request() const { return *request_; }
  const Observation& observation() const { return request_->observation(); }
  std::uint64_t request_id() const { return request_->request_id(); }
  std::uint32_t deadline_ms() const { return request_->deadline_ms(); }
  std::uint32_t time_bank_ms() const { return request_->time_bank_ms(); }
  std::uint32_t attempts_left() const { return request_->attempts_left(); }
  // Every legal action, in the referee's order; choose() returns one of their ids.
  const google::protobuf::RepeatedPtrField<Action>& legal() const {
    return request_->legal_actions();
  }
  // Which ticket of TAVOLO_TICKET this turn is for (0 with one ticket).
  int stream_index() const { return stream_index_; }

  // -- conveniences --
  int seat() const;                // this game's seat (seats rotate between games)
  int players() const;             // 4, or 3 in tressette a tre
  std::optional<int> partner() const;  // (seat + 2) % 4; nullopt with 3 players
  std::vector<std::string> hand() const;
  std::vector<TrickCard> trick() const;  // the current trick so far, in order
  std::optional<char> led_suit() const;  // nullopt when nobody has played to the trick
  // The card whose suit is trump (Briscola, Tressette con la briscola); nullopt without one.
  std::optional<std::string> trump() const;
  bool is_leading() const;               // this seat plays the trick's first card now
  std::vector<std::string> played_cards() const;  // every card of this deal so far

  std::vector<Action> plays() const;         // legal plays (a card once per signal it may carry)
  std::vector<Action> declarations() const;  // legal declarations
  std::vector<Action> of_kind(ActionKind kind) const;
  // The legal action with exactly this text ("AS volo", "end-declarations"), or nullopt.
  std::optional<Action> find(std::string_view text) const;

 private:
  const DecisionRequest* request_;
  int stream_index_;
};

}  // namespace tavolo
