#include "example_bot.hpp"

#include <algorithm>
#include <tuple>
#include <utility>
#include <vector>

using tavolo::Action;

namespace {

// Cheapest first: fewest points (in thirds), then weakest.
std::pair<int, int> cost(const Action& play) {
  const std::string card = tavolo::card_of(play).value_or("");
  return {tavolo::points_in_thirds(card), tavolo::strength(card)};
}

const Action& cheapest(const std::vector<Action>& plays) {
  return *std::min_element(plays.begin(), plays.end(), [](const Action& a, const Action& b) {
    return cost(a) < cost(b);
  });
}

// The Briscola play among `plays`: the cheapest that takes the trick, else the cheapest;
// cheapest is any card before a trump, then fewest points, then weakest.
const Action& choose_briscola(const tavolo::Turn& turn, const std::vector<Action>& plays) {
  // Briscola always turns a trump up; '-', a suit of no card, would stand for none.
  const char trump = turn.trump() ? tavolo::suit_of(*turn.trump()) : '-';
  auto briscola_cost = [trump](const Action& play) {
    const std::string card = tavolo::card_of(play).value_or("");
    return std::tuple(tavolo::suit_of(card) == trump, tavolo::briscola_points(card),
                      tavolo::briscola_strength(card));
  };
  auto cheapest_of = [&](const std::vector<Action>& among) -> const Action& {
    return *std::min_element(among.begin(), among.end(), [&](const Action& a, const Action& b) {
      return briscola_cost(a) < briscola_cost(b);
    });
  };
  std::vector<std::string> trick;
  for (const auto& played : turn.trick()) trick.push_back(played.card);
  if (auto best = tavolo::briscola_winning_card(trick, trump)) {
    std::vector<Action> winners;
    for (const Action& play : plays)
      if (tavolo::briscola_beats(*tavolo::card_of(play), *best, tavolo::suit_of(trick.front()), trump))
        winners.push_back(play);
    if (!winners.empty()) return cheapest_of(winners);
  }
  return cheapest_of(plays);
}

}  // namespace

int ExampleBot::choose(const tavolo::Turn& turn) {
  if (turn.legal().empty()) return 0;  // nothing to choose from (never happens in v1)

  if (auto declarations = turn.declarations(); !declarations.empty())
    return static_cast<int>(declarations.front().id());
  if (auto end = turn.of_kind(tavolo::v1::ACTION_KIND_END_DECLARATIONS); !end.empty())
    return static_cast<int>(end.front().id());

  // Plays whose card this SDK can read; each card may come once per signal it may carry.
  std::vector<Action> plays, quiet;
  for (const Action& play : turn.plays()) {
    auto card = tavolo::card_of(play);
    if (!card || !tavolo::is_card(*card)) continue;
    plays.push_back(play);
    if (play.signal() == tavolo::v1::SIGNAL_UNSPECIFIED) quiet.push_back(play);
  }
  if (quiet.empty()) quiet = plays;
  const bool briscola = game_ == "briscola" || game_ == "briscola-a-quattro";
  if (!quiet.empty() && briscola) return static_cast<int>(choose_briscola(turn, quiet).id());
  if (!quiet.empty()) {
    if (auto led = turn.led_suit()) {  // following: win the trick as cheaply as possible
      std::vector<std::string> cards;
      for (const auto& played : turn.trick()) cards.push_back(played.card);
      if (auto best = tavolo::winning_card(cards, led)) {
        std::vector<Action> winners;
        for (const Action& play : quiet)
          if (tavolo::beats(*tavolo::card_of(play), *best, *led)) winners.push_back(play);
        if (!winners.empty()) return static_cast<int>(cheapest(winners).id());
      }
    }
    return static_cast<int>(cheapest(quiet).id());  // leading, or cannot win: the cheapest card
  }

  // Something this bot does not know: the first legal action that is not a call-out.
  for (const Action& action : turn.legal())
    if (action.kind() != tavolo::v1::ACTION_KIND_CALL_OUT) return static_cast<int>(action.id());
  return static_cast<int>(turn.legal()[0].id());
}

void ExampleBot::on_event(const tavolo::Event& event) {
  if (event.has_match_started()) game_ = event.match_started().game();
}
