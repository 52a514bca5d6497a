package tavolo

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/tavolo/tavolo/clients/go/gen/tavolo/v1"
)

// fakeReferee serves RefereeService.Play with play, on a loopback port.
type fakeReferee struct {
	pb.UnimplementedRefereeServiceServer
	play func(n int, stream pb.RefereeService_PlayServer) error
	mu   sync.Mutex
	n    int
}

func (f *fakeReferee) Play(stream pb.RefereeService_PlayServer) error {
	f.mu.Lock()
	f.n++
	n := f.n
	f.mu.Unlock()
	return f.play(n, stream)
}

func serve(t *testing.T, play func(n int, stream pb.RefereeService_PlayServer) error) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveOn(t, lis, play)
	return lis.Addr().String()
}

// serveUnix is serve on a Unix-domain socket in a fresh temporary folder: its path.
func serveUnix(t *testing.T, play func(n int, stream pb.RefereeService_PlayServer) error) string {
	t.Helper()
	// Not t.TempDir(): its long name could pass the 107 bytes a socket's path may have.
	dir, err := os.MkdirTemp("", "tavolo-go-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "referee.sock")
	lis, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	serveOn(t, lis, play)
	return path
}

func serveOn(t *testing.T, lis net.Listener, play func(n int, stream pb.RefereeService_PlayServer) error) {
	server := grpc.NewServer()
	pb.RegisterRefereeServiceServer(server, &fakeReferee{play: play})
	go server.Serve(lis)
	t.Cleanup(server.Stop)
}

// playOneRequest is a referee that sends one request and ends the match after the answer.
func playOneRequest(_ int, stream pb.RefereeService_PlayServer) error {
	if err := helloAndWelcome(stream); err != nil {
		return err
	}
	if err := stream.Send(request); err != nil {
		return err
	}
	answer, err := stream.Recv()
	if err != nil {
		return err
	}
	if d := answer.GetDecision(); d.GetRequestId() != 5 || d.GetActionId() != 17 {
		return status.Errorf(codes.InvalidArgument, "bad decision %v", d)
	}
	return stream.Send(&pb.PlayResponse{Events: []*pb.Event{event(&pb.MatchOver{MatchId: "m"})}})
}

// countingBot plays the first legal action and counts what it is shown.
type countingBot struct {
	mu              sync.Mutex
	chosen, events  int
	matchOverCalled bool
}

func (b *countingBot) Choose(turn *Turn) uint32 {
	b.mu.Lock()
	b.chosen++
	b.mu.Unlock()
	return turn.Legal()[0].GetId()
}
func (b *countingBot) OnEvent(*Event) { b.mu.Lock(); b.events++; b.mu.Unlock() }
func (b *countingBot) OnMatchOver()   { b.mu.Lock(); b.matchOverCalled = true; b.mu.Unlock() }

func event(e any) *pb.Event {
	switch e := e.(type) {
	case *pb.Welcome:
		return &pb.Event{Event: &pb.Event_Welcome{Welcome: e}}
	case *pb.MatchOver:
		return &pb.Event{Event: &pb.Event_MatchOver{MatchOver: e}}
	}
	return &pb.Event{} // an event kind this SDK does not know
}

var request = &pb.PlayResponse{
	Events:  []*pb.Event{event(nil)},
	Request: &pb.DecisionRequest{RequestId: 5, LegalActions: []*pb.Action{{Id: 17, Kind: KindPlay, Card: "6C", Text: "6C"}}},
}

func run(t *testing.T, addr string, bot Bot) (int, string) {
	var stderr bytes.Buffer
	cfg := Config{Referee: addr, Tickets: []string{"tk"}, Reconnect: 2 * time.Second, Stderr: &stderr, Name: "bot"}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	code := Run(ctx, cfg, func(StreamInfo) Bot { return bot })
	return code, stderr.String()
}

// helloAndWelcome reads the Hello, checks it, and sends the Welcome.
func helloAndWelcome(stream pb.RefereeService_PlayServer) error {
	msg, err := stream.Recv()
	if err != nil {
		return err
	}
	if msg.GetHello().GetTicket() != "tk" || msg.GetHello().GetProtocolVersion() != 1 {
		return status.Error(codes.InvalidArgument, "no_hello: bad hello")
	}
	return stream.Send(&pb.PlayResponse{Events: []*pb.Event{event(&pb.Welcome{MatchId: "m"})}})
}

func TestRunPlaysToMatchOverAndReconnects(t *testing.T) {
	addr := serve(t, func(n int, stream pb.RefereeService_PlayServer) error {
		if err := helloAndWelcome(stream); err != nil {
			return err
		}
		if err := stream.Send(request); err != nil {
			return err
		}
		if n == 1 { // drop the line before the answer: the bot reconnects, the request comes again
			return status.Error(codes.Unavailable, "gone")
		}
		answer, err := stream.Recv()
		if err != nil {
			return err
		}
		if d := answer.GetDecision(); d.GetRequestId() != 5 || d.GetActionId() != 17 {
			return status.Errorf(codes.InvalidArgument, "bad decision %v", d)
		}
		return stream.Send(&pb.PlayResponse{Events: []*pb.Event{event(&pb.MatchOver{MatchId: "m"})}})
	})
	bot := &countingBot{}
	code, stderr := run(t, addr, bot)
	if code != ExitOK || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	// Welcome twice, the unknown event once (not again with the re-sent request), MatchOver.
	if bot.chosen != 1 || bot.events != 4 || !bot.matchOverCalled {
		t.Errorf("chosen %d, events %d, match over %v", bot.chosen, bot.events, bot.matchOverCalled)
	}
}

func TestRunRefused(t *testing.T) {
	addr := serve(t, func(int, pb.RefereeService_PlayServer) error {
		return status.Error(codes.Unauthenticated, "unknown_ticket: unknown ticket")
	})
	code, stderr := run(t, addr, &countingBot{})
	want := "bot: the referee at " + addr + " ended the stream: UNAUTHENTICATED: unknown_ticket: unknown ticket (the referee does not know this ticket)\n"
	if code != ExitFailed || stderr != want {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

func TestRunUsage(t *testing.T) {
	var stderr bytes.Buffer
	code := Run(context.Background(), Config{Referee: "127.0.0.1:1", Stderr: &stderr, Name: "bot"}, nil)
	if code != ExitUsage || strings.Count(stderr.String(), "\n") != 1 {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
}

func TestRunOverUnixSocket(t *testing.T) {
	path := serveUnix(t, playOneRequest)
	for _, addr := range []string{"unix:" + path, "unix://" + path} {
		bot := &countingBot{}
		code, stderr := run(t, addr, bot)
		if code != ExitOK || stderr != "" || bot.chosen != 1 || !bot.matchOverCalled {
			t.Errorf("%s: exit %d, stderr %q, chosen %d, match over %v", addr, code, stderr, bot.chosen, bot.matchOverCalled)
		}
	}
}

func TestRunOverTCP(t *testing.T) {
	for _, host := range []string{"127.0.0.1", "localhost"} {
		_, port, _ := net.SplitHostPort(serve(t, playOneRequest))
		addr := net.JoinHostPort(host, port)
		bot := &countingBot{}
		code, stderr := run(t, addr, bot)
		if code != ExitOK || stderr != "" || bot.chosen != 1 {
			t.Errorf("%s: exit %d, stderr %q, chosen %d", addr, code, stderr, bot.chosen)
		}
	}
}

func TestRefereeAddresses(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:50051":               "",
		"referee.example.org:443":       "",
		"[::1]:50051":                   "",
		"unix:/run/tavolo/referee.sock": "",
		"unix:///tmp/x/referee.sock":    "",
		"":                              "no referee address: set TAVOLO_REFEREE to host:port or unix:/path",
		"unix:":                         "bad referee address",
		"unix:/":                        "bad referee address",
		"unix:referee.sock":             "bad referee address",
		"unix://host/referee.sock":      "bad referee address",
	} {
		err := Config{Referee: addr, Tickets: []string{"tk"}}.check()
		switch {
		case want == "" && err != nil:
			t.Errorf("%q: refused: %v", addr, err)
		case want != "" && (err == nil || !strings.HasPrefix(err.Error(), want)):
			t.Errorf("%q: got %v, want %q...", addr, err, want)
		case want != "" && !strings.Contains(err.Error(), "host:port or unix:/path"):
			t.Errorf("%q: %v does not say the address format", addr, err)
		}
	}
}

func TestConfigFromEnvUnix(t *testing.T) {
	t.Setenv("TAVOLO_REFEREE", " unix:/tmp/referee.sock ")
	t.Setenv("TAVOLO_TICKET", "tk")
	cfg, err := ConfigFromEnv()
	if err != nil || cfg.Referee != "unix:/tmp/referee.sock" {
		t.Fatalf("%+v, %v", cfg, err)
	}
}

func TestTLSExpected(t *testing.T) {
	closed := status.New(codes.Unavailable, `connection error: desc = "error reading server preface: EOF"`)
	reset := status.New(codes.Unavailable, `connection error: desc = "error reading server preface: connection reset by peer"`)
	refused := status.New(codes.Unavailable, `connection error: desc = "transport: Error while dialing: dial tcp 127.0.0.1:1: connect: connection refused"`)
	for _, c := range []struct {
		referee string
		tls     bool
		st      *status.Status
		want    bool
	}{
		{"127.0.0.1:50051", false, closed, true},
		{"referee.example.org:443", false, reset, true},
		{"unix:/run/tavolo/referee.sock", false, closed, false}, // a slot's socket never serves TLS
		{"unix:///run/tavolo/referee.sock", false, closed, false},
		{"127.0.0.1:50051", true, closed, false},   // TLS spoken already: something else closed it
		{"127.0.0.1:50051", false, refused, false}, // a restarting referee
		{"127.0.0.1:50051", false, status.New(codes.Unavailable, "gone"), false},
		{"127.0.0.1:50051", false, status.New(codes.Internal, closed.Message()), false},
		{"127.0.0.1:50051", false, status.New(codes.Unauthenticated, "unknown_ticket: unknown ticket"), false},
	} {
		if got := tlsExpected(c.referee, c.tls, c.st); got != c.want {
			t.Errorf("%s, tls %v, %s: %s: got %v", c.referee, c.tls, codeName(c.st.Code()), c.st.Message(), got)
		}
	}
}

// closeConnections accepts on lis and closes each connection once its first bytes are
// read, as a referee serving TLS does to a plain-text bot; after n connections (n < 0:
// never) it closes lis too, and later connections are refused. It returns how many
// connections it accepted.
func closeConnections(t *testing.T, lis net.Listener, n int) func() int {
	t.Cleanup(func() { lis.Close() })
	var mu sync.Mutex
	accepted := 0
	go func() {
		for {
			conn, err := lis.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			accepted++
			last := accepted == n
			mu.Unlock()
			if last {
				lis.Close()
			}
			conn.Read(make([]byte, 64))
			conn.Close()
		}
	}()
	return func() int { mu.Lock(); defer mu.Unlock(); return accepted }
}

func TestRunPlainTextToTLSReferee(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := closeConnections(t, lis, -1)
	addr := lis.Addr().String()
	start := time.Now()
	code, stderr := run(t, addr, &countingBot{})
	// "EOF", or "connection reset by peer" when the close finds bytes unread.
	head := "bot: the referee at " + addr + " closed the connection before a word was said (UNAVAILABLE: connection error: desc = \"error reading server preface: "
	tail := "\"): it serves TLS, and this bot spoke plain text; give it the referee's certificate in TAVOLO_TLS_CA\n"
	if code != ExitFailed || !strings.HasPrefix(stderr, head) || !strings.HasSuffix(stderr, tail) || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	// Three attempts, 0.1 s and 0.2 s apart. They made two connections or three: an attempt
	// while grpc-go's channel waits (its own backoff, with jitter) to connect again fails at
	// once with the last connection's error.
	if elapsed, n := time.Since(start), accepted(); elapsed < 300*time.Millisecond || elapsed > time.Second || n < 2 || n > 3 {
		t.Fatalf("the line after %v and %d connections", elapsed, n)
	}
}

// A referee that goes down in the middle of a connection closes it at once too: one such
// close, then a refused connection, is no reason to speak of TLS.
func TestRunClosedOnceThenRefused(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := closeConnections(t, lis, 1)
	addr := lis.Addr().String()
	code, stderr := run(t, addr, &countingBot{})
	if code != ExitFailed || !strings.HasPrefix(stderr, "bot: cannot reach the referee at "+addr+" (UNAVAILABLE: ") ||
		!strings.Contains(stderr, "connection refused") || !strings.Contains(stderr, "gave up after retrying") ||
		strings.Contains(stderr, "TLS") || strings.Count(stderr, "\n") != 1 || accepted() != 1 {
		t.Fatalf("exit %d, %d connections, stderr %q", code, accepted(), stderr)
	}
}

func TestRunUnixSocketClosedIsRetried(t *testing.T) {
	dir, err := os.MkdirTemp("", "tavolo-go-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	lis, err := net.Listen("unix", filepath.Join(dir, "referee.sock"))
	if err != nil {
		t.Fatal(err)
	}
	accepted := closeConnections(t, lis, -1)
	addr := "unix:" + lis.Addr().String()
	code, stderr := run(t, addr, &countingBot{})
	if code != ExitFailed || !strings.HasPrefix(stderr, "bot: cannot reach the referee at "+addr+" (UNAVAILABLE: ") ||
		!strings.Contains(stderr, "gave up after retrying") || strings.Contains(stderr, "TLS") || accepted() < 2 {
		t.Fatalf("exit %d, %d connections, stderr %q", code, accepted(), stderr)
	}
}
