// Command go_load_generator is the load of `tavolo bench referee --shards N --generator go`:
// the same load as the Python generator in tournaments/benchmarks/shards.py, at a fraction
// of its CPU, so that the bench measures the referee rather than its load.
//
// It creates every match on the front with MatchService.CreateMatch, then opens every
// seat's stream at once (one connection per referee address the matches name), answers
// every request at once with its first legal action, and prints one JSON object of what
// it saw on stdout. It never waits, so every game that ends by a timeout is the referee's.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	pb "github.com/tavolo/tavolo/clients/go/gen/tavolo/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// report is what the Python side reads; times are seconds since this program started.
type report struct {
	MatchIDs          []string       `json:"match_ids"`
	Connected         int            `json:"connected"`
	Refused           map[string]int `json:"refused"`
	Broken            map[string]int `json:"broken"`
	Decisions         int            `json:"decisions"`
	FirstAnswer       float64        `json:"first_answer"`
	LastAnswer        float64        `json:"last_answer"`
	ConnectSecondsMax float64        `json:"connect_seconds_max"`
	Addresses         int            `json:"addresses"`
	// How late a 10 ms sleep of its own ran, each time, while the streams played: what
	// the generator's scheduling adds to answers, as the Python generator's loop lag.
	LagMs []float64 `json:"lag_ms"`
	Error string    `json:"error,omitempty"`
}

type seen struct {
	mu sync.Mutex
	report
	start time.Time
}

func (s *seen) welcomed(created time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Connected++
	s.ConnectSecondsMax = max(s.ConnectSecondsMax, time.Since(created).Seconds())
}

func (s *seen) answered(n int, first, last time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Decisions += n
	f, l := first.Sub(s.start).Seconds(), last.Sub(s.start).Seconds()
	if s.FirstAnswer == 0 || f < s.FirstAnswer {
		s.FirstAnswer = f
	}
	s.LastAnswer = max(s.LastAnswer, l)
}

func (s *seen) failed(welcomed bool, err error) {
	st, _ := status.FromError(err)
	key := fmt.Sprintf("%s: %s", codeName(st.Code().String()), st.Message())
	s.mu.Lock()
	defer s.mu.Unlock()
	if welcomed {
		s.Broken[key]++
	} else {
		s.Refused[key]++
	}
}

// codeName writes a status code as Python's grpc.StatusCode names it (DEADLINE_EXCEEDED).
func codeName(goName string) string {
	out := []rune{}
	for i, r := range goName {
		if i > 0 && r >= 'A' && r <= 'Z' {
			out = append(out, '_')
		}
		if r >= 'a' && r <= 'z' {
			r -= 'a' - 'A'
		}
		out = append(out, r)
	}
	return string(out)
}

// seat plays one stream: Hello, then the first legal action of every request, at once.
func seat(ctx context.Context, conn *grpc.ClientConn, ticket string, created time.Time, version uint32, compact bool, s *seen) {
	stream, err := pb.NewRefereeServiceClient(conn).Play(ctx)
	if err != nil {
		s.failed(false, err)
		return
	}
	hello := &pb.Hello{Ticket: ticket, ProtocolVersion: version, CompactObservations: compact}
	if err := stream.Send(&pb.PlayRequest{Message: &pb.PlayRequest_Hello{Hello: hello}}); err != nil {
		s.failed(false, err)
		return
	}
	welcomed, n := false, 0
	var first, last time.Time
	defer func() {
		if n > 0 {
			s.answered(n, first, last)
		}
	}()
	decision := &pb.Decision{}
	answer := &pb.PlayRequest{Message: &pb.PlayRequest_Decision{Decision: decision}}
	for {
		response, err := stream.Recv()
		if err == io.EOF {
			return
		}
		if err != nil {
			s.failed(welcomed, err)
			return
		}
		if !welcomed {
			welcomed = true
			s.welcomed(created)
		}
		if request := response.GetRequest(); request != nil {
			decision.RequestId = request.GetRequestId()
			decision.ActionId = request.GetLegalActions()[0].GetId()
			if err := stream.Send(answer); err != nil {
				s.failed(welcomed, err)
				return
			}
			last = time.Now()
			if n == 0 {
				first = last
			}
			n++
		}
	}
}

func run(front, token string, tables, deals, deadlineMs, connectMs int, version uint32, compact bool, seconds float64, s *seen) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(seconds*float64(time.Second)))
	defer cancel()
	dial := func(address string) (*grpc.ClientConn, error) {
		return grpc.NewClient(address, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithNoProxy())
	}
	admin, err := dial(front)
	if err != nil {
		return err
	}
	defer admin.Close()
	matches := pb.NewMatchServiceClient(admin)
	type made struct {
		created  time.Time
		response *pb.CreateMatchResponse
	}
	// Every match first, then every stream at once, as a user handing out the tickets of
	// a whole round would.
	all := make([]made, 0, tables)
	for t := range tables {
		request := &pb.CreateMatchRequest{
			AdminToken: token, Entries: []string{"remote", "remote"}, Game: "tressette",
			Seed: fmt.Sprintf("bench-shards-%d", t), Deals: uint32(deals),
			DeadlineMs: uint32(deadlineMs), ConnectTimeoutMs: uint32(connectMs),
		}
		created := time.Now()
		call, stop := context.WithTimeout(ctx, 30*time.Second)
		response, err := matches.CreateMatch(call, request)
		stop()
		if err != nil {
			return fmt.Errorf("CreateMatch %d: %w", t, err)
		}
		all = append(all, made{created, response})
		s.MatchIDs = append(s.MatchIDs, response.GetMatchId())
	}
	conns := map[string]*grpc.ClientConn{}
	defer func() {
		for _, conn := range conns {
			conn.Close()
		}
	}()
	playing := make(chan struct{})
	lagged := make(chan []float64)
	go func() {
		lags := []float64{}
		for {
			due := time.Now().Add(10 * time.Millisecond)
			select {
			case <-playing:
				lagged <- lags
				return
			case <-time.After(10 * time.Millisecond):
				lags = append(lags, float64(time.Since(due))/float64(time.Millisecond))
			}
		}
	}()
	var wg sync.WaitGroup
	for _, m := range all {
		address := m.response.GetReferee()
		conn, ok := conns[address]
		if !ok {
			if conn, err = dial(address); err != nil {
				return err
			}
			conns[address] = conn
		}
		for _, ticket := range m.response.GetTickets() {
			wg.Add(1)
			go func() {
				defer wg.Done()
				seat(ctx, conn, ticket.GetTicket(), m.created, version, compact, s)
			}()
		}
	}
	wg.Wait()
	close(playing)
	s.LagMs = <-lagged
	s.Addresses = len(conns)
	if ctx.Err() != nil {
		return fmt.Errorf("%d tables did not finish within %g s", tables, seconds)
	}
	return nil
}

func main() {
	front := flag.String("front", "", "the front's address (HOST:PORT)")
	tables := flag.Int("tables", 1, "matches to create, four streams each")
	deals := flag.Int("deals", 1, "deals per game")
	deadline := flag.Int("deadline-ms", 200, "each request's deadline")
	connect := flag.Int("connect-timeout-ms", 20000, "each match's connection window")
	version := flag.Uint("protocol-version", 1, "Hello.protocol_version")
	compact := flag.Bool("compact", true, "ask for compact observations")
	seconds := flag.Float64("seconds", 300, "give up after this long")
	flag.Parse()
	// One thread of goroutines and a lazier GC, unless the environment says otherwise:
	// the generator shares the machine with the shards it measures, and with more threads
	// Go's idle threads spin looking for work (110-230 µs of CPU a decision with
	// GOMAXPROCS=2 here, against 70-115 with 1 and GOGC=400; docs/benchmarks.md).
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	token := os.Getenv("TAVOLO_ADMIN_TOKEN")
	s := &seen{start: time.Now()}
	s.Refused, s.Broken = map[string]int{}, map[string]int{}
	if err := run(*front, token, *tables, *deals, *deadline, *connect, uint32(*version), *compact, *seconds, s); err != nil {
		s.Error = err.Error()
	}
	out, _ := json.Marshal(s.report)
	fmt.Println(string(out))
	if s.Error != "" {
		os.Exit(1)
	}
}
