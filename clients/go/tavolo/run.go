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
	ExitOK     = 0 // every stream ended after MatchOver (with a key: when the referee ended it with OK)
	ExitFailed = 1 // a stream failed: refused, connection lost for good, or the bot panicked
	ExitUsage  = 2 // settings missing or wrong: nothing was played
)

// DefaultReconnect is how long a broken stream is retried (TAVOLO_RECONNECT_SECONDS).
const DefaultReconnect = 10 * time.Second

// DefaultStreams is how many streams an entrant key opens (TAVOLO_STREAMS): a partnership
// game seats an entrant on two streams at once.
const DefaultStreams = 2

const (
	firstDelay = 100 * time.Millisecond
	maxDelay   = time.Second
)

// tlsExpectedAfter is how many attempts in a row, closed at once, tell a bot without
// TAVOLO_TLS_CA that the referee serves TLS. One such close also happens when a referee
// goes down in the middle of a connection, as a restarting tournament runner does; three
// in a row take about 0.3 s with the usual backoff.
const tlsExpectedAfter = 3

// Config says where to connect and what to play. ConfigFromEnv fills it from the environment.
type Config struct {
	Referee   string        // host:port, or unix:/path of a Unix-domain socket (TAVOLO_REFEREE)
	Tickets   []string      // one stream each (TAVOLO_TICKET, comma-separated)
	Key       string        // an entrant key instead of tickets (TAVOLO_KEY)
	Streams   int           // streams to open with Key (TAVOLO_STREAMS; 0: DefaultStreams)
	TLSCAFile string        // PEM root certificate: use TLS (TAVOLO_TLS_CA); "" for plaintext
	Seed      string        // TAVOLO_SEED as given ("" when unset: each stream seeds from its own ticket)
	Reconnect time.Duration // how long to retry a broken stream (TAVOLO_RECONNECT_SECONDS)
	Stderr    io.Writer     // where the one-line reports go (os.Stderr if nil)
	Name      string        // prefix of those lines (the program's name if "")
}

// ConfigFromEnv reads TAVOLO_REFEREE, TAVOLO_TICKET or TAVOLO_KEY (and TAVOLO_STREAMS),
// TAVOLO_TLS_CA, TAVOLO_SEED and TAVOLO_RECONNECT_SECONDS. The error says, in one line,
// what is missing or wrong.
func ConfigFromEnv() (Config, error) {
	cfg := Config{
		Referee:   strings.TrimSpace(os.Getenv("TAVOLO_REFEREE")),
		Key:       strings.TrimSpace(os.Getenv("TAVOLO_KEY")),
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
	if text := strings.TrimSpace(os.Getenv("TAVOLO_STREAMS")); text != "" {
		streams, err := strconv.Atoi(text)
		if err != nil || streams < 1 || strings.Trim(text, "0123456789") != "" {
			return cfg, fmt.Errorf("TAVOLO_STREAMS must be a whole number >= 1, not %q", text)
		}
		if cfg.Key != "" { // with tickets, each ticket is one stream
			cfg.Streams = streams
		}
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
	switch {
	case cfg.Key != "" && len(cfg.Tickets) > 0:
		return errors.New("both TAVOLO_TICKET and TAVOLO_KEY are set: set one (a ticket plays one match, a key all of an entrant's matches)")
	case cfg.Key == "" && len(cfg.Tickets) == 0:
		return errors.New("no ticket or key: set TAVOLO_TICKET (several tickets: comma-separated) or TAVOLO_KEY (a tournament's entrant key)")
	case cfg.Streams < 0:
		return fmt.Errorf("streams must be a whole number >= 1, not %d", cfg.Streams)
	case cfg.Key == "" && cfg.Streams != 0:
		return errors.New("streams are set without a key: with tickets, each ticket is one stream")
	}
	return nil
}

// streams is how many streams cfg opens.
func (cfg Config) streams() int {
	switch {
	case cfg.Key == "":
		return len(cfg.Tickets)
	case cfg.Streams == 0:
		return DefaultStreams
	}
	return cfg.Streams
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

// Main plays every ticket of the environment's settings, a fresh Bot each (with a key:
// every match of the entrant, a fresh Bot each), and exits the process with Run's code.
// SIGINT and SIGTERM end the streams. It silences grpc-go's own logging unless
// GRPC_GO_LOG_SEVERITY_LEVEL is set.
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
// ExitFailed when one failed, ExitUsage when cfg is incomplete. With cfg.Key it opens
// cfg.Streams streams with the key instead, and each plays the matches the referee seats
// it in, one newBot(...) per match, until the referee ends it with status OK.
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

	count := cfg.streams()
	codes := make([]int, count)
	shared := &seats{open: map[seatID]*seat{}}
	var wg sync.WaitGroup
	for i := range count {
		s := &stream{client: client, referee: cfg.Referee, tls: cfg.TLSCAFile != "", reconnect: cfg.Reconnect, out: out, newBot: newBot}
		if cfg.Key == "" {
			s.ticket = cfg.Tickets[i]
			s.info = StreamInfo{Ticket: s.ticket, Index: i, Count: count, Seed: streamSeed(cfg.Seed, s.ticket, i, count)}
			if count > 1 {
				s.label = fmt.Sprintf("ticket %d/%d: ", i+1, count)
			}
		} else {
			s.key, s.seats = cfg.Key, shared
			s.info = StreamInfo{Key: cfg.Key, Index: i, Count: count, Seed: streamSeed(cfg.Seed, cfg.Key, i, count)}
			if count > 1 {
				s.label = fmt.Sprintf("key stream %d/%d: ", i+1, count)
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = s.run(ctx)
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

// errStreamFailed ends a stream for a reason already reported.
var errStreamFailed = errors.New("the stream failed")

// seatID names one player slot of one match.
type seatID struct {
	match string
	slot  uint32
}

// seat is one Bot playing one slot of one match, and what it has answered.
type seat struct {
	mu          sync.Mutex // with a key, another stream of the process may take the seat over
	id          seatID
	bot         Bot
	over        bool   // MatchOver seen
	seenRequest uint64 // the request last seen
	answered    uint64 // the request last answered, and with what
	answer      uint32
}

// seats are the seats of a key's matches not over yet, shared by the process's streams:
// a stream that reconnects mid-match may be seated again where another of them played.
type seats struct {
	mu   sync.Mutex
	open map[seatID]*seat
}

// stream is one ticket's stream, reconnected while the match is not over; or one of a
// key's streams, reconnected until the referee ends it with OK.
type stream struct {
	client    pb.RefereeServiceClient
	ticket    string
	key       string
	referee   string
	tls       bool // TAVOLO_TLS_CA is set
	reconnect time.Duration
	out       *reporter
	label     string
	newBot    NewBot
	info      StreamInfo // with a key: the stream's; each match's Bot gets a copy
	seats     *seats     // with a key
	matches   int        // with a key: matches this stream started a Bot for
	entrant   string     // with a key: from KeyAccepted
	cur       *seat      // the seat played now (with a key: nil between matches)

	established bool   // the current session has read a message
	seen        merger // the current session's, to complete its compact observations
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
// UNAUTHENTICATED "unknown_ticket: ..." or "unknown_key: ...", PERMISSION_DENIED
// "key_revoked: ...", and the rest.
func retryable(st *status.Status) bool {
	if st.Code() == codes.AlreadyExists {
		return reasonOf(st.Message()) == "seat_taken"
	}
	return transient(st.Code())
}

// tlsExpected tells whether a TCP connection made without TLS was closed at once, as a
// referee that serves TLS closes a plain-text one. grpc-go then says "error reading server
// preface: EOF" (or the read's error, such as a reset), on every attempt; a restarting
// referee refuses the connection instead, though the one it was serving may close so too:
// hence tlsExpectedAfter such attempts in a row. A slot's own Unix socket never serves
// TLS: there a closed connection means something else, and is retried.
func tlsExpected(referee string, tls bool, st *status.Status) bool {
	closed := strings.Contains(st.Message(), "error reading server preface")
	return !tls && !isUnixTarget(referee) && st.Code() == codes.Unavailable && closed
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
	"unknown_key":    "the referee knows no entrant with this key",
	"key_revoked":    "the organiser revoked this key",
}

var hints = map[codes.Code]string{
	codes.Unauthenticated:    "the referee does not know this ticket",
	codes.PermissionDenied:   "the referee does not accept this ticket here",
	codes.AlreadyExists:      "another connection is playing this ticket, or its match is over",
	codes.InvalidArgument:    "the referee refused a message of this bot",
	codes.FailedPrecondition: "the referee cannot play this ticket now",
	codes.ResourceExhausted:  "the referee is over a limit",
}

// keyHints are the hints by status code for a key's stream.
var keyHints = map[codes.Code]string{
	codes.Unauthenticated:    "the referee knows no entrant with this key",
	codes.PermissionDenied:   "the referee does not accept this key",
	codes.AlreadyExists:      "another connection is playing this seat",
	codes.InvalidArgument:    "the referee refused a message of this bot",
	codes.FailedPrecondition: "the referee cannot play this key now",
	codes.ResourceExhausted:  "the referee is over a limit",
}

func (s *stream) hintFor(st *status.Status) string {
	if hint, ok := reasonHints[reasonOf(st.Message())]; ok {
		return hint
	}
	if s.key != "" {
		return keyHints[st.Code()]
	}
	return hints[st.Code()]
}

func (s *stream) run(ctx context.Context) (code int) {
	if s.key == "" {
		bot, err := s.makeBot(s.info)
		if err != nil {
			return ExitFailed
		}
		s.cur = &seat{bot: bot}
	}
	var giveUpAt time.Time
	delay := firstDelay
	everEstablished := false
	closedAtOnce := 0 // failed attempts in a row closed at once, as TLS closes plain text
	for {
		s.established = false
		err := s.session(ctx)
		switch {
		case s.key == "" && s.cur.over:
			return ExitOK // how the stream ended no longer matters
		case errors.Is(err, errBotPanicked), errors.Is(err, errStreamFailed):
			return ExitFailed
		case ctx.Err() != nil && s.key == "":
			s.say("interrupted before the match was over")
			return ExitFailed
		case ctx.Err() != nil:
			s.say("interrupted before the referee ended the key's stream")
			return ExitFailed
		case err == nil && s.key == "":
			s.say("the referee ended the stream before the match was over")
			return ExitFailed
		case err == nil && s.cur != nil:
			s.say(fmt.Sprintf("the referee ended the stream before match %s was over", s.cur.id.match))
			return ExitFailed
		case err == nil:
			return ExitOK // the entrant has no match left
		}
		st := status.Convert(err)
		if !retryable(st) {
			line := fmt.Sprintf("the referee at %s ended the stream: %s: %s", s.referee, codeName(st.Code()), st.Message())
			if hint := s.hintFor(st); hint != "" {
				line += " (" + hint + ")"
			}
			s.say(line)
			return ExitFailed
		}
		everEstablished = everEstablished || s.established
		if !everEstablished && tlsExpected(s.referee, s.tls, st) {
			closedAtOnce++
		} else {
			closedAtOnce = 0
		}
		// Retrying cannot help: the referee wants TLS, which only TAVOLO_TLS_CA gives.
		// (An attempt while grpc-go's channel waits to connect again fails with the last
		// connection's error: three attempts are two connections or three.)
		if closedAtOnce >= tlsExpectedAfter {
			s.say(fmt.Sprintf("the referee at %s closed the connection before a word was said (%s: %s): "+
				"it serves TLS, and this bot spoke plain text; give it the referee's certificate in TAVOLO_TLS_CA",
				s.referee, codeName(st.Code()), st.Message()))
			return ExitFailed
		}
		now := time.Now()
		if s.established || giveUpAt.IsZero() {
			giveUpAt, delay = now.Add(s.reconnect), firstDelay
		}
		if now.Add(delay).After(giveUpAt) {
			what := "cannot reach the referee"
			switch {
			case st.Code() == codes.AlreadyExists && s.key != "":
				what = "another connection kept a seat of this key"
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

// makeBot calls newBot; the error (already reported) if it panicked or made no Bot.
func (s *stream) makeBot(info StreamInfo) (bot Bot, err error) {
	defer func() {
		if r := recover(); r != nil {
			s.panicked("NewBot", r)
			bot, err = nil, errBotPanicked
		}
	}()
	if bot = s.newBot(info); bot == nil {
		s.say("NewBot returned no bot")
		return nil, errStreamFailed
	}
	return bot, nil
}

// session is one stream, from Hello to its end: nil if it ended with status OK.
func (s *stream) session(parent context.Context) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel() // tells the referee we left, unless the call is over already
	if s.key != "" {
		// A key's new stream plays no seat until a Welcome names one: the seat it left may
		// go to another stream of the process, and stays in s.seats for it.
		s.cur = nil
	}
	s.seen = merger{} // a compact observation completes one of the same call only
	call, err := s.client.Play(ctx)
	if err != nil {
		return err
	}
	hello := &pb.PlayRequest{Message: &pb.PlayRequest_Hello{Hello: &pb.Hello{
		Ticket: s.ticket, Key: s.key, ProtocolVersion: ProtocolVersion, CompactObservations: true,
	}}}
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
	// has heard those events already if it saw this request (at the same seat).
	repeated := false
	if request != nil && s.cur != nil && !s.reseats(response.GetEvents()) {
		s.cur.mu.Lock()
		repeated = request.GetRequestId() == s.cur.seenRequest
		s.cur.mu.Unlock()
	}
	if !repeated {
		for _, event := range response.GetEvents() {
			if err := s.event(event); err != nil {
				return nil, err
			}
		}
	}
	if request == nil {
		return nil, nil
	}
	cur := s.cur
	if cur == nil {
		s.say("the referee sent a decision request outside any match (before a Welcome); this stream stops")
		return nil, errStreamFailed
	}
	if err := s.seen.complete(request.GetObservation()); err != nil {
		s.say(err.Error() + "; this stream stops")
		return nil, errStreamFailed
	}
	cur.mu.Lock()
	defer cur.mu.Unlock()
	cur.seenRequest = request.GetRequestId()
	id := request.GetRequestId()
	if cur.answered != id || id == 0 {
		chosen := cur.bot.Choose(NewTurn(request))
		legal := false
		for _, action := range request.GetLegalActions() {
			legal = legal || action.GetId() == chosen
		}
		if !legal {
			s.say(fmt.Sprintf("Choose returned %d, not a legal action id; sending it anyway", chosen))
		}
		cur.answered, cur.answer = id, chosen
	}
	// A request re-sent after a reconnection gets the same answer without asking the bot twice.
	return &pb.Decision{RequestId: id, ActionId: cur.answer}, nil
}

// reseats tells whether events hold a Welcome to a seat other than the one played now
// (with a key: the start of another match).
func (s *stream) reseats(events []*pb.Event) bool {
	if s.key == "" {
		return false
	}
	for _, event := range events {
		if w := event.GetWelcome(); w != nil && (s.cur == nil || s.cur.id != (seatID{w.GetMatchId(), w.GetSlot()})) {
			return true
		}
	}
	return false
}

func (s *stream) event(event *pb.Event) error {
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
	if s.key != "" {
		if k := event.GetKeyAccepted(); k != nil {
			s.entrant = k.GetEntrant()
			return nil // the stream's own news: no bot plays yet
		}
		if w := event.GetWelcome(); w != nil {
			if err := s.sit(seatID{w.GetMatchId(), w.GetSlot()}); err != nil {
				return err
			}
		}
	}
	cur := s.cur
	if cur == nil {
		return nil // with a key, between matches: no bot to tell
	}
	cur.mu.Lock()
	defer cur.mu.Unlock()
	if h, ok := cur.bot.(EventHandler); ok {
		h.OnEvent(event)
	}
	if event.GetMatchOver() != nil && !cur.over {
		cur.over = true
		if h, ok := cur.bot.(MatchOverHandler); ok {
			h.OnMatchOver()
		}
		if s.key != "" {
			s.seats.mu.Lock()
			delete(s.seats.open, cur.id)
			s.seats.mu.Unlock()
			s.cur = nil
		}
	}
	return nil
}

// sit makes id the seat this key's stream plays: the same Bot when it is the seat played
// now, or one another stream of the process left mid-match; else a new Bot for a new match.
func (s *stream) sit(id seatID) error {
	if s.cur != nil && s.cur.id == id {
		return nil
	}
	s.seats.mu.Lock()
	taken, ok := s.seats.open[id]
	s.seats.mu.Unlock()
	if ok {
		s.cur = taken
		return nil
	}
	s.matches++
	info := s.info
	info.Entrant, info.MatchID, info.Match = s.entrant, id.match, s.matches
	info.Seed = MatchSeed(s.info.Seed, s.matches)
	bot, err := s.makeBot(info)
	if err != nil {
		return err
	}
	s.cur = &seat{id: id, bot: bot}
	s.seats.mu.Lock()
	s.seats.open[id] = s.cur
	s.seats.mu.Unlock()
	return nil
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
