package tavolo

import "testing"

func TestCards(t *testing.T) {
	for card, want := range map[string][2]int{"3D": {9, 1}, "AS": {7, 3}, "QB": {5, 1}, "4C": {0, 0}} {
		if got := [2]int{Strength(card), Points(card)}; got != want {
			t.Errorf("%s: strength, points = %v, want %v", card, got, want)
		}
	}
	if IsCard("1D") || IsCard("3X") || IsCard("3") || !IsCard("JB") {
		t.Error("IsCard is wrong")
	}
	if !Beats("2D", "AD", 'D') || Beats("AD", "2D", 'D') || Beats("3C", "4D", 'D') || !Beats("4D", "3C", 'D') {
		t.Error("Beats is wrong")
	}
	if got := WinningCard([]string{"KD", "3C", "AD", "7D"}); got != "AD" {
		t.Errorf("WinningCard = %q, want AD", got)
	}
	if SignalName(SignalVolo) != "volo" || SignalName(Signal(99)) != "" {
		t.Error("SignalName is wrong")
	}
}

func TestBriscolaCards(t *testing.T) {
	for card, want := range map[string][2]int{"AD": {9, 11}, "3S": {8, 10}, "KB": {7, 4}, "QC": {6, 3}, "JD": {5, 2}, "7S": {4, 0}, "2C": {0, 0}} {
		if got := [2]int{BriscolaStrength(card), BriscolaPoints(card)}; got != want {
			t.Errorf("%s: Briscola strength, points = %v, want %v", card, got, want)
		}
	}
	// Trumps are bastoni: a trump beats any other card, a third suit never wins.
	for _, c := range []struct {
		a, b string
		want bool
	}{{"AD", "3D", true}, {"3D", "AD", false}, {"2B", "AD", true}, {"AD", "2B", false}, {"3B", "2B", true}, {"AS", "4D", false}} {
		if got := BriscolaBeats(c.a, c.b, 'D', 'B'); got != c.want {
			t.Errorf("BriscolaBeats(%s, %s) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
	if got := BriscolaWinningCard([]string{"KD", "AS", "AD", "7D"}, 'B'); got != "AD" {
		t.Errorf("BriscolaWinningCard = %q, want AD", got)
	}
	if got := BriscolaWinningCard([]string{"KD", "2B", "AD", "4B"}, 'B'); got != "4B" {
		t.Errorf("BriscolaWinningCard with trumps = %q, want 4B", got)
	}
}

func TestTurn(t *testing.T) {
	turn := NewTurn(&DecisionRequest{
		Observation: &Observation{Seat: 1, Players: 4, Hand: []string{"3D", "KS"},
			Trick: []*Play{{Seat: 0, Action: &Action{Kind: KindPlay, Card: "7S", Text: "7S"}}}},
		LegalActions: []*Action{
			{Id: 23, Kind: KindPlay, Card: "KS", Text: "KS"},
			{Id: 63, Kind: KindPlay, Card: "KS", Signal: SignalBusso, Text: "KS busso"},
			{Id: 900, Kind: ActionKind(42), Text: "something-new"},
		},
	})
	if turn.Partner() != 3 || turn.LedSuit() != 'S' || turn.IsLeading() || len(turn.Plays()) != 2 {
		t.Errorf("partner %d, led %c, leading %v, plays %d", turn.Partner(), turn.LedSuit(), turn.IsLeading(), len(turn.Plays()))
	}
	if a := turn.Find("KS busso"); a == nil || a.GetId() != 63 {
		t.Errorf("Find = %v", a)
	}
	if got := turn.PlayedCards(); len(got) != 1 || got[0] != "7S" {
		t.Errorf("PlayedCards = %v", got)
	}
}
