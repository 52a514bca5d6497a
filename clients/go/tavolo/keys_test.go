package tavolo

// Entrant keys: one key, several streams, each seated in match after match, a fresh Bot
// per match, until the referee ends the stream with OK.

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

// runKey plays key "kk" on streams streams against addr.
func runKey(t *testing.T, addr string, streams int, seed string, newBot NewBot) (int, string) {
	t.Helper()
	var stderr bytes.Buffer
	cfg := Config{Referee: addr, Key: "kk", Streams: streams, Seed: seed, Reconnect: 2 * time.Second, Stderr: &stderr, Name: "bot"}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return Run(ctx, cfg, newBot), stderr.String()
}

// acceptKey reads the Hello, checks that it carries the key alone, and sends KeyAccepted.
func acceptKey(stream pb.RefereeService_PlayServer) error {
	msg, err := stream.Recv()
	if err != nil {
		return err
	}
	if h := msg.GetHello(); h.GetKey() != "kk" || h.GetTicket() != "" || h.GetProtocolVersion() != 1 {
		return status.Errorf(codes.InvalidArgument, "no_hello: bad hello %v", h)
	}
	accepted := &pb.KeyAccepted{Entrant: "alice", StreamsPerTable: 2, MatchesLeft: 2}
	return stream.Send(&pb.PlayResponse{Events: []*pb.Event{{Event: &pb.Event_KeyAccepted{KeyAccepted: accepted}}}})
}

func welcomeTo(stream pb.RefereeService_PlayServer, match string, slot uint32) error {
	return stream.Send(&pb.PlayResponse{Events: []*pb.Event{event(&pb.Welcome{MatchId: match, Slot: slot})}})
}

// expectAnswer reads the decision and checks it answers request 5 with 17.
func expectAnswer(stream pb.RefereeService_PlayServer) error {
	answer, err := stream.Recv()
	if err != nil {
		return err
	}
	if d := answer.GetDecision(); d.GetRequestId() != 5 || d.GetActionId() != 17 {
		return status.Errorf(codes.InvalidArgument, "bad_decision: %v", d)
	}
	return nil
}

func matchOver(stream pb.RefereeService_PlayServer, match string) error {
	return stream.Send(&pb.PlayResponse{Events: []*pb.Event{event(&pb.MatchOver{MatchId: match})}})
}

// playMatch seats the stream in match at slot: Welcome, request 5, the answer 17, MatchOver.
func playMatch(stream pb.RefereeService_PlayServer, match string, slot uint32) error {
	if err := welcomeTo(stream, match, slot); err != nil {
		return err
	}
	if err := stream.Send(request); err != nil {
		return err
	}
	if err := expectAnswer(stream); err != nil {
		return err
	}
	return matchOver(stream, match)
}

// matchBot logs what one Bot was made for and what it saw.
type matchBot struct {
	countingBot
	info     StreamInfo
	welcomes []string
}

func (b *matchBot) OnEvent(e *Event) {
	b.countingBot.OnEvent(e)
	if w := e.GetWelcome(); w != nil {
		b.welcomes = append(b.welcomes, fmt.Sprintf("%s/%d", w.GetMatchId(), w.GetSlot()))
	}
	if e.GetKeyAccepted() != nil {
		panic("KeyAccepted reached a bot")
	}
}

// botLog makes matchBots and keeps them, in the order made.
type botLog struct {
	mu   sync.Mutex
	bots []*matchBot
}

func (l *botLog) newBot(info StreamInfo) Bot {
	l.mu.Lock()
	defer l.mu.Unlock()
	bot := &matchBot{info: info}
	l.bots = append(l.bots, bot)
	return bot
}

func TestKeyPlaysTwoMatchesOnOneStreamWithAFreshBotEach(t *testing.T) {
	addr := serve(t, func(_ int, stream pb.RefereeService_PlayServer) error {
		if err := acceptKey(stream); err != nil {
			return err
		}
		if err := playMatch(stream, "m1", 0); err != nil {
			return err
		}
		if err := playMatch(stream, "m2", 2); err != nil {
			return err
		}
		return nil // no match left: status OK
	})
	for _, seed := range []string{"", "s"} {
		log := &botLog{}
		code, stderr := runKey(t, addr, 1, seed, log.newBot)
		if code != ExitOK || stderr != "" || len(log.bots) != 2 {
			t.Fatalf("seed %q: exit %d, stderr %q, %d bots", seed, code, stderr, len(log.bots))
		}
		base := seed
		if base == "" {
			base = "kk"
		}
		for i, match := range []string{"m1", "m2"} {
			bot := log.bots[i]
			want := StreamInfo{Key: "kk", Index: 0, Count: 1, Entrant: "alice", MatchID: match, Match: i + 1,
				Seed: fmt.Sprintf("%s/match/%d", base, i+1)}
			if bot.info != want {
				t.Errorf("seed %q: bot %d got %+v, want %+v", seed, i, bot.info, want)
			}
			// Its Welcome, the unknown event, MatchOver; nothing of the other match.
			if bot.chosen != 1 || bot.events != 3 || !bot.matchOverCalled || len(bot.welcomes) != 1 {
				t.Errorf("seed %q: bot %d chose %d times, saw %d events (welcomes %v), match over %v",
					seed, i, bot.chosen, bot.events, bot.welcomes, bot.matchOverCalled)
			}
		}
	}
}

func TestKeyReconnectionMidMatchKeepsTheBot(t *testing.T) {
	addr := serve(t, func(n int, stream pb.RefereeService_PlayServer) error {
		if err := acceptKey(stream); err != nil {
			return err
		}
		if err := welcomeTo(stream, "m1", 1); err != nil {
			return err
		}
		if err := stream.Send(request); err != nil {
			return err
		}
		if n == 1 { // drop the line before the answer: the request comes again after KeyAccepted and Welcome
			return status.Error(codes.Unavailable, "gone")
		}
		if err := expectAnswer(stream); err != nil {
			return err
		}
		return matchOver(stream, "m1")
	})
	log := &botLog{}
	code, stderr := runKey(t, addr, 1, "", log.newBot)
	if code != ExitOK || stderr != "" || len(log.bots) != 1 {
		t.Fatalf("exit %d, stderr %q, %d bots", code, stderr, len(log.bots))
	}
	// Welcome twice, the unknown event once (not again with the re-sent request), MatchOver.
	bot := log.bots[0]
	if bot.chosen != 1 || bot.events != 4 || !bot.matchOverCalled || bot.info.Match != 1 {
		t.Errorf("chose %d times, saw %d events, match over %v, match %d", bot.chosen, bot.events, bot.matchOverCalled, bot.info.Match)
	}
}

func TestKeyReconnectionBetweenMatches(t *testing.T) {
	addr := serve(t, func(n int, stream pb.RefereeService_PlayServer) error {
		if err := acceptKey(stream); err != nil {
			return err
		}
		if n == 1 {
			if err := playMatch(stream, "m1", 0); err != nil {
				return err
			}
			return status.Error(codes.Unavailable, "gone") // while waiting for the next match
		}
		return playMatch(stream, "m2", 0)
	})
	log := &botLog{}
	code, stderr := runKey(t, addr, 1, "s", log.newBot)
	if code != ExitOK || stderr != "" || len(log.bots) != 2 {
		t.Fatalf("exit %d, stderr %q, %d bots", code, stderr, len(log.bots))
	}
	for i, bot := range log.bots {
		if bot.info.Match != i+1 || bot.info.Seed != fmt.Sprintf("s/match/%d", i+1) || bot.chosen != 1 || !bot.matchOverCalled {
			t.Errorf("bot %d: %+v, chose %d, match over %v", i, bot.info, bot.chosen, bot.matchOverCalled)
		}
	}
}

func TestKeySeatTakenOverByAnotherStreamKeepsTheBot(t *testing.T) {
	// The stream seated first loses its line after answering; the referee seats the other
	// stream of the process where it played, and re-sends the request (its answer was lost).
	firstDone := make(chan struct{})
	addr := serve(t, func(n int, stream pb.RefereeService_PlayServer) error {
		if err := acceptKey(stream); err != nil {
			return err
		}
		switch n {
		case 1:
			defer close(firstDone)
			if err := welcomeTo(stream, "m1", 0); err != nil {
				return err
			}
			if err := stream.Send(request); err != nil {
				return err
			}
			if err := expectAnswer(stream); err != nil {
				return err
			}
			return status.Error(codes.Unavailable, "gone")
		case 2:
			<-firstDone
			if err := welcomeTo(stream, "m1", 0); err != nil {
				return err
			}
			if err := stream.Send(request); err != nil {
				return err
			}
			if err := expectAnswer(stream); err != nil {
				return err
			}
			return matchOver(stream, "m1")
		}
		return nil // the first stream, back: nothing left
	})
	log := &botLog{}
	code, stderr := runKey(t, addr, 2, "", log.newBot)
	if code != ExitOK || stderr != "" || len(log.bots) != 1 {
		t.Fatalf("exit %d, stderr %q, %d bots", code, stderr, len(log.bots))
	}
	if bot := log.bots[0]; bot.chosen != 1 || !bot.matchOverCalled {
		t.Errorf("chose %d times (the re-sent request must not ask again), match over %v", bot.chosen, bot.matchOverCalled)
	}
}

func TestKeyStreamsAndSeeds(t *testing.T) {
	var matches atomic.Int32
	addr := serve(t, func(_ int, stream pb.RefereeService_PlayServer) error {
		if err := acceptKey(stream); err != nil {
			return err
		}
		return playMatch(stream, fmt.Sprintf("m%d", matches.Add(1)), 0)
	})
	log := &botLog{}
	code, stderr := runKey(t, addr, 0, "", log.newBot) // 0: DefaultStreams
	if code != ExitOK || stderr != "" || len(log.bots) != DefaultStreams {
		t.Fatalf("exit %d, stderr %q, %d bots", code, stderr, len(log.bots))
	}
	seen := map[int]bool{}
	for _, bot := range log.bots {
		i := bot.info.Index
		seen[i] = true
		if bot.info.Count != 2 || bot.info.Match != 1 || bot.info.Seed != fmt.Sprintf("kk/%d/match/1", i) {
			t.Errorf("stream %d: %+v", i, bot.info)
		}
	}
	if !seen[0] || !seen[1] {
		t.Errorf("streams seen: %v", seen)
	}
}

func TestKeyRefusals(t *testing.T) {
	for _, c := range []struct {
		code    codes.Code
		details string
		hint    string
	}{
		{codes.Unauthenticated, "unknown_key: no entrant has this key", "the referee knows no entrant with this key"},
		{codes.PermissionDenied, "key_revoked: the organiser revoked the key of entrant 'alice'", "the organiser revoked this key"},
		{codes.ResourceExhausted, "too_many_streams: entrant 'alice' has 32 streams open already", "the referee is over a limit"},
	} {
		var attempts atomic.Int32
		addr := serve(t, func(int, pb.RefereeService_PlayServer) error {
			attempts.Add(1)
			return status.Error(c.code, c.details)
		})
		code, stderr := runKey(t, addr, 1, "", (&botLog{}).newBot)
		want := fmt.Sprintf("bot: the referee at %s ended the stream: %s: %s (%s)\n", addr, codeName(c.code), c.details, c.hint)
		if code != ExitFailed || stderr != want {
			t.Errorf("%s: exit %d, stderr %q, want %q", c.details, code, stderr, want)
		}
		if n := attempts.Load(); n != 1 {
			t.Errorf("%s: %d connection attempts, want 1 (no retry)", c.details, n)
		}
	}
}

func TestKeyRevokedBetweenMatches(t *testing.T) {
	addr := serve(t, func(n int, stream pb.RefereeService_PlayServer) error {
		if n > 1 {
			return status.Error(codes.PermissionDenied, "key_revoked: the organiser revoked the key of entrant 'alice'")
		}
		if err := acceptKey(stream); err != nil {
			return err
		}
		if err := playMatch(stream, "m1", 0); err != nil {
			return err
		}
		return status.Error(codes.Unavailable, "gone")
	})
	log := &botLog{}
	code, stderr := runKey(t, addr, 1, "", log.newBot)
	if code != ExitFailed || !strings.Contains(stderr, "PERMISSION_DENIED: key_revoked: ") || strings.Count(stderr, "\n") != 1 || len(log.bots) != 1 {
		t.Errorf("exit %d, stderr %q, %d bots", code, stderr, len(log.bots))
	}
}

func TestKeyStreamEndedMidMatch(t *testing.T) {
	addr := serve(t, func(_ int, stream pb.RefereeService_PlayServer) error {
		if err := acceptKey(stream); err != nil {
			return err
		}
		return welcomeTo(stream, "m1", 0) // then status OK, the match not over
	})
	code, stderr := runKey(t, addr, 1, "", (&botLog{}).newBot)
	if code != ExitFailed || stderr != "bot: the referee ended the stream before match m1 was over\n" {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

func TestKeyRequestBeforeWelcome(t *testing.T) {
	addr := serve(t, func(_ int, stream pb.RefereeService_PlayServer) error {
		if err := acceptKey(stream); err != nil {
			return err
		}
		if err := stream.Send(request); err != nil {
			return err
		}
		_, err := stream.Recv() // the bot leaves
		return err
	})
	log := &botLog{}
	code, stderr := runKey(t, addr, 1, "", log.newBot)
	if code != ExitFailed || !strings.Contains(stderr, "outside any match") || strings.Count(stderr, "\n") != 1 || len(log.bots) != 0 {
		t.Errorf("exit %d, stderr %q, %d bots", code, stderr, len(log.bots))
	}
}

func TestKeySettings(t *testing.T) {
	t.Setenv("TAVOLO_REFEREE", "127.0.0.1:1")
	t.Setenv("TAVOLO_TICKET", "")
	t.Setenv("TAVOLO_KEY", " kk ")
	t.Setenv("TAVOLO_STREAMS", "")
	os.Unsetenv("TAVOLO_STREAMS")
	if cfg, err := ConfigFromEnv(); err != nil || cfg.Key != "kk" || cfg.streams() != DefaultStreams {
		t.Errorf("TAVOLO_KEY alone: %+v, %v", cfg, err)
	}
	t.Setenv("TAVOLO_STREAMS", " 3 ")
	if cfg, err := ConfigFromEnv(); err != nil || cfg.streams() != 3 {
		t.Errorf("TAVOLO_STREAMS=3: %+v, %v", cfg, err)
	}
	for _, bad := range []string{"0", "-1", "1.5", "two", "+2"} {
		t.Setenv("TAVOLO_STREAMS", bad)
		if _, err := ConfigFromEnv(); err == nil || !strings.Contains(err.Error(), "TAVOLO_STREAMS must be a whole number >= 1") {
			t.Errorf("TAVOLO_STREAMS=%q: %v", bad, err)
		}
	}
	t.Setenv("TAVOLO_STREAMS", "3")
	t.Setenv("TAVOLO_KEY", "")
	t.Setenv("TAVOLO_TICKET", "ta,tb")
	if cfg, err := ConfigFromEnv(); err != nil || cfg.streams() != 2 {
		t.Errorf("TAVOLO_STREAMS with tickets (one stream each): %+v, %v", cfg, err)
	}
	os.Unsetenv("TAVOLO_STREAMS")
	t.Setenv("TAVOLO_KEY", "kk")
	if _, err := ConfigFromEnv(); err == nil || !strings.HasPrefix(err.Error(), "both TAVOLO_TICKET and TAVOLO_KEY are set") {
		t.Errorf("ticket and key: %v", err)
	}
	t.Setenv("TAVOLO_KEY", "")
	t.Setenv("TAVOLO_TICKET", "")
	if _, err := ConfigFromEnv(); err == nil || !strings.HasPrefix(err.Error(), "no ticket or key") {
		t.Errorf("neither: %v", err)
	}
}

func TestKeyAndTicketIsAUsageError(t *testing.T) {
	var attempts atomic.Int32
	addr := serve(t, func(int, pb.RefereeService_PlayServer) error { attempts.Add(1); return nil })
	var stderr bytes.Buffer
	cfg := Config{Referee: addr, Tickets: []string{"tk"}, Key: "kk", Stderr: &stderr, Name: "bot"}
	code := Run(context.Background(), cfg, (&botLog{}).newBot)
	want := "bot: both TAVOLO_TICKET and TAVOLO_KEY are set: set one (a ticket plays one match, a key all of an entrant's matches)\n"
	if code != ExitUsage || stderr.String() != want || attempts.Load() != 0 {
		t.Errorf("exit %d, stderr %q, %d attempts", code, stderr.String(), attempts.Load())
	}
}
