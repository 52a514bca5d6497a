package tavolo

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "github.com/tavolo/tavolo/clients/go/gen/tavolo/v1"
)

// The fixture of tests/fixtures/compact (its README): merging each slot's compact
// observations in order gives exactly the complete ones a stream without them was sent.
func TestMergeFixtures(t *testing.T) {
	files, err := filepath.Glob("../../../tests/fixtures/compact/*.jsonl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixture files in tests/fixtures/compact (%v)", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			f, err := os.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			slots := map[uint32]*merger{}
			lines, compacts := 0, 0
			scanner := bufio.NewScanner(f)
			scanner.Buffer(nil, 1<<24)
			for scanner.Scan() {
				lines++
				var row struct {
					Slot      uint32 `json:"slot"`
					RequestID uint64 `json:"request_id"`
					Compact   string `json:"compact"`
					Full      string `json:"full"`
				}
				if err := json.Unmarshal(scanner.Bytes(), &row); err != nil {
					t.Fatalf("line %d: %v", lines, err)
				}
				obs, full := decodeObservation(t, row.Compact), decodeObservation(t, row.Full)
				if obs.GetCompact() {
					compacts++
				}
				if slots[row.Slot] == nil {
					slots[row.Slot] = &merger{}
				}
				if err := slots[row.Slot].complete(obs); err != nil {
					t.Fatalf("line %d (slot %d, request %d): %v", lines, row.Slot, row.RequestID, err)
				}
				if !proto.Equal(obs, full) {
					t.Fatalf("line %d (slot %d, request %d): merged\n%v\nwant\n%v", lines, row.Slot, row.RequestID, obs, full)
				}
			}
			if err := scanner.Err(); err != nil {
				t.Fatal(err)
			}
			if compacts == 0 {
				t.Fatalf("%d lines, none of them compact: nothing was merged", lines)
			}
		})
	}
}

func decodeObservation(t *testing.T, text string) *pb.Observation {
	t.Helper()
	data, err := base64.StdEncoding.DecodeString(text)
	if err != nil {
		t.Fatal(err)
	}
	obs := &pb.Observation{}
	if err := proto.Unmarshal(data, obs); err != nil {
		t.Fatal(err)
	}
	return obs
}

func trick(winner uint32, cards ...string) *pb.Trick {
	t := &pb.Trick{Winner: winner}
	for i, card := range cards {
		t.Plays = append(t.Plays, &pb.Play{Seat: uint32(i), Action: &pb.Action{Kind: KindPlay, Card: card, Text: card}})
	}
	return t
}

// A deal of Calabresella: a full observation, a compact one adding to each list, then the
// first request of the next deal (compact false), which replaces everything.
func TestMergeAppendsThenNewDealReplaces(t *testing.T) {
	first := &pb.Observation{
		Game: 1, Deal: 2, Hand: []string{"3D", "4C"},
		Tricks:       []*pb.Trick{trick(0, "AD", "5D", "6D")},
		Declarations: []*pb.Declared{{Seat: 1, Declaration: "napoli-D"}},
		Draws:        []*pb.Draw{{Seat: 0, Card: "7S"}},
		Calabresella: &pb.CalabresellaView{Bids: []*pb.Bid{{Seat: 0, Bid: "pass"}}, Soloist: -1},
	}
	compact := &pb.Observation{
		Game: 1, Deal: 2, Hand: []string{"4C"}, Compact: true,
		Tricks:       []*pb.Trick{trick(2, "3D", "KD", "2D")},
		Declarations: []*pb.Declared{{Seat: 2, Declaration: "buongioco"}},
		Draws:        []*pb.Draw{{Seat: 1, Card: "QS"}},
		Calabresella: &pb.CalabresellaView{Bids: []*pb.Bid{{Seat: 1, Bid: "solo"}}, Contract: "solo", Soloist: 1},
	}
	want := &pb.Observation{
		Game: 1, Deal: 2, Hand: []string{"4C"},
		Tricks:       []*pb.Trick{trick(0, "AD", "5D", "6D"), trick(2, "3D", "KD", "2D")},
		Declarations: []*pb.Declared{{Seat: 1, Declaration: "napoli-D"}, {Seat: 2, Declaration: "buongioco"}},
		Draws:        []*pb.Draw{{Seat: 0, Card: "7S"}, {Seat: 1, Card: "QS"}},
		Calabresella: &pb.CalabresellaView{
			Bids: []*pb.Bid{{Seat: 0, Bid: "pass"}, {Seat: 1, Bid: "solo"}}, Contract: "solo", Soloist: 1,
		},
	}
	newDeal := &pb.Observation{
		Game: 1, Deal: 3, Hand: []string{"2B"},
		Calabresella: &pb.CalabresellaView{Soloist: -1},
	}
	var seen merger
	if err := seen.complete(first); err != nil {
		t.Fatal(err)
	}
	kept := proto.Clone(first)
	if err := seen.complete(compact); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(compact, want) {
		t.Errorf("merged:\n%v\nwant:\n%v", compact, want)
	}
	if !proto.Equal(first, kept) {
		t.Errorf("merging changed the previous observation, which a bot may keep:\n%v", first)
	}
	replaced := proto.Clone(newDeal)
	if err := seen.complete(newDeal); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(newDeal, replaced) || len(newDeal.GetTricks()) != 0 {
		t.Errorf("a complete observation of a new deal was changed:\n%v", newDeal)
	}
	// A compact one after it adds to the new deal only.
	next := &pb.Observation{Game: 1, Deal: 3, Compact: true, Tricks: []*pb.Trick{trick(1, "2B", "3B", "4B")}}
	if err := seen.complete(next); err != nil {
		t.Fatal(err)
	}
	if len(next.GetTricks()) != 1 || next.GetCompact() {
		t.Errorf("after a new deal: %v", next)
	}
}

func TestMergeRefusesCompactWithoutItsDeal(t *testing.T) {
	var seen merger
	err := seen.complete(&pb.Observation{Game: 1, Deal: 1, Compact: true})
	if err == nil || err.Error() != "the referee sent a compact observation (game 1, deal 1) as the first of this stream's deal" {
		t.Errorf("compact first: %v", err)
	}
	if err := seen.complete(&pb.Observation{Game: 1, Deal: 1}); err != nil {
		t.Fatal(err)
	}
	err = seen.complete(&pb.Observation{Game: 1, Deal: 2, Compact: true})
	if err == nil || err.Error() != "the referee sent a compact observation of game 1, deal 2 after one of game 1, deal 1" {
		t.Errorf("compact of another deal: %v", err)
	}
}

// observingBot plays the first legal action and keeps each observation it is shown.
type observingBot struct {
	mu   sync.Mutex
	seen []*Observation
}

func (b *observingBot) Choose(turn *Turn) uint32 {
	b.mu.Lock()
	b.seen = append(b.seen, turn.Observation())
	b.mu.Unlock()
	return turn.Legal()[0].GetId()
}

func requestWith(id uint64, obs *pb.Observation) *pb.PlayResponse {
	return &pb.PlayResponse{Request: &pb.DecisionRequest{
		RequestId: id, Observation: obs, LegalActions: []*pb.Action{{Id: 17, Kind: KindPlay, Card: "6C", Text: "6C"}},
	}}
}

// Over gRPC: the Hello asks for compact observations, and the bot is shown them complete.
func TestRunCompletesCompactObservations(t *testing.T) {
	addr := serve(t, func(_ int, stream pb.RefereeService_PlayServer) error {
		msg, err := stream.Recv()
		if err != nil {
			return err
		}
		if !msg.GetHello().GetCompactObservations() {
			return status.Error(codes.InvalidArgument, "no_hello: the Hello does not ask for compact observations")
		}
		if err := stream.Send(&pb.PlayResponse{Events: []*pb.Event{event(&pb.Welcome{MatchId: "m"})}}); err != nil {
			return err
		}
		for i, obs := range []*pb.Observation{
			{Game: 1, Deal: 1, Tricks: []*pb.Trick{trick(0, "AD", "5D", "6D", "7D")}},
			{Game: 1, Deal: 1, Compact: true, Tricks: []*pb.Trick{trick(3, "3C", "4C", "5C", "2C")}},
		} {
			if err := stream.Send(requestWith(uint64(i+1), obs)); err != nil {
				return err
			}
			if _, err := stream.Recv(); err != nil {
				return err
			}
		}
		return stream.Send(&pb.PlayResponse{Events: []*pb.Event{event(&pb.MatchOver{MatchId: "m"})}})
	})
	bot := &observingBot{}
	code, stderr := run(t, addr, bot)
	if code != ExitOK || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	want := &pb.Observation{Game: 1, Deal: 1, Tricks: []*pb.Trick{trick(0, "AD", "5D", "6D", "7D"), trick(3, "3C", "4C", "5C", "2C")}}
	if len(bot.seen) != 2 || !proto.Equal(bot.seen[1], want) {
		t.Errorf("the bot saw %v, want second %v", bot.seen, want)
	}
}

// A compact observation the SDK cannot complete stops the stream with one line.
func TestRunStopsOnCompactObservationWithoutItsDeal(t *testing.T) {
	addr := serve(t, func(_ int, stream pb.RefereeService_PlayServer) error {
		if err := helloAndWelcome(stream); err != nil {
			return err
		}
		if err := stream.Send(requestWith(1, &pb.Observation{Game: 1, Deal: 4, Compact: true})); err != nil {
			return err
		}
		_, err := stream.Recv() // the SDK leaves: the call ends
		return err
	})
	bot := &observingBot{}
	code, stderr := run(t, addr, bot)
	want := "bot: the referee sent a compact observation (game 1, deal 4) as the first of this stream's deal; this stream stops\n"
	if code != ExitFailed || stderr != want || len(bot.seen) != 0 {
		t.Errorf("exit %d, stderr %q, bot shown %d", code, stderr, len(bot.seen))
	}
	if strings.Count(stderr, "\n") != 1 {
		t.Errorf("not one line: %q", stderr)
	}
}
