package tavolo

import (
	"fmt"

	pb "github.com/tavolo/tavolo/clients/go/gen/tavolo/v1"
)

// merger rebuilds complete observations from the compact ones of one stream (the
// SDK's Hello asks for them: Hello.compact_observations). A compact observation
// (Observation.compact) holds in tricks, declarations, draws and calabresella.bids only
// what is new since the previous request on the stream; every other field is complete.
type merger struct {
	last *pb.Observation // the complete observation of the stream's previous request
}

// complete makes obs complete, in place, and remembers it for the next request; an error if
// obs is compact but the stream has no previous observation of the same game and deal.
// The complete observation has compact false, as a bot saw it before compact ones existed.
func (o *merger) complete(obs *pb.Observation) error {
	if obs == nil {
		o.last = nil
		return nil
	}
	if !obs.GetCompact() {
		o.last = obs
		return nil
	}
	last := o.last
	switch {
	case last == nil:
		o.last = nil
		return fmt.Errorf("the referee sent a compact observation (game %d, deal %d) as the first of this stream's deal",
			obs.GetGame(), obs.GetDeal())
	case last.GetGame() != obs.GetGame() || last.GetDeal() != obs.GetDeal():
		o.last = nil
		return fmt.Errorf("the referee sent a compact observation of game %d, deal %d after one of game %d, deal %d",
			obs.GetGame(), obs.GetDeal(), last.GetGame(), last.GetDeal())
	}
	obs.Tricks = joined(last.GetTricks(), obs.GetTricks())
	obs.Declarations = joined(last.GetDeclarations(), obs.GetDeclarations())
	obs.Draws = joined(last.GetDraws(), obs.GetDraws())
	if view := obs.GetCalabresella(); view != nil {
		view.Bids = joined(last.GetCalabresella().GetBids(), view.GetBids())
	}
	obs.Compact = false
	o.last = obs
	return nil
}

// joined is old then new in a fresh slice: a bot may keep the previous observation, so
// its slices are never appended to.
func joined[T any](old, new []T) []T {
	if len(new) == 0 {
		return old
	}
	all := make([]T, 0, len(old)+len(new))
	return append(append(all, old...), new...)
}
