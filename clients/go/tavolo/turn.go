package tavolo

import (
	"strings"
	"time"
)

// Turn is one decision to make: what the seat may know (the observation) and the legal
// actions to choose from. It wraps the DecisionRequest as the referee sent it; do not
// modify the messages it returns.
type Turn struct {
	request  *DecisionRequest
	received time.Time
}

// NewTurn wraps a DecisionRequest (the SDK does this for you; tests use it to hand a bot a
// made-up request).
func NewTurn(request *DecisionRequest) *Turn {
	if request == nil {
		request = &DecisionRequest{}
	}
	return &Turn{request: request, received: time.Now()}
}

// Request is the DecisionRequest itself.
func (t *Turn) Request() *DecisionRequest { return t.request }

// Observation is everything this seat may know of the deal being played.
func (t *Turn) Observation() *Observation { return t.request.GetObservation() }

// Legal is every legal action, in the referee's order: Choose returns one of their ids.
func (t *Turn) Legal() []*Action { return t.request.GetLegalActions() }

// RequestID is the id the decision answers; the SDK echoes it for you.
func (t *Turn) RequestID() uint64 { return t.request.GetRequestId() }

// AttemptsLeft is how many attempts are left for this decision, this one included.
func (t *Turn) AttemptsLeft() uint32 { return t.request.GetAttemptsLeft() }

// TimeBank is what is left of this slot's time bank beyond the deadline (0 without one).
func (t *Turn) TimeBank() time.Duration {
	return time.Duration(t.request.GetTimeBankMs()) * time.Millisecond
}

// Deadline is when the answer is due, counted from when the SDK read the request (the
// referee counts from when it sent it, so keep a margin for the network).
func (t *Turn) Deadline() time.Time {
	return t.received.Add(time.Duration(t.request.GetDeadlineMs()) * time.Millisecond)
}

// Seat is this bot's seat in the current game (seats rotate between games).
func (t *Turn) Seat() int { return int(t.Observation().GetSeat()) }

// Players is the number of seats at the table: 4, or 3 in tressette a tre.
func (t *Turn) Players() int {
	if n := t.Observation().GetPlayers(); n != 0 {
		return int(n)
	}
	return 4
}

// Partner is the partner's seat, opposite this one, or -1 when each seat plays alone
// (tressette a tre and a due, ciapanò, calabresella). A referee older than the sides
// field sends 0: then four seats mean partners.
func (t *Turn) Partner() int {
	sides := t.request.GetObservation().GetSides()
	if t.Players() != 4 || (sides != 0 && sides != 2) {
		return -1
	}
	return (t.Seat() + 2) % 4
}

// Hand is this seat's unplayed cards, e.g. ["3D", "KS"].
func (t *Turn) Hand() []string { return t.Observation().GetHand() }

// TrickCard is one card of the current trick.
type TrickCard struct {
	Seat   int
	Card   string
	Signal Signal
}

// Trick is the current trick so far, in playing order.
func (t *Turn) Trick() []TrickCard {
	var out []TrickCard
	for _, play := range t.Observation().GetTrick() {
		if card := CardOf(play.GetAction()); card != "" {
			out = append(out, TrickCard{int(play.GetSeat()), card, play.GetAction().GetSignal()})
		}
	}
	return out
}

// TrickCards is the cards of the current trick, in playing order.
func (t *Turn) TrickCards() []string {
	var out []string
	for _, play := range t.Trick() {
		out = append(out, play.Card)
	}
	return out
}

// LedSuit is the suit of the current trick's first card, or 0 when nobody has played to it.
func (t *Turn) LedSuit() byte {
	if trick := t.Trick(); len(trick) > 0 {
		return SuitOf(trick[0].Card)
	}
	return 0
}

// IsLeading reports whether this seat plays the first card of the trick now.
func (t *Turn) IsLeading() bool { return len(t.Trick()) == 0 && len(t.Plays()) > 0 }

// PlayedCards is every card played in this deal so far, finished tricks first, in order.
func (t *Turn) PlayedCards() []string {
	var out []string
	for _, trick := range t.Observation().GetTricks() {
		for _, play := range trick.GetPlays() {
			if card := CardOf(play.GetAction()); card != "" {
				out = append(out, card)
			}
		}
	}
	return append(out, t.TrickCards()...)
}

// Plays is the legal actions that play a card (a card appears once per signal it may carry).
func (t *Turn) Plays() []*Action { return t.OfKind(KindPlay) }

// Declarations is the legal actions that declare a combination.
func (t *Turn) Declarations() []*Action { return t.OfKind(KindDeclare) }

// OfKind is the legal actions of one kind, in the referee's order.
func (t *Turn) OfKind(kind ActionKind) []*Action {
	var out []*Action
	for _, action := range t.Legal() {
		if action.GetKind() == kind {
			out = append(out, action)
		}
	}
	return out
}

// Find is the legal action whose text is exactly text (e.g. "AS volo", "end-declarations"),
// or nil.
func (t *Turn) Find(text string) *Action {
	for _, action := range t.Legal() {
		if action.GetText() == text {
			return action
		}
	}
	return nil
}

// CardOf is the card a play action plays, or "" for any other action. A referee that
// fills only the text ("AS volo") is understood too.
func CardOf(action *Action) string {
	if card := action.GetCard(); card != "" {
		return card
	}
	if kind := action.GetKind(); kind == KindPlay || kind == KindUnspecified {
		if word, _, _ := strings.Cut(action.GetText(), " "); IsCard(word) {
			return word
		}
	}
	return ""
}
