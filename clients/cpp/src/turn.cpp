#include "tavolo/turn.hpp"

#include <sstream>

#include "tavolo/cards.hpp"

namespace tavolo {

std::optional<std::string> card_of(const Action& action) {
  if (!action.card().empty()) return is_card(action.card()) ? canonical_card(action.card()) : action.card();
  // A referee may fill only `text` ("AS volo"); the card is its first word then.
  if (action.kind() == v1::ACTION_KIND_PLAY || action.kind() == v1::ACTION_KIND_UNSPECIFIED) {
    std::istringstream words(action.text());
    std::string first;
    if (words >> first && is_card(first)) return canonical_card(first);
  }
  return std::nullopt;
}

bool is_play(const Action& action) {
  if (action.kind() == v1::ACTION_KIND_PLAY) return true;
  return action.kind() == v1::ACTION_KIND_UNSPECIFIED && card_of(action).has_value();
}

bool is_declaration(const Action& action) {
  return action.kind() == v1::ACTION_KIND_DECLARE ||
         (action.kind() == v1::ACTION_KIND_UNSPECIFIED && action.text().rfind("declare ", 0) == 0);
}

Turn::Turn(const DecisionRequest& request, int stream_index)
    : request_(&request), stream_index_(stream_index) {}

int Turn::seat() const { return static_cast<int>(observation().seat()); }

int Turn::players() const {
  return observation().players() ? static_cast<int>(observation().players()) : 4;
}

std::optional<int> Turn::partner() const {
  // Each seat alone (a tre, a due, ciapanò, calabresella) has no partner; a referee older
  // than the sides field sends 0, and then four seats mean partners.
  const auto sides = observation().sides();
  if (players() != 4 || (sides != 0 && sides != 2)) return std::nullopt;
  return (seat() + 2) % 4;
}

std::vector<std::string> Turn::hand() const {
  return {observation().hand().begin(), observation().hand().end()};
}

std::vector<TrickCard> Turn::trick() const {
  std::vector<TrickCard> out;
  for (const auto& play : observation().trick()) {
    if (auto card = card_of(play.action())) out.push_back({play.seat(), *card, play.action().signal()});
  }
  return out;
}

std::optional<char> Turn::led_suit() const {
  for (const auto& play : observation().trick()) {
    if (auto card = card_of(play.action()); card && is_card(*card)) return suit_of(*card);
  }
  return std::nullopt;
}

std::optional<std::string> Turn::trump() const {
  if (!is_card(observation().trump())) return std::nullopt;
  return canonical_card(observation().trump());
}

bool Turn::is_leading() const {
  if (observation().trick_size() != 0) return false;
  for (const auto& action : legal())
    if (is_play(action)) return true;
  return false;
}

std::vector<std::string> Turn::played_cards() const {
  std::vector<std::string> out;
  for (const auto& trick : observation().tricks())
    for (const auto& play : trick.plays())
      if (auto card = card_of(play.action())) out.push_back(*card);
  for (const auto& play : observation().trick())
    if (auto card = card_of(play.action())) out.push_back(*card);
  return out;
}

std::vector<Action> Turn::plays() const {
  std::vector<Action> out;
  for (const auto& action : legal())
    if (is_play(action)) out.push_back(action);
  return out;
}

std::vector<Action> Turn::declarations() const {
  std::vector<Action> out;
  for (const auto& action : legal())
    if (is_declaration(action)) out.push_back(action);
  return out;
}

std::vector<Action> Turn::of_kind(ActionKind kind) const {
  std::vector<Action> out;
  for (const auto& action : legal())
    if (action.kind() == kind) out.push_back(action);
  return out;
}

std::optional<Action> Turn::find(std::string_view text) const {
  for (const auto& action : legal())
    if (action.text() == text) return action;
  return std::nullopt;
}

}  // namespace tavolo
