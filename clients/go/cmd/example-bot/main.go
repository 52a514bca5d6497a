// Command example-bot is a bot that always plays legally and a little better than random:
// it declares what it holds, wins a trick as cheaply as it can, and otherwise throws its
// cheapest card, by Tressette's ranks or, in Briscola (MatchStarted.game), Briscola's
// ranks and trumps. It uses no randomness, so the same match plays the same way.
//
//	TAVOLO_REFEREE=127.0.0.1:50051 TAVOLO_TICKET=<ticket> example-bot
//	TAVOLO_REFEREE=127.0.0.1:50051 TAVOLO_KEY=<entrant key> example-bot   # every match of a tournament
package main

import "github.com/tavolo/tavolo/clients/go/tavolo"

func main() {
	tavolo.Main(func(tavolo.StreamInfo) tavolo.Bot { return &exampleBot{} })
}

// exampleBot remembers the match's game family (MatchStarted.game: the Briscola families
// are "briscola" and "briscola-a-quattro"), which decides the cards' order.
type exampleBot struct{ game string }

// OnEvent keeps MatchStarted.game.
func (b *exampleBot) OnEvent(event *tavolo.Event) {
	if started := event.GetMatchStarted(); started != nil {
		b.game = started.GetGame()
	}
}

// Choose plays by Briscola's rules in Briscola and by Tressette's otherwise.
func (b *exampleBot) Choose(turn *tavolo.Turn) uint32 {
	if b.game == "briscola" || b.game == "briscola-a-quattro" {
		return chooseBriscola(turn)
	}
	return choose(turn)
}

// chooseBriscola is the same policy with Briscola's ranks, points and trumps; a trump is
// spent only when no other card wins the trick.
func chooseBriscola(turn *tavolo.Turn) uint32 {
	trump := tavolo.SuitOf(turn.Observation().GetTrump())
	plays := turn.Plays()
	if len(plays) == 0 {
		return choose(turn)
	}
	candidates := plays
	if trick := turn.TrickCards(); len(trick) > 0 {
		best := tavolo.BriscolaWinningCard(trick, trump)
		var winners []*tavolo.Action
		for _, a := range plays {
			if tavolo.BriscolaBeats(a.GetCard(), best, tavolo.SuitOf(trick[0]), trump) {
				winners = append(winners, a)
			}
		}
		if len(winners) > 0 {
			candidates = winners
		}
	}
	chosen := candidates[0]
	for _, a := range candidates[1:] {
		if briscolaCost(a.GetCard(), trump) < briscolaCost(chosen.GetCard(), trump) {
			chosen = a
		}
	}
	return chosen.GetId()
}

// briscolaCost orders cards cheapest first: any card before a trump, then the fewest
// points, then the weakest.
func briscolaCost(card string, trump byte) int {
	cost := 10*tavolo.BriscolaPoints(card) + tavolo.BriscolaStrength(card)
	if tavolo.SuitOf(card) == trump {
		cost += 1000
	}
	return cost
}

// choose is the whole Tressette policy.
func choose(turn *tavolo.Turn) uint32 {
	// 1. Declaring a combination held is free points (one per request: the referee asks
	// again); then close the declarations.
	if declarations := turn.Declarations(); len(declarations) > 0 {
		return declarations[0].GetId()
	}
	if end := turn.OfKind(tavolo.KindEndDeclarations); len(end) > 0 {
		return end[0].GetId()
	}
	// 2. Play a card, saying nothing (no signal) when the rules let us.
	if plays := quiet(turn.Plays()); len(plays) > 0 {
		if best := tavolo.WinningCard(turn.TrickCards()); best != "" {
			// Following: win the trick as cheaply as possible if we can.
			var winners []*tavolo.Action
			for _, a := range plays {
				if tavolo.Beats(a.GetCard(), best, tavolo.SuitOf(best)) {
					winners = append(winners, a)
				}
			}
			if len(winners) > 0 {
				return cheapest(winners).GetId()
			}
		}
		// Leading, or unable to win: throw the cheapest card.
		return cheapest(plays).GetId()
	}
	// 3. Anything else (never CALL_OUT by choice, and kinds this bot does not know): the
	// first legal action that is not a call-out, else the first one.
	for _, a := range turn.Legal() {
		if a.GetKind() != tavolo.KindCallOut {
			return a.GetId()
		}
	}
	return turn.Legal()[0].GetId()
}

// quiet keeps the plays without a signal, or all of them if every play carries one.
func quiet(plays []*tavolo.Action) []*tavolo.Action {
	var out []*tavolo.Action
	for _, a := range plays {
		if a.GetSignal() == tavolo.SignalNone {
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		return plays
	}
	return out
}

// cheapest is the play giving away the fewest points, the weakest card among equals
// (the first in the referee's order among equal cards).
func cheapest(plays []*tavolo.Action) *tavolo.Action {
	best := plays[0]
	for _, a := range plays[1:] {
		p, q := tavolo.Points(a.GetCard()), tavolo.Points(best.GetCard())
		if p < q || p == q && tavolo.Strength(a.GetCard()) < tavolo.Strength(best.GetCard()) {
			best = a
		}
	}
	return best
}
