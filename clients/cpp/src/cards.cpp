#include "tavolo/cards.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace tavolo {
namespace {

constexpr std::array<int, 10> kPointsByRank = {1, 1, 3, 1, 1, 1, 0, 0, 0, 0};
// Briscola's strength and whole points of each rank, in kRanks order.
constexpr std::array<int, 10> kBriscolaStrengthByRank = {8, 0, 9, 7, 6, 5, 4, 3, 2, 1};
constexpr std::array<int, 10> kBriscolaPointsByRank = {10, 0, 11, 4, 3, 2, 0, 0, 0, 0};
constexpr std::array<std::string_view, 7> kSignalNames = {
    "", "busso", "volo", "striscio", "ribusso", "striscio-lungo", "striscio-corto"};

// Rank index and suit index of `text`, or false.
bool parse(std::string_view text, int& rank, int& suit) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  if (text.size() != 2) return false;
  auto r = kRanks.find(static_cast<char>(std::toupper(static_cast<unsigned char>(text[0]))));
  auto s = kSuits.find(static_cast<char>(std::toupper(static_cast<unsigned char>(text[1]))));
  if (r == std::string_view::npos || s == std::string_view::npos) return false;
  rank = static_cast<int>(r);
  suit = static_cast<int>(s);
  return true;
}

void parse_or_throw(std::string_view text, int& rank, int& suit) {
  if (!parse(text, rank, suit)) {
    throw BadCard("bad card '" + std::string(text) +
                  "': write rank (32AKQJ7654) then suit (DCSB), e.g. 3D");
  }
}

}  // namespace

bool is_card(std::string_view text) {
  int rank = 0, suit = 0;
  return parse(text, rank, suit);
}

std::string canonical_card(std::string_view text) {
  int rank = 0, suit = 0;
  parse_or_throw(text, rank, suit);
  return {kRanks[rank], kSuits[suit]};
}

int rank_of(std::string_view card) {
  int rank = 0, suit = 0;
  parse_or_throw(card, rank, suit);
  return rank;
}

char suit_of(std::string_view card) {
  int rank = 0, suit = 0;
  parse_or_throw(card, rank, suit);
  return kSuits[suit];
}

int strength(std::string_view card) { return 9 - rank_of(card); }

int points_in_thirds(std::string_view card) { return kPointsByRank[rank_of(card)]; }

bool beats(std::string_view a, std::string_view b, char led_suit) {
  if (suit_of(a) != led_suit) return false;
  return suit_of(b) != led_suit || rank_of(a) < rank_of(b);
}

std::optional<std::string> winning_card(const std::vector<std::string>& cards,
                                        std::optional<char> led_suit) {
  std::optional<std::string> best;
  for (const auto& card : cards) {
    if (!led_suit) led_suit = suit_of(card);
    if (suit_of(card) == *led_suit && (!best || rank_of(card) < rank_of(*best))) {
      best = canonical_card(card);
    }
  }
  return best;
}

int briscola_strength(std::string_view card) { return kBriscolaStrengthByRank[rank_of(card)]; }

int briscola_points(std::string_view card) { return kBriscolaPointsByRank[rank_of(card)]; }

bool briscola_beats(std::string_view a, std::string_view b, char led_suit, char trump) {
  const bool stronger = briscola_strength(a) > briscola_strength(b);
  if (suit_of(a) == trump) return suit_of(b) != trump || stronger;
  return suit_of(b) != trump && suit_of(a) == led_suit && (suit_of(b) != led_suit || stronger);
}

std::optional<std::string> briscola_winning_card(const std::vector<std::string>& cards, char trump) {
  std::optional<std::string> best;
  for (const auto& card : cards) {
    if (!best || briscola_beats(card, *best, suit_of(cards.front()), trump)) best = canonical_card(card);
  }
  return best;
}

std::vector<std::string> sort_cards(std::vector<std::string> cards) {
  auto key = [](const std::string& c) { return kSuits.find(suit_of(c)) * 10 + rank_of(c); };
  std::stable_sort(cards.begin(), cards.end(),
                   [&](const std::string& a, const std::string& b) { return key(a) < key(b); });
  return cards;
}

std::vector<std::string> all_cards() {
  std::vector<std::string> out;
  for (char suit : kSuits)
    for (char rank : kRanks) out.push_back({rank, suit});
  return out;
}

std::string_view signal_name(int signal) {
  if (signal < 0 || signal >= static_cast<int>(kSignalNames.size())) return "";
  return kSignalNames[signal];
}

}  // namespace tavolo
