// Card text helpers: ranks, suits, strength, points and who beats whom.
//
// A card is text, rank then suit: "3D", "QB", "AS". Ranks, strongest first in Tressette,
// are 3 2 A K Q J 7 6 5 4 (Q the cavallo, J the fante); suits are D C S B (denari, coppe,
// spade, bastoni). Tressette has no trumps: only a card of the suit led can win a trick.
// Briscola has its own order (A 3 K Q J 7 6 5 4 2), its own points and a trump suit: the
// briscola_ functions.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tavolo {

// Rank letters, strongest first.
inline constexpr std::string_view kRanks = "32AKQJ7654";
// Suit letters: denari, coppe, spade, bastoni.
inline constexpr std::string_view kSuits = "DCSB";

// Text that names no card, given to a helper that needs one.
class BadCard : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Whether `text` names a card (case and surrounding spaces ignored).
bool is_card(std::string_view text);
// The card as the protocol spells it ("as" -> "AS"); throws BadCard for text that is no card.
std::string canonical_card(std::string_view text);
// Rank index: 0 for the 3 (strongest) to 9 for the 4 (weakest).
int rank_of(std::string_view card);
// Suit letter: suit_of("QB") == 'B'.
char suit_of(std::string_view card);
// 9 for the 3 down to 0 for the 4: higher is stronger in Tressette.
int strength(std::string_view card);
// Tressette value in thirds of a point: the ace 3; 3, 2, K, Q, J 1; 7, 6, 5, 4 nothing.
int points_in_thirds(std::string_view card);
// Whether `a` beats `b` in a Tressette trick led in `led_suit`.
bool beats(std::string_view a, std::string_view b, char led_suit);
// The card that wins among `cards` in Tressette (led suit: the first card's unless given); nullopt if none.
std::optional<std::string> winning_card(const std::vector<std::string>& cards,
                                        std::optional<char> led_suit = std::nullopt);
// 9 for the ace down to 0 for the 2: higher is stronger in Briscola.
int briscola_strength(std::string_view card);
// Briscola value in whole points: the ace 11, the 3 10, K 4, Q 3, J 2, the rest nothing.
int briscola_points(std::string_view card);
// Whether `a` beats `b`, the best so far of a Briscola trick led in `led_suit` with trump
// suit `trump`: the higher trump wins, else the higher card of the suit led.
bool briscola_beats(std::string_view a, std::string_view b, char led_suit, char trump);
// The card that wins among `cards` in Briscola (led suit: the first card's); nullopt if none.
std::optional<std::string> briscola_winning_card(const std::vector<std::string>& cards, char trump);
// Cards in deck order: by suit (D C S B), strongest first within a suit.
std::vector<std::string> sort_cards(std::vector<std::string> cards);
// The 40 cards in deck order.
std::vector<std::string> all_cards();
// Name of a Signal enum value as action texts write it ("volo"); "" for none or unknown.
std::string_view signal_name(int signal);

}  // namespace tavolo
