package tavolo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/grpclog"
	"google.golang.org/grpc/status"

	pb "github.com/tavolo/tavolo/clients/go/gen/tavolo/v1"
)

// Process exit codes, as Run returns them.
const (
	ExitOK     = 0 // every stream ended after MatchOver
	ExitFailed = 1 // a stream failed: refused, connection lost for good, or the bot panicked
	ExitUsage  = 2 // settings missing or wrong: nothing was played
)

// DefaultReconnect is how long a broken stream is retried (TAVOLO_RECONNECT_SECONDS).
const DefaultReconnect = 10 * time.Second

const (
	firstDelay = 100 * time.Millisecond
	maxDelay   = time.Second
)

// Config says where to connect and what to play. ConfigFromEnv fills it from the environment.
type Config struct {
	Referee   string        // host:port, or unix:/path of a Unix-domain socket (TAVOLO_REFEREE)
	Tickets   []string      // one stream each (TAVOLO_TICKET, comma-separated)
	TLSCAFile string        // PEM root certificate: use TLS (TAVOLO_TLS_CA); "" for plaintext
	Seed      string        // TAVOLO_SEED as given ("" when unset: each stream seeds from its own ticket)
	Reconnect time.Duration // how long to retry a broken stream (TAVOLO_RECONNECT_SECONDS)
	Stderr    io.Writer     // where the one-line reports go (os.Stderr if nil)
	Name      string        // prefix of those lines (the program's name if "")
}

// ConfigFromEnv reads TAVOLO_REFEREE, TAVOLO_TICKET, TAVOLO_TLS_CA, TAVOLO_SEED and
// TAVOLO_RECONNECT_SECONDS. The error says, in one line, what is missing or wrong.
func ConfigFromEnv() (Config, error) {
	cfg := Config{
		Referee:   strings.TrimSpace(os.Getenv("TAVOLO_REFEREE")),
		TLSCAFile: strings.TrimSpace(os.Getenv("TAVOLO_TLS_CA")),
		Seed:      os.Getenv("TAVOLO_SEED"),
		Reconnect: DefaultReconnect,
	}
	for _, ticket := range strings.Split(os.Getenv("TAVOLO_TICKET"), ",") {
		if ticket = strings.TrimSpace(ticket); ticket != "" {
			cfg.Tickets = append(cfg.Tickets, ticket)
		}
	}
	if text := strings.TrimSpace(os.Getenv("TAVOLO_RECONNECT_SECONDS")); text != "" {
		seconds, err := strconv.ParseFloat(text, 64)
		if err != nil || !(seconds >= 0) || seconds > 1e6 {
			return cfg, fmt.Errorf("TAVOLO_RECONNECT_SECONDS must be seconds >= 0, not %q", text)
		}
		cfg.Reconnect = time.Duration(seconds * float64(time.Second))
	}
	return cfg, cfg.check()
}

func (cfg Config) check() error {
	if cfg.Referee == "" {
		return errors.New("no referee address: set TAVOLO_REFEREE to host:port or unix:/path")
	}
	if _, ok := unixSocketPath(cfg.Referee); !ok && isUnixTarget(cfg.Referee) {
		return fmt.Errorf("bad referee address %q: set TAVOLO_REFEREE to host:port or unix:/path (an absolute path)",
			cfg.Referee)
	}
	if len(cfg.Tickets) == 0 {
		return errors.New("no ticket: set TAVOLO_TICKET (several tickets: comma-separated)")
	}
	return nil
}

// isUnixTarget tells whether addr names a Unix-domain socket (gRPC's unix: scheme).
func isUnixTarget(addr string) bool {
	return strings.HasPrefix(strings.ToLower(addr), "unix:")
}

// unixSocketPath is the socket's path of a unix:/path or unix:///path address; ok is false
// for any other address, a relative path or one with an authority (unix://host/path).
func unixSocketPath(addr string) (path string, ok bool) {
	if !isUnixTarget(addr) {
		return "", false
	}
	path = addr[len("unix:"):]
	if strings.HasPrefix(path, "//") {
		path = path[2:] // unix:///path: an empty authority, then the path
	}
	if !strings.HasPrefix(path, "/") || path == "/" {
		return "", false
	}
	return path, true
}

// Main plays every ticket of the environment's settings, a fresh Bot each, and exits the
// process with Run's code. SIGINT and SIGTERM end the streams. It silences grpc-go's own
// logging unless GRPC_GO_LOG_SEVERITY_LEVEL is set.
func Main(newBot NewBot) {
	cfg, err := ConfigFromEnv()
	if err != nil {
		newReporter(cfg).say(err.Error())
		os.Exit(ExitUsage)
	}
	if os.Getenv("GRPC_GO_LOG_SEVERITY_LEVEL") == "" {
		// grpc-go's own logging would break the one-line-per-problem promise on stderr.
		// (Not in Run: grpclog must be set before gRPC runs, and Run may run beside it.)
		grpclog.SetLoggerV2(grpclog.NewLoggerV2(io.Discard, io.Discard, io.Discard))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Run(ctx, cfg, newBot)
	stop()
	os.Exit(code)
}

// Run plays cfg.Tickets concurrently, one stream and one newBot(...) each, until every
// match is over, and returns the exit code: ExitOK when every stream ended after MatchOver,
// ExitFailed when one failed, ExitUsage when cfg is incomplete.
func Run(ctx context.Context, cfg Config, newBot NewBot) int {
	out := newReporter(cfg)
	if err := cfg.check(); err != nil {
		out.say(err.Error())
		return ExitUsage
	}
	creds := insecure.NewCredentials()
	if cfg.TLSCAFile != "" {
		tls, err := credentials.NewClientTLSFromFile(cfg.TLSCAFile, "")
		if err != nil {
			out.say(fmt.Sprintf("cannot use TAVOLO_TLS_CA %q: %v", cfg.TLSCAFile, err))
			return ExitUsage
		}
		creds = tls
	}
	// The channel's own reconnection backoff (1 s growing to 120 s by default) must not be
	// slower than ours: a channel in backoff fails every call at once.
	options := []grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: firstDelay, Multiplier: 2, Jitter: 0.2, MaxDelay: maxDelay},
			MinConnectTimeout: 5 * time.Second,
		}),
	}
	if isUnixTarget(cfg.Referee) {
		// grpc-go's own "unix" resolver takes the path as it is: no DNS. No HTTPS_PROXY
		// lookup either, for a socket is never reached through a proxy.
		options = append(options, grpc.WithNoProxy())
	}
	conn, err := grpc.NewClient(cfg.Referee, options...)
	if err != nil {
		out.say(fmt.Sprintf("bad referee address %q: %v", cfg.Referee, err))
		return ExitUsage
	}
	defer conn.Close()
	client := pb.NewRefereeServiceClient(conn)

	count := len(cfg.Tickets)
	codes := make([]int, count)
	var wg sync.WaitGroup
	for i, ticket := range cfg.Tickets {
		s := &stream{client: client, ticket: ticket, referee: cfg.Referee, reconnect: cfg.Reconnect, out: out}
		if count > 1 {
			s.label = fmt.Sprintf("ticket %d/%d: ", i+1, count)
		}
		info := StreamInfo{Ticket: ticket, Index: i, Count: count, Seed: streamSeed(cfg.Seed, ticket, i, count)}
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = s.run(ctx, info, newBot)
		}()
	}
	wg.Wait()
	worst := ExitOK
	for _, code := range codes {
		worst = max(worst, code)
	}
	return worst
}

// reporter writes one line per problem to stderr, whole lines even from several streams.
type reporter struct {
	mu   sync.Mutex
	w    io.Writer
	name string
}

func newReporter(cfg Config) *reporter {
	r := &reporter{w: cfg.Stderr, name: cfg.Name}
	if r.w == nil {
		r.w = os.Stderr
	}
	if r.name == "" {
		r.name = filepath.Base(os.Args[0])
	}
	return r
}

func (r *reporter) say(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(r.w, "%s: %s\n", r.name, strings.Join(strings.Fields(line), " "))
}

func (r *reporter) dump(text []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.w.Write(text)
}

// errBotPanicked ends a stream whose bot panicked (already reported).
var errBotPanicked = errors.New("the bot panicked")

// stream is one ticket's stream, reconnected while the match is not over.
type stream struct {
	client    pb.RefereeServiceClient
	ticket    string
	referee   string
	reconnect time.Duration
	out       *reporter
	label     string
	bot       Bot

	matchOver   bool
	established bool // the current session has read a message
	seenRequest uint64
	answered    uint64 // the request last answered, and with what
	answer      uint32
}

func (s *stream) say(line string) { s.out.say(s.label + line) }

// transient are the statuses of a broken connection or a restarting referee: worth
// retrying. Every other status is the referee's answer, and retrying would get it again.
func transient(code codes.Code) bool {
	switch code {
	case codes.Unavailable, codes.Canceled, codes.Internal, codes.Aborted:
		return true
	}
	return false
}

// retryable tells whether a stream that ended with st is opened again (within
// TAVOLO_RECONNECT_SECONDS): a broken connection, or ALREADY_EXISTS "seat_taken: ..."
// (another connection holds the seat, e.g. the referee has not yet noticed a drop).
// Every other refusal ends the stream at once: "ticket_used: ..." (the match of this
// ticket is over), PERMISSION_DENIED "wrong_socket: ..." or "process_gone: ...",
// UNAUTHENTICATED "unknown_ticket: ...", and the rest.
func retryable(st *status.Status) bool {
	if st.Code() == codes.AlreadyExists {
		return reasonOf(st.Message()) == "seat_taken"
	}
	return transient(st.Code())
}

// reasonOf is the reason word the referee's status details start with ("ticket_used").
func reasonOf(details string) string {
	reason, _, _ := strings.Cut(details, ":")
	return strings.TrimSpace(reason)
}

// hints say, by reason word (or else by status code), what a refusal means.
var reasonHints = map[string]string{
	"ticket_used":    "the match of this ticket is over",
	"seat_taken":     "another connection is playing this ticket",
	"wrong_socket":   "this ticket works only on the socket the referee made for its bot",
	"process_gone":   "the bot process this ticket was made for has ended",
	"unknown_ticket": "the referee does not know this ticket",
}

var hints = map[codes.Code]string{
	codes.Unauthenticated:    "the referee does not know this ticket",
	codes.PermissionDenied:   "the referee does not accept this ticket here",
	codes.AlreadyExists:      "another connection is playing this ticket, or its match is over",
	codes.InvalidArgument:    "the referee refused a message of this bot",
	codes.FailedPrecondition: "the referee cannot play this ticket now",
	codes.ResourceExhausted:  "the referee is over a limit",
}

func hintFor(st *status.Status) string {
	if hint, ok := reasonHints[reasonOf(st.Message())]; ok {
		return hint
	}
	return hints[st.Code()]
}

func (s *stream) run(ctx context.Context, info StreamInfo, newBot NewBot) (code int) {
	defer func() {
		if r := recover(); r != nil {
			s.panicked("NewBot", r)
			code = ExitFailed
		}
	}()
	s.bot = newBot(info)
	if s.bot == nil {
		s.say("NewBot returned no bot")
		return ExitFailed
	}
	var giveUpAt time.Time
	delay := firstDelay
	everEstablished := false
	for {
		s.established = false
		err := s.session(ctx)
		switch {
		case s.matchOver:
			return ExitOK // how the stream ended no longer matters
		case errors.Is(err, errBotPanicked):
			return ExitFailed
		case ctx.Err() != nil:
			s.say("interrupted before the match was over")
			return ExitFailed
		case err == nil:
			s.say("the referee ended the stream before the match was over")
			return ExitFailed
		}
		st := status.Convert(err)
		if !retryable(st) {
			line := fmt.Sprintf("the referee at %s ended the stream: %s: %s", s.referee, codeName(st.Code()), st.Message())
			if hint := hintFor(st); hint != "" {
				line += " (" + hint + ")"
			}
			s.say(line)
			return ExitFailed
		}
		everEstablished = everEstablished || s.established
		now := time.Now()
		if s.established || giveUpAt.IsZero() {
			giveUpAt, delay = now.Add(s.reconnect), firstDelay
		}
		if now.Add(delay).After(giveUpAt) {
			what := "cannot reach the referee"
			switch {
			case st.Code() == codes.AlreadyExists:
				what = "another connection kept the seat of this ticket"
			case everEstablished:
				what = "lost the referee"
			}
			s.say(fmt.Sprintf("%s at %s (%s: %s); gave up after retrying for %v (TAVOLO_RECONNECT_SECONDS)",
				what, s.referee, codeName(st.Code()), st.Message(), s.reconnect))
			return ExitFailed
		}
		select {
		case <-time.After(delay):
		case <-ctx.Done():
		}
		delay = min(delay*2, maxDelay)
	}
}

// session is one stream, from Hello to its end: nil if it ended with status OK.
func (s *stream) session(parent context.Context) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel() // tells the referee we left, unless the call is over already
	call, err := s.client.Play(ctx)
	if err != nil {
		return err
	}
	hello := &pb.PlayRequest{Message: &pb.PlayRequest_Hello{Hello: &pb.Hello{Ticket: s.ticket, ProtocolVersion: ProtocolVersion}}}
	if err := call.Send(hello); err != nil && err != io.EOF {
		return err // io.EOF: the call is over, and Recv tells how
	}
	for {
		response, err := call.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		s.established = true
		decision, err := s.handle(response)
		if err != nil {
			return err
		}
		if decision != nil {
			if err := call.Send(&pb.PlayRequest{Message: &pb.PlayRequest_Decision{Decision: decision}}); err != nil && err != io.EOF {
				return err
			}
		}
	}
}

// handle passes the events to the bot, and returns the decision to send if the response
// asks for one.
func (s *stream) handle(response *pb.PlayResponse) (decision *pb.Decision, err error) {
	defer func() {
		if r := recover(); r != nil {
			s.panicked("the bot", r)
			decision, err = nil, errBotPanicked
		}
	}()
	request := response.GetRequest()
	// After a reconnection the referee re-sends the open request with its events: the bot
	// has heard those events already if it saw this request.
	repeated := request != nil && request.GetRequestId() == s.seenRequest
	if request != nil {
		s.seenRequest = request.GetRequestId()
	}
	if !repeated {
		for _, event := range response.GetEvents() {
			s.event(event)
		}
	}
	if request == nil {
		return nil, nil
	}
	id := request.GetRequestId()
	if s.answered != id || id == 0 {
		chosen := s.bot.Choose(NewTurn(request))
		legal := false
		for _, action := range request.GetLegalActions() {
			legal = legal || action.GetId() == chosen
		}
		if !legal {
			s.say(fmt.Sprintf("Choose returned %d, not a legal action id; sending it anyway", chosen))
		}
		s.answered, s.answer = id, chosen
	}
	// A request re-sent after a reconnection gets the same answer without asking the bot twice.
	return &pb.Decision{RequestId: id, ActionId: s.answer}, nil
}

func (s *stream) event(event *pb.Event) {
	if r := event.GetActionRejected(); r != nil {
		left := ""
		if r.GetReason() != "stale_request" { // a stale answer closes no attempt: no count to show
			left = fmt.Sprintf("; %d attempts left", r.GetAttemptsLeft())
		}
		s.say(fmt.Sprintf("action %d was rejected (%s: %s)%s", r.GetActionId(), r.GetReason(), r.GetMessage(), left))
	}
	if e := event.GetError(); e != nil {
		s.say(fmt.Sprintf("referee reports %s: %s", e.GetReason(), e.GetMessage()))
	}
	if h, ok := s.bot.(EventHandler); ok {
		h.OnEvent(event)
	}
	if event.GetMatchOver() != nil && !s.matchOver {
		s.matchOver = true
		if h, ok := s.bot.(MatchOverHandler); ok {
			h.OnMatchOver()
		}
	}
}

func (s *stream) panicked(who string, value any) {
	s.say(fmt.Sprintf("%s panicked: %v; this stream stops (stack below)", who, value))
	s.out.dump(debug.Stack())
}

// codeName is a status code as the gRPC spec spells it, e.g. UNAUTHENTICATED.
func codeName(code codes.Code) string {
	names := [...]string{"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
		"NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
		"FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL",
		"UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"}
	if int(code) < len(names) {
		return names[code]
	}
	return code.String()
}
