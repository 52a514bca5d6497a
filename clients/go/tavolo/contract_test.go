package tavolo

// The contract every SDK keeps: which ticket refusals end a stream at once and which are
// retried, one bot per ticket, and the seed texts.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/tavolo/tavolo/clients/go/gen/tavolo/v1"
)

// runFor plays cfg's tickets against addr with reconnect as TAVOLO_RECONNECT_SECONDS.
func runFor(t *testing.T, addr string, tickets []string, seed string, reconnect time.Duration, newBot NewBot) (int, string) {
	t.Helper()
	var stderr bytes.Buffer
	cfg := Config{Referee: addr, Tickets: tickets, Seed: seed, Reconnect: reconnect, Stderr: &stderr, Name: "bot"}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return Run(ctx, cfg, newBot), stderr.String()
}

func TestTicketRefusalsEndTheStreamAtOnce(t *testing.T) {
	for _, c := range []struct {
		code    codes.Code
		details string
	}{
		{codes.AlreadyExists, "ticket_used: this ticket has been used and its seat is closed"},
		{codes.PermissionDenied, "wrong_socket: this ticket works only on its own slot's socket"},
		{codes.PermissionDenied, "process_gone: the bot process this ticket was made for has ended"},
		{codes.Unauthenticated, "unknown_ticket: unknown ticket"},
	} {
		var attempts atomic.Int32
		addr := serve(t, func(int, pb.RefereeService_PlayServer) error {
			attempts.Add(1)
			return status.Error(c.code, c.details)
		})
		started := time.Now()
		code, stderr := runFor(t, addr, []string{"tk"}, "", 5*time.Second, func(StreamInfo) Bot { return &countingBot{} })
		want := fmt.Sprintf("bot: the referee at %s ended the stream: %s: %s (", addr, codeName(c.code), c.details)
		if code != ExitFailed || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s: exit %d, stderr %q", c.details, code, stderr)
		}
		if n := attempts.Load(); n != 1 {
			t.Errorf("%s: %d connection attempts, want 1 (no retry)", c.details, n)
		}
		if elapsed := time.Since(started); elapsed > 2*time.Second {
			t.Errorf("%s: took %v, not at once", c.details, elapsed)
		}
	}
}

func TestTicketUsedAfterADropEndsTheStream(t *testing.T) {
	var attempts atomic.Int32
	addr := serve(t, func(n int, stream pb.RefereeService_PlayServer) error {
		attempts.Add(1)
		if n > 1 {
			return status.Error(codes.AlreadyExists, "ticket_used: this ticket has been used and its seat is closed")
		}
		if err := helloAndWelcome(stream); err != nil {
			return err
		}
		return status.Error(codes.Unavailable, "gone") // the line drops: the bot reconnects
	})
	code, stderr := runFor(t, addr, []string{"tk"}, "", 5*time.Second, func(StreamInfo) Bot { return &countingBot{} })
	if code != ExitFailed || !strings.Contains(stderr, "ALREADY_EXISTS: ticket_used: ") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	if n := attempts.Load(); n != 2 {
		t.Errorf("%d connection attempts, want 2 (one reconnection, then no retry)", n)
	}
}

func TestSeatTakenIsRetried(t *testing.T) {
	var attempts atomic.Int32
	addr := serve(t, func(n int, stream pb.RefereeService_PlayServer) error {
		attempts.Add(1)
		if n <= 2 { // even before this process ever had a working stream
			return status.Error(codes.AlreadyExists, "seat_taken: a connection for this seat is already open")
		}
		return playOneRequest(n, stream)
	})
	bot := &countingBot{}
	code, stderr := runFor(t, addr, []string{"tk"}, "", 5*time.Second, func(StreamInfo) Bot { return bot })
	if code != ExitOK || stderr != "" || bot.chosen != 1 || !bot.matchOverCalled {
		t.Errorf("exit %d, stderr %q, chosen %d, match over %v", code, stderr, bot.chosen, bot.matchOverCalled)
	}
	if n := attempts.Load(); n != 3 {
		t.Errorf("%d connection attempts, want 3", n)
	}
}

func TestSeatTakenGivesUpAfterTheReconnectWindow(t *testing.T) {
	var attempts atomic.Int32
	addr := serve(t, func(int, pb.RefereeService_PlayServer) error {
		attempts.Add(1)
		return status.Error(codes.AlreadyExists, "seat_taken: a connection for this seat is already open")
	})
	started := time.Now()
	code, stderr := runFor(t, addr, []string{"tk"}, "", 700*time.Millisecond, func(StreamInfo) Bot { return &countingBot{} })
	elapsed := time.Since(started)
	if code != ExitFailed || !strings.Contains(stderr, "ALREADY_EXISTS: seat_taken: ") ||
		!strings.Contains(stderr, "gave up after retrying") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	if n := attempts.Load(); n < 3 {
		t.Errorf("%d connection attempts, want several", n)
	}
	// Retries 0.1 s apart, doubling: it stops when the next one would be past the window.
	if elapsed < 250*time.Millisecond || elapsed > 3*time.Second {
		t.Errorf("gave up after %v, want within the 0.7 s window", elapsed)
	}
}

// playTicket plays one request for any ticket; the bot must answer 17.
func playTicket(_ int, stream pb.RefereeService_PlayServer) error {
	msg, err := stream.Recv()
	if err != nil {
		return err
	}
	ticket := msg.GetHello().GetTicket()
	if err := stream.Send(&pb.PlayResponse{Events: []*pb.Event{event(&pb.Welcome{MatchId: ticket})}}); err != nil {
		return err
	}
	if err := stream.Send(request); err != nil {
		return err
	}
	if answer, err := stream.Recv(); err != nil {
		return err
	} else if answer.GetDecision().GetActionId() != 17 {
		return status.Error(codes.InvalidArgument, "bad decision")
	}
	return stream.Send(&pb.PlayResponse{Events: []*pb.Event{event(&pb.MatchOver{MatchId: ticket})}})
}

func TestOneBotPerTicket(t *testing.T) {
	addr := serve(t, playTicket)
	tickets := []string{"ta", "tb", "tc"}
	for _, seed := range []string{"", "s"} {
		var mu sync.Mutex
		infos := map[int]StreamInfo{}
		bots := map[int]*countingBot{}
		code, stderr := runFor(t, addr, tickets, seed, 5*time.Second, func(info StreamInfo) Bot {
			mu.Lock()
			defer mu.Unlock()
			if _, twice := infos[info.Index]; twice {
				t.Errorf("seed %q: a second bot for ticket %d", seed, info.Index)
			}
			infos[info.Index] = info
			bots[info.Index] = &countingBot{}
			return bots[info.Index]
		})
		if code != ExitOK || stderr != "" || len(bots) != 3 {
			t.Fatalf("seed %q: exit %d, stderr %q, %d bots", seed, code, stderr, len(bots))
		}
		for i, ticket := range tickets {
			base := seed
			if base == "" {
				base = ticket // each stream's own ticket, not the first one
			}
			want := StreamInfo{Ticket: ticket, Index: i, Count: 3, Seed: fmt.Sprintf("%s/%d", base, i)}
			if infos[i] != want {
				t.Errorf("seed %q: stream %d got %+v, want %+v", seed, i, infos[i], want)
			}
			if b := bots[i]; b.chosen != 1 || !b.matchOverCalled || b.events != 3 {
				t.Errorf("seed %q: bot %d chose %d times, saw %d events, match over %v", seed, i, b.chosen, b.events, b.matchOverCalled)
			}
		}
	}
}

func TestSeedSettings(t *testing.T) {
	t.Setenv("TAVOLO_REFEREE", "127.0.0.1:1")
	t.Setenv("TAVOLO_TICKET", "ta,tb")
	t.Setenv("TAVOLO_SEED", "")
	os.Unsetenv("TAVOLO_SEED") // t.Setenv puts the old value back afterwards
	if cfg, err := ConfigFromEnv(); err != nil || cfg.Seed != "" {
		t.Errorf("TAVOLO_SEED unset: Seed %q, %v", cfg.Seed, err)
	}
	t.Setenv("TAVOLO_SEED", " my seed ")
	if cfg, err := ConfigFromEnv(); err != nil || cfg.Seed != " my seed " {
		t.Errorf("TAVOLO_SEED set: Seed %q, %v (want it as given)", cfg.Seed, err)
	}
}

func TestStreamAndGameSeeds(t *testing.T) {
	for _, c := range []struct {
		seed, ticket string
		index, count int
		want         string
	}{
		{"", "ta", 0, 1, "ta"},
		{"", "tb", 1, 2, "tb/1"},
		{"s", "ta", 0, 1, "s"},
		{"s", "ta", 0, 2, "s/0"},
		{"s", "tb", 1, 2, "s/1"},
	} {
		if got := streamSeed(c.seed, c.ticket, c.index, c.count); got != c.want {
			t.Errorf("streamSeed(%q, %q, %d, %d) = %q, want %q", c.seed, c.ticket, c.index, c.count, got, c.want)
		}
	}
	info := StreamInfo{Ticket: "tb", Index: 1, Count: 2, Seed: "s/1"}
	if got := info.GameSeed(3); got != "s/1/game/3" {
		t.Errorf("GameSeed(3) = %q", got)
	}
	if got := GameSeed("tk", 0); got != "tk/game/0" {
		t.Errorf("GameSeed(tk, 0) = %q", got)
	}
	a, b, other := info.GameRand(3), NewRand("s/1/game/3"), info.GameRand(4)
	x, y, z := a.Uint64(), b.Uint64(), other.Uint64()
	if x != y || x == z {
		t.Errorf("GameRand(3) %d, NewRand(GameSeed(3)) %d, GameRand(4) %d", x, y, z)
	}
}
