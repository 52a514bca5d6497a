package main

import (
	"strings"
	"testing"

	pb "github.com/tavolo/tavolo/clients/go/gen/tavolo/v1"
	"github.com/tavolo/tavolo/clients/go/tavolo"
)

// play is a legal play action as the referee lists it: id = signal * 40 + card id.
func play(card string, signal tavolo.Signal) *tavolo.Action {
	id := uint32(signal)*40 + uint32(10*strings.IndexByte(tavolo.Suits, card[1])+strings.IndexByte(tavolo.Ranks, card[0]))
	text := card
	if signal != tavolo.SignalNone {
		text += " " + tavolo.SignalName(signal)
	}
	return &tavolo.Action{Id: id, Kind: tavolo.KindPlay, Card: card, Signal: signal, Text: text}
}

func turn(trick []string, legal ...*tavolo.Action) *tavolo.Turn {
	obs := &tavolo.Observation{Seat: 2, Players: 4}
	for i, card := range trick {
		obs.Trick = append(obs.Trick, &tavolo.Play{Seat: uint32(i), Action: &tavolo.Action{Kind: tavolo.KindPlay, Card: card, Text: card}})
	}
	return tavolo.NewTurn(&tavolo.DecisionRequest{RequestId: 7, Observation: obs, LegalActions: legal})
}

func TestChoose(t *testing.T) {
	declare := &tavolo.Action{Id: 300, Kind: tavolo.KindDeclare, Declaration: "napoli-D", Text: "declare napoli-D"}
	end := &tavolo.Action{Id: 320, Kind: tavolo.KindEndDeclarations, Text: "end-declarations"}
	callOut := &tavolo.Action{Id: 321, Kind: tavolo.KindCallOut, Text: "call-out"}
	unknown := &tavolo.Action{Id: 400, Kind: tavolo.ActionKind(9), Text: "bid 61"}
	cases := []struct {
		name string
		turn *tavolo.Turn
		want uint32
	}{
		{"declare first", turn(nil, declare, end), 300},
		{"then end declarations", turn(nil, end), 320},
		{"lead the cheapest, without a signal", turn(nil, play("AD", 0), play("4D", 1), play("4D", 0), play("KC", 0)), play("4D", 0).Id},
		{"win cheaply", turn([]string{"KS", "AS"}, play("3S", 0), play("2S", 0), play("4S", 0)), play("2S", 0).Id},
		{"cannot win: throw the cheapest", turn([]string{"3C"}, play("AC", 0), play("7C", 0)), play("7C", 0).Id},
		{"void in the led suit", turn([]string{"4C"}, play("AD", 0), play("JB", 0), play("6S", 0)), play("6S", 0).Id},
		{"only signalled plays", turn(nil, play("2B", 2), play("5B", 3)), play("5B", 3).Id},
		{"never call out", turn(nil, callOut, unknown), 400},
		{"call out if nothing else", turn(nil, callOut), 321},
	}
	for _, c := range cases {
		if got := choose(c.turn); got != c.want {
			t.Errorf("%s: chose %d, want %d", c.name, got, c.want)
		}
	}
}

func TestChooseBriscola(t *testing.T) {
	bot := &exampleBot{}
	bot.OnEvent(&tavolo.Event{Event: &pb.Event_MatchStarted{MatchStarted: &pb.MatchStarted{Game: "briscola-a-quattro"}}})
	briscola := func(trick []string, legal ...*tavolo.Action) *tavolo.Turn {
		t := turn(trick, legal...)
		t.Observation().Trump = "5B" // bastoni are trumps
		return t
	}
	cases := []struct {
		name string
		turn *tavolo.Turn
		want uint32
	}{
		{"lead the cheapest non-trump", briscola(nil, play("2B", 0), play("JD", 0), play("4S", 0)), play("4S", 0).Id},
		{"win with the cheapest card of the suit", briscola([]string{"KD"}, play("3D", 0), play("AD", 0), play("4B", 0)), play("3D", 0).Id},
		{"trump only when nothing else wins", briscola([]string{"AD"}, play("3D", 0), play("4B", 0), play("KB", 0)), play("4B", 0).Id},
		{"cannot win: throw the cheapest", briscola([]string{"AD", "3B"}, play("KD", 0), play("2S", 0), play("4B", 0)), play("2S", 0).Id},
	}
	for _, c := range cases {
		if got := bot.Choose(c.turn); got != c.want {
			t.Errorf("%s: chose %d, want %d", c.name, got, c.want)
		}
	}
}
