package tavolo

import "strings"

// Ranks are the rank letters, strongest first: the 3, the 2, the ace, the king, the
// cavallo (Q), the fante (J), then 7 6 5 4.
const Ranks = "32AKQJ7654"

// Suits are the suit letters: denari, coppe, spade, bastoni.
const Suits = "DCSB"

// signalNames are the Signal enum values as action texts write them ("" for none).
var signalNames = [...]string{"", "busso", "volo", "striscio", "ribusso", "striscio-lungo", "striscio-corto"}

// pointsByRank is each rank's value in thirds of a point, in Ranks order.
var pointsByRank = [...]int{1, 1, 3, 1, 1, 1, 0, 0, 0, 0}

// IsCard reports whether text is a card as the referee writes it: rank then suit, e.g. "3D".
func IsCard(text string) bool {
	return len(text) == 2 && strings.IndexByte(Ranks, text[0]) >= 0 && strings.IndexByte(Suits, text[1]) >= 0
}

// RankOf is the rank index of a card: 0 for the 3 (strongest) to 9 for the 4 (weakest),
// or -1 for text that is no card.
func RankOf(card string) int {
	if !IsCard(card) {
		return -1
	}
	return strings.IndexByte(Ranks, card[0])
}

// SuitOf is the suit letter of a card ('D', 'C', 'S' or 'B'), or 0 for text that is no card.
func SuitOf(card string) byte {
	if !IsCard(card) {
		return 0
	}
	return card[1]
}

// Strength is 9 for the 3 down to 0 for the 4: higher is stronger in Tressette. -1 for text
// that is no card.
func Strength(card string) int {
	if !IsCard(card) {
		return -1
	}
	return 9 - RankOf(card)
}

// Points is a card's value in Tressette, in thirds of a point: the ace 3; the 3, 2, K, Q and J 1 each;
// the 7, 6, 5 and 4 nothing (and 0 for text that is no card).
func Points(card string) int {
	if !IsCard(card) {
		return 0
	}
	return pointsByRank[RankOf(card)]
}

// Beats reports whether card a beats card b in a Tressette trick led in suit led. There
// are no trumps: only a card of the led suit can win, and among those the stronger one
// (BriscolaBeats is Briscola's).
func Beats(a, b string, led byte) bool {
	if !IsCard(a) || SuitOf(a) != led {
		return false
	}
	return SuitOf(b) != led || RankOf(a) < RankOf(b)
}

// WinningCard is the card that wins among cards in Tressette, the first card's suit being
// led; "" if there are no cards.
func WinningCard(cards []string) string {
	best := ""
	for _, card := range cards {
		if !IsCard(card) {
			continue
		}
		if best == "" || Beats(card, best, SuitOf(best)) {
			best = card
		}
	}
	return best
}

// BriscolaRanks are the rank letters in Briscola's order, strongest first: the ace, the 3,
// the king, the cavallo (Q), the fante (J), then 7 6 5 4 2.
const BriscolaRanks = "A3KQJ76542"

// briscolaPointsByRank is each rank's value in whole points, in BriscolaRanks order.
var briscolaPointsByRank = [...]int{11, 10, 4, 3, 2, 0, 0, 0, 0, 0}

// BriscolaStrength is 9 for the ace down to 0 for the 2: higher is stronger in Briscola.
// -1 for text that is no card.
func BriscolaStrength(card string) int {
	if !IsCard(card) {
		return -1
	}
	return 9 - strings.IndexByte(BriscolaRanks, card[0])
}

// BriscolaPoints is a card's value in Briscola, in whole points: the ace 11, the 3 10, K 4,
// Q 3, J 2, the rest nothing (and 0 for text that is no card).
func BriscolaPoints(card string) int {
	if !IsCard(card) {
		return 0
	}
	return briscolaPointsByRank[strings.IndexByte(BriscolaRanks, card[0])]
}

// BriscolaBeats reports whether card a beats card b, the best so far of a Briscola trick led
// in suit led with trump suit trump: the higher trump wins, else the higher card of the led
// suit (following suit is never required, and a card of a third suit never wins).
func BriscolaBeats(a, b string, led, trump byte) bool {
	if !IsCard(a) {
		return false
	}
	stronger := BriscolaStrength(a) > BriscolaStrength(b)
	if SuitOf(a) == trump {
		return SuitOf(b) != trump || stronger
	}
	return SuitOf(b) != trump && SuitOf(a) == led && (SuitOf(b) != led || stronger)
}

// BriscolaWinningCard is the card that wins among cards in Briscola, the first card's suit
// being led and trump (SuitOf of Observation.Trump) the trump suit; "" if there are no cards.
func BriscolaWinningCard(cards []string, trump byte) string {
	best := ""
	for _, card := range cards {
		if !IsCard(card) {
			continue
		}
		if best == "" || BriscolaBeats(card, best, SuitOf(cards[0]), trump) {
			best = card
		}
	}
	return best
}

// SignalName is a Signal enum value as action texts write it, e.g. "volo"; "" for no
// signal (and for a value this SDK does not know).
func SignalName(signal Signal) string {
	if signal >= 0 && int(signal) < len(signalNames) {
		return signalNames[signal]
	}
	return ""
}
