// Command example-bot is a Tressette bot that always plays legally and a little better than
// random: it declares what it holds, wins a trick as cheaply as it can, and otherwise throws
// its cheapest card. It uses no randomness, so the same match plays the same way.
//
//	TAVOLO_REFEREE=127.0.0.1:50051 TAVOLO_TICKET=<ticket> example-bot
//	TAVOLO_REFEREE=127.0.0.1:50051 TAVOLO_KEY=<entrant key> example-bot   # every match of a tournament
package main

import "github.com/tavolo/tavolo/clients/go/tavolo"

func main() {
	tavolo.Main(func(tavolo.StreamInfo) tavolo.Bot { return tavolo.ChooseFunc(choose) })
}

// choose is the whole policy.
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
