package tavolo

import (
	"crypto/sha256"
	"encoding/binary"
	"math/rand/v2"
	"strconv"
)

// Bot plays one ticket (with an entrant key: one match): it picks one of turn.Legal() and
// returns its id.
//
// Each ticket gets its own Bot (see NewBot), as does each match of a key, and a Bot is
// called from one goroutine at a time, so it needs no locking for its own fields. Choose
// must answer well within the deadline (1 s by default): see Turn.Deadline.
type Bot interface {
	Choose(turn *Turn) uint32
}

// EventHandler is an optional hook: a Bot that has OnEvent sees every event the referee
// sends, in order, before the request that follows them. Unknown (newer) events arrive too,
// with Event.GetEvent() nil; ignore what you do not know.
type EventHandler interface {
	OnEvent(event *Event)
}

// MatchOverHandler is an optional hook: OnMatchOver runs once, right after MatchOver.
type MatchOverHandler interface {
	OnMatchOver()
}

// ChooseFunc makes a Bot of a plain function.
type ChooseFunc func(turn *Turn) uint32

// Choose calls f.
func (f ChooseFunc) Choose(turn *Turn) uint32 { return f(turn) }

// StreamInfo tells a new Bot which ticket it plays, or with an entrant key which match.
type StreamInfo struct {
	// Ticket is the secret of this player slot: do not print it. "" with a key.
	Ticket string
	// Key is the entrant key (TAVOLO_KEY), "" with a ticket: do not print it either.
	Key string
	// Index is the ticket's position in TAVOLO_TICKET, from 0, or the index of the key's
	// stream; Count how many tickets or key streams (TAVOLO_STREAMS) there are.
	Index, Count int
	// With a key: Entrant is the entrant's name (KeyAccepted.entrant), MatchID the match
	// (Welcome.match_id), and Match its ordinal on this stream: 1, 2, ... (0 with a ticket).
	Entrant, MatchID string
	Match            int
	// Seed is the text to seed any randomness with: TAVOLO_SEED, or this stream's own
	// Ticket (or the Key) when it is unset (or empty), with "/<Index>" appended when the
	// process plays several streams; with a key, then "/match/<Match>" (see MatchSeed).
	Seed string
}

// Rand is a random source seeded from info.Seed: the same seed, the same numbers.
func (info StreamInfo) Rand() *rand.Rand { return NewRand(info.Seed) }

// GameSeed is the seed text of game n (GameStarted.Game) of this stream: "<Seed>/game/<n>".
// Seeding each game afresh from it (NewRand(info.GameSeed(n))) makes a game play the same
// way whether the match ran from its start or was resumed at that game by a new process.
func (info StreamInfo) GameSeed(game uint32) string { return GameSeed(info.Seed, game) }

// GameRand is a random source for game n of this stream: NewRand(info.GameSeed(n)).
func (info StreamInfo) GameRand(game uint32) *rand.Rand { return NewRand(info.GameSeed(game)) }

// GameSeed is the seed text of game n of a stream whose seed text is streamSeed:
// "<streamSeed>/game/<n>", as the Python SDK's built-in random bot uses it.
func GameSeed(streamSeed string, game uint32) string {
	return streamSeed + "/game/" + strconv.FormatUint(uint64(game), 10)
}

// MatchSeed is the seed text of the match-th match (from 1) of a key's stream whose seed
// text is streamSeed: "<streamSeed>/match/<match>".
func MatchSeed(streamSeed string, match int) string {
	return streamSeed + "/match/" + strconv.Itoa(match)
}

// NewBot makes the Bot for one ticket, or for one match of a key.
type NewBot func(info StreamInfo) Bot

// NewRand is a PCG random source seeded from the SHA-256 of seed.
func NewRand(seed string) *rand.Rand {
	sum := sha256.Sum256([]byte(seed))
	return rand.New(rand.NewPCG(binary.LittleEndian.Uint64(sum[:8]), binary.LittleEndian.Uint64(sum[8:16])))
}

// streamSeed is the seed text of stream index of count: seed (TAVOLO_SEED), or the
// stream's own ticket (or the key) when seed is "", then "/<index>" when there are several
// streams.
func streamSeed(seed, ticket string, index, count int) string {
	if seed == "" {
		seed = ticket
	}
	if count > 1 {
		seed += "/" + strconv.Itoa(index)
	}
	return seed
}
