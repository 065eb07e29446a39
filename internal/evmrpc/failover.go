package evmrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"math/rand/v2"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/paymentsd/paymentsd/internal/nodetrust"
	"github.com/paymentsd/paymentsd/internal/observability"
	"github.com/paymentsd/paymentsd/internal/redact"
)

// Failover is a Client over several RPC endpoints of one network: each
// call goes to the endpoint that last worked and moves on to the next when
// it fails for a reason other than the answer itself (not found). An
// endpoint is used only once it has reported the network's chain ID.
//
// Public and paid providers do not behave like one node, and Failover
// absorbs the differences the engine would otherwise see:
//
//   - They cap eth_getLogs by block range or by result count. FilterLogs
//     splits a refused range and remembers, per endpoint, the span that
//     works (see FilterLogs).
//   - They rate-limit (HTTP 429, or a JSON-RPC error saying so). Such an
//     endpoint is benched until its Retry-After, or for a backoff, and
//     calls go to the others meanwhile; when every endpoint is benched a
//     call waits for the first one back, within its context.
//   - They lag behind each other. Failover remembers each endpoint's head
//     and the highest one seen: BlockNumber does not go backwards when a
//     call moves to a lagging endpoint, and a "not found" from an endpoint
//     behind the highest head is not believed until an endpoint at the head
//     confirms it (a receipt missing on a lagging node must not make a
//     mined payment look reorged away).
//
// Answers are checked, not trusted (internal/nodetrust): an endpoint whose
// answer fails a check (Read) is set aside and the read goes to the next;
// every CompareInterval the endpoints are compared on one block a little
// below their heads (BlockAt), and one that disagrees with the majority is
// set aside until it agrees again. When no answer holds a majority (two
// endpoints that disagree), no endpoint is used until one does, and every
// call fails with nodetrust.ErrDisagree.
//
// The settings are filled with their defaults by Dial.
type Failover struct {
	// Network names the network in the metrics.
	Network string
	clients []*ethclient.Client
	urls    []string
	chainID int64
	// state is each endpoint's chain ID check: unchecked, ok or wrong.
	state   []atomic.Int32
	current atomic.Int32
	// Calls counts the RPC calls made, for the benchmarks.
	Calls atomic.Int64

	// RateLimitBackoff is how long an endpoint that refuses a call for its
	// rate limit, without saying for how long, is benched the first time;
	// the time doubles at each refusal in a row, up to MaxRateLimitBackoff.
	RateLimitBackoff    time.Duration
	MaxRateLimitBackoff time.Duration
	// MaxLag is how many blocks an endpoint may be behind the highest head
	// seen and still be asked first; one further behind (or whose head is
	// not known yet) is asked only when the others fail. BlockNumber
	// follows the chain back only when every endpoint reports a head more
	// than MaxLag blocks below the one it returned (see BlockNumber).
	MaxLag uint64
	// LogSpanGrowAfter is how many eth_getLogs calls must succeed at the
	// span an endpoint was cut down to before twice that span is tried:
	// a result-count limit depends on how busy the blocks are, so a span
	// cut during a burst of activity should not stay small for good.
	LogSpanGrowAfter int
	// HeadCheckInterval is how often BlockNumber also asks the endpoints
	// other than the one that answered for their heads (0: only when that
	// one is behind). Without it an endpoint that is never asked is never
	// known to be ahead, and the one answering is never known to lag.
	HeadCheckInterval time.Duration
	// CompareInterval is how often BlockNumber compares the endpoints, on
	// the hash of the block MaxLag below the lowest of their heads (0:
	// never); while they disagree with no majority, every call compares
	// them again, at most once per SplitRecheck.
	CompareInterval time.Duration
	SplitRecheck    time.Duration
	// BlockAt reads the hash of block n through c, one endpoint, checked
	// (chainwatch sets it, as it knows the chain's headers): the endpoints
	// are compared by it. Nil: they are not compared.
	BlockAt func(ctx context.Context, c Client, n uint64) (common.Hash, error)

	// trust is what the engine believes of the endpoints, made at first
	// use (once Network is set).
	trust     *nodetrust.Ledger
	trustOnce sync.Once
	// comparing is set while a comparison runs: one at a time.
	comparing atomic.Bool

	// now and sleep are the clock, replaced in tests.
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error

	// mu guards eps, shown and headsChecked.
	mu  sync.Mutex
	eps []endpoint
	// shown is the highest head BlockNumber has returned.
	shown uint64
	// headsChecked is when BlockNumber last asked every endpoint.
	headsChecked time.Time
	// compared is when the endpoints were last compared.
	compared time.Time
}

// endpoint is what Failover has learnt of one RPC endpoint.
type endpoint struct {
	// head is the endpoint's head as it last reported it, raised by any
	// block it has served since.
	head uint64
	// benchedUntil is when a rate-limited endpoint may be asked again;
	// strikes counts its rate-limit refusals in a row.
	benchedUntil time.Time
	strikes      int
	// retryUntil is what the last 429 or 503 response's Retry-After asked
	// for, until the refused call reads it.
	retryUntil time.Time
	// logSpan is how many blocks one eth_getLogs may span (0: no limit
	// met); logSpanCap is a block-range limit the endpoint stated, which
	// the span never grows past; logSpanOK counts the successes at the
	// current span.
	logSpan    uint64
	logSpanCap uint64
	logSpanOK  int
}

const (
	unchecked int32 = iota
	chainOK
	chainWrong
)

// The defaults of a Failover's settings.
const (
	DefaultRateLimitBackoff    = time.Second
	DefaultMaxRateLimitBackoff = time.Minute
	DefaultMaxLag              = 3
	DefaultLogSpanGrowAfter    = 10
	DefaultHeadCheckInterval   = 30 * time.Second
	DefaultCompareInterval     = 30 * time.Second
	DefaultSplitRecheck        = 5 * time.Second
)

// maxRetryAfter bounds the time an endpoint is benched for, whatever its
// Retry-After says: a misread or absurd value must not lose an endpoint
// for the life of the process.
const maxRetryAfter = time.Hour

// Dial connects to every URL of the network with chain ID chainID.
func Dial(ctx context.Context, chainID int64, urls []string, transport http.RoundTripper) (*Failover, error) {
	f := &Failover{urls: urls, chainID: chainID, state: make([]atomic.Int32, len(urls)), eps: make([]endpoint, len(urls)),
		RateLimitBackoff: DefaultRateLimitBackoff, MaxRateLimitBackoff: DefaultMaxRateLimitBackoff,
		MaxLag: DefaultMaxLag, LogSpanGrowAfter: DefaultLogSpanGrowAfter, HeadCheckInterval: DefaultHeadCheckInterval,
		CompareInterval: DefaultCompareInterval, SplitRecheck: DefaultSplitRecheck}
	if transport == nil {
		transport = http.DefaultTransport
	}
	// An endpoint's path and query hold the provider's key: from here on
	// its errors, and every log line, name it by redact.URL.
	for _, u := range urls {
		redact.RegisterURL(u)
	}
	for i, u := range urls {
		// go-ethereum's rpc.HTTPError has the status and the body of a
		// refused request but not its headers: the transport keeps the
		// Retry-After of each endpoint's 429 and 503 answers.
		hc := &http.Client{Transport: retryAfterTransport{next: transport, f: f, i: i}}
		c, err := rpc.DialOptions(ctx, u, rpc.WithHTTPClient(hc))
		if err != nil {
			return nil, fmt.Errorf("dial %s: %w", redact.URL(u), redact.Error(err))
		}
		f.clients = append(f.clients, ethclient.NewClient(c))
	}
	if len(f.clients) == 0 {
		return nil, errors.New("no rpc url")
	}
	return f, nil
}

// CheckChainIDs asks every endpoint for its chain ID: one that reports
// another chain is an error (a misconfiguration that would mix two
// chains' payments). One that does not answer is checked before its first
// use instead, so that a node down at start-up does not stop the engine.
func (f *Failover) CheckChainIDs(ctx context.Context) error {
	for i, c := range f.clients {
		if err := f.check(ctx, i, c); errors.Is(err, errWrongChain) {
			return err
		} else if err != nil {
			slog.Warn("rpc endpoint not checked at start; it is checked before its first use", "url", redact.URL(f.urls[i]), "err", redact.Error(err))
		}
	}
	return nil
}

var errWrongChain = errors.New("wrong chain")

// check makes sure endpoint i serves the network's chain.
func (f *Failover) check(ctx context.Context, i int, c *ethclient.Client) error {
	switch f.state[i].Load() {
	case chainOK:
		return nil
	case chainWrong:
		return fmt.Errorf("%s: %w", redact.URL(f.urls[i]), errWrongChain)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	f.Calls.Add(1)
	id, err := c.ChainID(ctx)
	if err != nil {
		return fmt.Errorf("%s: chain id: %w", redact.URL(f.urls[i]), redact.Error(err))
	}
	if id.Cmp(big.NewInt(f.chainID)) != 0 {
		f.state[i].Store(chainWrong)
		slog.Error("rpc endpoint serves another chain; it is not used", "url", redact.URL(f.urls[i]), "chainId", id, "want", f.chainID)
		return fmt.Errorf("%s reports chain %s, not %d: %w", redact.URL(f.urls[i]), id, f.chainID, errWrongChain)
	}
	f.state[i].Store(chainOK)
	return nil
}

// Close closes every connection.
func (f *Failover) Close() {
	for _, c := range f.clients {
		c.Close()
	}
}

// errBehind says that only endpoints behind the highest head seen
// answered "not found": the thing asked for may be in a block they do not
// have yet, so the answer is not ethereum.NotFound but an error to retry.
var errBehind = errors.New("not found on the endpoints that answered, all behind the highest head seen")

// errAllBenched says every endpoint is rate limited beyond the call's
// deadline.
var errAllBenched = errors.New("every rpc endpoint is rate limited")

// try makes a call on the endpoints in turn (see tryEach).
func try[T any](ctx context.Context, f *Failover, call func(*ethclient.Client) (T, error)) (T, error) {
	return tryEach(ctx, f, func(_ int, c *ethclient.Client) (T, error) { return call(c) })
}

// tryEach makes a call of one request on the endpoints (tryOn, counting
// the request).
func tryEach[T any](ctx context.Context, f *Failover, call func(i int, c *ethclient.Client) (T, error)) (T, error) {
	return tryOn(ctx, f, true, call)
}

// tryOn makes a call on the endpoints in their order (see order) until
// one answers. An answer is a result, or ethereum.NotFound from an
// endpoint at the highest head seen; a NotFound from one behind it is set
// aside while the others are asked, and if none at the head answers the
// call fails with errBehind rather than report NotFound. An endpoint that
// refuses for its rate limit is benched and skipped. When no endpoint
// answered and some are benched, the call waits for the first one back,
// unless the context ends before. An answer that failed a check
// (nodetrust.ErrBadAnswer) sets its endpoint aside, and the next is
// asked. counted says the call is one request, counted here; a read of
// several counts its own.
func tryOn[T any](ctx context.Context, f *Failover, counted bool, call func(i int, c *ethclient.Client) (T, error)) (T, error) {
	var zero T
	var err error
	for {
		if f.ledger().Split() && f.compareDue(f.SplitRecheck) {
			f.compare(ctx) // the only way out of a split
		}
		// behind: a NotFound from an endpoint behind the head was set
		// aside; limited: an endpoint was benched, before or during the
		// pass, and may answer once it is back.
		order, wake := f.order()
		behind, limited := false, !wake.IsZero()
		for _, i := range order {
			if ctx.Err() != nil {
				break
			}
			if f.benched(i) { // by a concurrent call, since order
				limited = true
				continue
			}
			c := f.clients[i]
			if cerr := f.check(ctx, i, c); cerr != nil {
				if f.rateLimited(i, cerr) {
					observability.RPCRequests.WithLabelValues(f.Network, "rate_limited").Inc()
					limited = true
				}
				err = redact.Error(cerr)
				continue
			}
			if counted {
				f.Calls.Add(1)
			}
			v, cerr := call(i, c)
			switch {
			case cerr == nil:
				f.answered(i)
				if counted {
					observability.RPCRequests.WithLabelValues(f.Network, "ok").Inc()
				}
				observability.NetworkUp.WithLabelValues(f.Network).Set(1)
				if err != nil || behind {
					observability.RPCFailovers.WithLabelValues(f.Network).Inc()
				}
				return v, nil
			case errors.Is(cerr, nodetrust.ErrBadAnswer):
				f.ledger().Failed(i, cerr)
				err = cerr
			case errors.Is(cerr, errPinnedBehind):
				behind = true // a read's "not found" on an endpoint behind
			case errors.Is(cerr, ethereum.NotFound):
				if counted {
					observability.RPCRequests.WithLabelValues(f.Network, "ok").Inc()
				}
				if f.atHead(i) {
					f.answered(i)
					observability.NetworkUp.WithLabelValues(f.Network).Set(1)
					return v, cerr
				}
				behind = true
			case f.rateLimited(i, cerr):
				if counted {
					observability.RPCRequests.WithLabelValues(f.Network, "rate_limited").Inc()
				}
				limited = true
				err = redact.Error(cerr)
			default:
				if counted {
					observability.RPCRequests.WithLabelValues(f.Network, "error").Inc()
				}
				err = redact.Error(cerr)
			}
		}
		if ctx.Err() != nil {
			if err == nil {
				err = ctx.Err()
			}
			return zero, err
		}
		if limited {
			// Wait for the first benched endpoint (it may be back
			// already), unless the call's deadline comes first.
			var d time.Duration
			if wake := f.wake(); !wake.IsZero() {
				d = wake.Sub(f.clock())
			}
			if deadline, ok := ctx.Deadline(); !ok || d < time.Until(deadline) {
				if d > 0 {
					if perr := f.pause(ctx, d); perr != nil {
						return zero, perr
					}
				}
				continue
			}
			if err == nil || behind {
				err = fmt.Errorf("%w for %s, past the call's deadline", errAllBenched, d.Round(time.Millisecond))
			}
		}
		observability.NetworkUp.WithLabelValues(f.Network).Set(0)
		if behind && err != nil {
			return zero, fmt.Errorf("%w; the others: %w", errBehind, err)
		} else if behind {
			return zero, errBehind
		}
		if err == nil {
			err = f.noneUsable()
		}
		return zero, err
	}
}

// noneUsable says why a call found no endpoint to ask: they disagree, or
// they are set aside, or rate limited.
func (f *Failover) noneUsable() error {
	for i := range f.clients {
		if f.ledger().Usable(i) {
			return errAllBenched
		}
	}
	return fmt.Errorf("%s: %w", f.Network, f.ledger().Why())
}

// order returns the endpoints a call asks, in turn: from the one that last
// answered on, those at most MaxLag blocks behind the highest head seen
// first and those further behind, or whose head is not known, last (they
// answer, but maybe with an older chain). Benched endpoints are left out,
// and those the ledger sets aside; wake is when the first benched one comes
// back, zero when none is benched.
func (f *Failover) order() (order []int, wake time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.init()
	now := f.clock()
	best := f.best()
	start := int(f.current.Load())
	var lagging []int
	for k := range f.clients {
		i := (start + k) % len(f.clients)
		e := &f.eps[i]
		switch {
		case !f.ledger().Usable(i):
			// set aside: asked again once the ledger takes it back
		case e.benchedUntil.After(now):
			if wake.IsZero() || e.benchedUntil.Before(wake) {
				wake = e.benchedUntil
			}
		case best-e.head > f.MaxLag:
			lagging = append(lagging, i)
		default:
			order = append(order, i)
		}
	}
	return append(order, lagging...), wake
}

// init sizes the endpoints' state; f.mu is held.
func (f *Failover) init() {
	if len(f.eps) != len(f.clients) {
		f.eps = make([]endpoint, len(f.clients))
	}
}

// best is the highest head of any endpoint the ledger does not set aside
// (a node caught lying does not set the head); f.mu is held.
func (f *Failover) best() uint64 {
	var best uint64
	for i := range f.eps {
		if f.ledger().Usable(i) {
			best = max(best, f.eps[i].head)
		}
	}
	return best
}

// atHead reports whether endpoint i is known to have the highest head
// seen, the condition for believing its "not found".
func (f *Failover) atHead(i int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.init()
	return f.eps[i].head >= f.best()
}

// lagging reports whether endpoint i is more than MaxLag blocks behind
// the highest head seen.
func (f *Failover) lagging(i int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.init()
	return f.best()-f.eps[i].head > f.MaxLag
}

// headOf returns endpoint i's known head.
func (f *Failover) headOf(i int) uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.init()
	return f.eps[i].head
}

// reported records the head endpoint i reported: its own view, which may
// be lower than before (a reorg, a load balancer's other node).
func (f *Failover) reported(i int, head uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.init()
	f.eps[i].head = head
}

// served records that endpoint i has block n: its head is at least n.
func (f *Failover) served(i int, n *big.Int) {
	if n == nil || !n.IsUint64() {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.init()
	f.eps[i].head = max(f.eps[i].head, n.Uint64())
}

// answered records that endpoint i answered: calls start there, and its
// rate-limit backoff starts over.
func (f *Failover) answered(i int) {
	f.current.Store(int32(i))
	f.mu.Lock()
	defer f.mu.Unlock()
	f.init()
	f.eps[i].strikes = 0
}

// benched reports whether endpoint i is benched now.
func (f *Failover) benched(i int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.init()
	return f.eps[i].benchedUntil.After(f.clock())
}

// wake returns when the first benched endpoint comes back, zero when none
// is benched.
func (f *Failover) wake() time.Time {
	_, wake := f.order()
	return wake
}

// rateLimited reports whether err is endpoint i refusing a call for its
// rate limit, and if so benches it: until the time its Retry-After header
// (or Infura's backoff_seconds) names, else for an exponential backoff
// with jitter. A 503 with a Retry-After counts too: the server says when
// to come back. A refusal while the endpoint is already benched (calls
// made at once) does not lengthen the backoff.
func (f *Failover) rateLimited(i int, err error) bool {
	hint, limited := rateLimitRefusal(err)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.init()
	e := &f.eps[i]
	now := f.clock()
	retryAfter := e.retryUntil.Sub(now)
	e.retryUntil = time.Time{}
	var he rpc.HTTPError
	if !limited && !(retryAfter > 0 && errors.As(err, &he) && he.StatusCode == http.StatusServiceUnavailable) {
		return false
	}
	if retryAfter > 0 {
		hint = retryAfter
	}
	if hint <= 0 && e.benchedUntil.After(now) {
		return true
	}
	e.strikes++
	d := hint
	if d <= 0 {
		d = f.backoff(e.strikes)
	}
	d = min(d, maxRetryAfter)
	if until := now.Add(d); until.After(e.benchedUntil) {
		e.benchedUntil = until
	}
	slog.Warn("rpc endpoint rate limited; calls go to the other endpoints until it is due", "network", f.Network,
		"endpoint", hostOf(f.urls[i]), "for", d.Round(time.Millisecond), "err", redact.Error(err))
	return true
}

// backoff is the bench time after the n-th rate-limit refusal in a row:
// RateLimitBackoff doubled n-1 times, at most MaxRateLimitBackoff, less a
// random quarter so that engines (or calls) benched together do not come
// back together.
func (f *Failover) backoff(n int) time.Duration {
	base, most := f.RateLimitBackoff, f.MaxRateLimitBackoff
	if base <= 0 {
		base = DefaultRateLimitBackoff
	}
	if most < base {
		most = base
	}
	d := base
	for k := 1; k < n && d < most; k++ {
		d *= 2
	}
	d = min(d, most)
	return d - rand.N(d/4+1)
}

// setRetryAfter keeps the time endpoint i's last 429 or 503 asked to be
// left alone until.
func (f *Failover) setRetryAfter(i int, until time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.init()
	f.eps[i].retryUntil = until
}

func (f *Failover) clock() time.Time {
	if f.now != nil {
		return f.now()
	}
	return time.Now()
}

// pause waits d, or until ctx ends.
func (f *Failover) pause(ctx context.Context, d time.Duration) error {
	if f.sleep != nil {
		return f.sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// retryAfterTransport keeps the Retry-After header of endpoint i's 429
// and 503 answers for rateLimited, which sees only go-ethereum's error.
type retryAfterTransport struct {
	next http.RoundTripper
	f    *Failover
	i    int
}

func (t retryAfterTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if err == nil && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) {
		now := t.f.clock()
		if d, ok := parseRetryAfter(resp.Header.Get("Retry-After"), now); ok {
			t.f.setRetryAfter(t.i, now.Add(d))
		}
	}
	return resp, err
}

// parseRetryAfter reads a Retry-After header: delay-seconds or an
// HTTP-date (RFC 9110, 10.2.3).
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseUint(v, 10, 32); err == nil {
		return time.Duration(s) * time.Second, s > 0
	}
	if t, err := http.ParseTime(v); err == nil {
		d := t.Sub(now)
		return d, d > 0
	}
	return 0, false
}

// hostOf names an endpoint in logs by its host: provider URLs often carry
// an API key in their path.
func hostOf(u string) string {
	if p, err := url.Parse(u); err == nil && p.Host != "" {
		return p.Host
	}
	return "endpoint"
}

// rateLimitWords are how providers word a rate-limit refusal (lower
// case): "rate limit exceeded" (Tenderly), "over rate limit" (Base's
// public node, -32016), "exceeded project rate limit" and "daily request
// count exceeded, request rate limited" (Infura), "project ID request rate
// exceeded" (Infura), "Your app has exceeded its compute units per second
// capacity" (Alchemy, code 429), "request limit reached" (QuickNode,
// -32007), "Too Many Requests" (many, and the HTTP status text).
var rateLimitWords = []string{
	"rate limit", "rate-limit", "too many requests", "request rate exceeded",
	"compute units per second", "request limit reached", "daily request count exceeded",
}

// rateLimitRefusal reports whether err says the endpoint refuses calls
// for its rate limit: an HTTP 429, a JSON-RPC error coded 429 (Alchemy) or
// -32005 (EIP-1474's "limit exceeded", Infura's rate limits), or one of
// rateLimitWords. -32005 also carries Infura's "query returned more than
// 10000 results", which is about the call, not the rate: eth_getLogs
// refusals never count. hint is the backoff the error names (Infura's
// data.backoff_seconds), zero when none.
func rateLimitRefusal(err error) (hint time.Duration, ok bool) {
	if err == nil || errors.Is(err, ethereum.NotFound) {
		return 0, false
	}
	if _, _, refused := logRangeRefusal(err); refused {
		return 0, false
	}
	var he rpc.HTTPError
	var re rpc.Error
	text := errText(err)
	switch {
	case errors.As(err, &he) && he.StatusCode == http.StatusTooManyRequests:
	case errors.As(err, &re) && (re.ErrorCode() == http.StatusTooManyRequests || re.ErrorCode() == -32005):
	case containsAny(text, rateLimitWords):
	default:
		return 0, false
	}
	return backoffHint(err), true
}

// backoffHint reads the backoff_seconds an Infura rate-limit error carries
// in its data (as data.backoff_seconds or data.rate.backoff_seconds), from
// a JSON-RPC error or from the body of an HTTP 429.
func backoffHint(err error) time.Duration {
	var data any
	var de rpc.DataError
	var he rpc.HTTPError
	if errors.As(err, &de) {
		data = de.ErrorData()
	} else if errors.As(err, &he) {
		var body struct {
			Error struct {
				Data any `json:"data"`
			} `json:"error"`
		}
		if json.Unmarshal(he.Body, &body) == nil {
			data = body.Error.Data
		}
	}
	var find func(v any, depth int) float64
	find = func(v any, depth int) float64 {
		m, ok := v.(map[string]any)
		if !ok || depth > 2 {
			return 0
		}
		if s, ok := m["backoff_seconds"].(float64); ok {
			return s
		}
		for _, sub := range m {
			if s := find(sub, depth+1); s > 0 {
				return s
			}
		}
		return 0
	}
	s := find(data, 0)
	if s <= 0 {
		return 0
	}
	return min(time.Duration(s*float64(time.Second)), maxRetryAfter)
}

// errText is an error's message with its JSON-RPC data (where providers
// such as thirdweb put the reason) and, for an HTTP error, its body, in
// lower case.
func errText(err error) string {
	s := err.Error()
	var de rpc.DataError
	if errors.As(err, &de) {
		switch d := de.ErrorData().(type) {
		case nil:
		case string:
			s += " " + d
		default:
			if b, err := json.Marshal(d); err == nil {
				s += " " + string(b)
			}
		}
	}
	return strings.ToLower(s)
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// logRangeWords are how providers word an eth_getLogs refusal for its
// block range or its result count (lower case), with where they come
// from:
var logRangeWords = []string{
	"query returned more than",                // Infura (-32005), zkSync, Polygon zkEVM, thirdweb: "query returned more than 10000 results. Try with this block range [0x…, 0x…]."
	"log response size exceeded",              // Alchemy (-32602): "Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range … this block range should work: [0x…, 0x…]"
	"eth_getlogs requests with up to a",       // Alchemy (-32600, HTTP 400): "You can make eth_getLogs requests with up to a 500 block range. Based on your parameters, this block range should work: [0x…, 0x…]"
	"eth_getlogs is limited to",               // QuickNode (-32614, HTTP 413) and Blast: "eth_getLogs is limited to a 10,000 range"; 1RPC: "… to a 1000 blocks range"; BlockPI: "… to 1024 block range"
	"eth_getlogs range is too large",          // Merkle: "eth_getLogs range is too large, max is 1k blocks"
	"block range is too wide",                 // Ankr (-32600); Frontier/Moonbeam: "block range is too wide (maximum 1024)"
	"exceed maximum block range",              // geth --rpc.rangelimit (-32602): "exceed maximum block range 1000"; BSC, PublicNode: "exceed maximum block range: 50000"
	"block range limit exceeded",              // Chainstack: "Block range limit exceeded."
	"range too large",                         // Cloudflare (-32047): "'fromBlock'-'toBlock' range too large. Max range: 800"; Base: "block range too large"
	"block range is too large",                // OP Mainnet: "Block range is too large"
	"query exceeds max results",               // LlamaRPC, Ankr: "query exceeds max results 20000, retry with the range 24383075-24383096"
	"query exceeds max block range",           // Hyperliquid, dRPC: "query exceeds max block range 100000"
	"logs matched by query exceeds limit",     // Arbitrum (Nitro): "logs matched by query exceeds limit of 10000"
	"exceeds the range allowed for your plan", // Blast API, paid plans: "… exceeds the range allowed for your plan (5000 > 500)"
	"please limit the query to at most",       // Coinbase (Base nodes, -32005): "please limit the query to at most 1000 blocks"
	"is bigger than range limit",              // thirdweb (-32602, in data): "range 20000 is bigger than range limit 2000"
	"response size should not greater than",   // 1RPC: "response size should not greater than 10000000 bytes"
	"backend response too large",              // OP Mainnet
	"block range too high",                    // Candle (-32600)
	"block range is bigger than",              // Scroll's geth: "block range is bigger than maxBlockRange"
	"larger than max block range",             // Morph: "block range is larger than max block range, block range = 5120, max block range = 5000"
	"blocks are not supported",                // dRPC free tier (code 35): "ranges over 10000 blocks are not supported on freetier"
	"requested too many blocks",               // Avalanche C-Chain (-32000): "requested too many blocks from 0 to 4095, maximum is set to 2048"
	"too many logs requested",                 // "Too many logs requested. Max logs per response is 10000"
	"maximum allowed is",                      // "Block range too large: maximum allowed is 1000 blocks"
	"max range",                               // Cloudflare, above
}

var (
	// infuraRangeLimit is Infura's block-range refusal (-32602): "range
	// 1000000 exceeds limit of 10000" (the phrase alone would also match
	// Arbitrum's result-count one).
	infuraRangeLimit = regexp.MustCompile(`range \d+ exceeds limit of ([\d,]+)`)
	// suggestedRange is the range Infura, Alchemy, thirdweb and zkSync say
	// would work: "[0x112a880, 0x112a908]".
	suggestedRange = regexp.MustCompile(`\[\s*0x([0-9a-f]+)\s*,\s*0x([0-9a-f]+)\s*\]`)
	// retryRange is LlamaRPC's and Ankr's: "retry with the range 1-2".
	retryRange = regexp.MustCompile(`retry with the range (\d+)-(\d+)`)
	// statedLimits are the block-range limits the refusals above state.
	statedLimits = []*regexp.Regexp{
		infuraRangeLimit,
		regexp.MustCompile(`eth_getlogs is limited to (?:a )?([\d,]+k?)`),
		regexp.MustCompile(`up to a ([\d,]+k?) block range`),
		regexp.MustCompile(`max is ([\d,]+k?) blocks`),
		regexp.MustCompile(`maximum block range:? ?([\d,]+)`),
		regexp.MustCompile(`max block range(?: is| =)? ?([\d,]+)`),
		regexp.MustCompile(`max range:? ?([\d,]+)`),
		regexp.MustCompile(`at most ([\d,]+) blocks`),
		regexp.MustCompile(`range limit ([\d,]+)`),
		regexp.MustCompile(`allowed for your plan \(\d+ > (\d+)\)`),
		regexp.MustCompile(`\(maximum ([\d,]+)\)`),
		regexp.MustCompile(`maximum is set to ([\d,]+)`),
		regexp.MustCompile(`ranges over ([\d,]+) blocks`),
		regexp.MustCompile(`maximum allowed is ([\d,]+) blocks`),
	}
)

// logRangeRefusal reports whether err is an endpoint refusing an
// eth_getLogs call for its block range or its result count. span is the
// number of blocks the refusal suggests asking for (Infura's and Alchemy's
// "[0x…, 0x…]", LlamaRPC's "retry with the range a-b") or else states, zero
// when it names none; limit is a block-range limit the endpoint states,
// which holds for every query, unlike a suggestion fitted to this query's
// result count.
func logRangeRefusal(err error) (span, limit uint64, ok bool) {
	if err == nil {
		return 0, 0, false
	}
	text := errText(err)
	if !containsAny(text, logRangeWords) && !infuraRangeLimit.MatchString(text) {
		return 0, 0, false
	}
	// In Alchemy's response-size refusal, "up to a 2K block range" is one
	// of two ways to stay under its cap, not a limit of every query.
	if !strings.Contains(text, "log response size exceeded") {
		for _, re := range statedLimits {
			if m := re.FindStringSubmatch(text); m != nil {
				if n, ok := parseCount(m[1]); ok && n > 0 {
					limit = n
					break
				}
			}
		}
	}
	for _, re := range []*regexp.Regexp{suggestedRange, retryRange} {
		m := re.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		base := 16
		if re == retryRange {
			base = 10
		}
		a, errA := strconv.ParseUint(m[1], base, 64)
		b, errB := strconv.ParseUint(m[2], base, 64)
		if errA == nil && errB == nil && b >= a {
			return b - a + 1, limit, true
		}
	}
	return limit, limit, true
}

// parseCount reads "10,000" or "2k".
func parseCount(s string) (uint64, bool) {
	s = strings.ReplaceAll(s, ",", "")
	mult := uint64(1)
	if strings.HasSuffix(s, "k") {
		mult, s = 1000, strings.TrimSuffix(s, "k")
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n > 1<<40 {
		return 0, false
	}
	return n * mult, true
}

// BlockNumber returns the chain's head. It never returns a head lower
// than one it returned before because the call moved to an endpoint that
// lags: chainwatch would wait for blocks it has already read, and a
// transaction's confirmations would go down. When the endpoint that
// answered is more than MaxLag blocks behind another's last head, the
// others are asked too and the calls move to the highest, so that they go
// to an endpoint at the head; every HeadCheckInterval the others are asked
// anyway, to learn which endpoints lag. Only when every endpoint reports a
// head more than MaxLag blocks below the one returned has the chain itself
// gone back (a restarted development chain, a deep reorg onto a shorter
// branch), and then the lower head is returned. Every CompareInterval the
// endpoints are compared first (compare).
func (f *Failover) BlockNumber(ctx context.Context) (uint64, error) {
	type answer struct {
		n uint64
		i int
	}
	if f.compareDue(f.CompareInterval) {
		f.compare(ctx) // first: a node it sets aside gives no head
	}
	a, err := tryEach(ctx, f, func(i int, c *ethclient.Client) (answer, error) {
		n, err := c.BlockNumber(ctx)
		if err == nil {
			f.reported(i, n)
		}
		return answer{n, i}, err
	})
	if err != nil {
		return 0, err
	}
	n := a.n
	if f.checkHeads(a.i) {
		if m, j := f.headFromOthers(ctx, a.i); m > n && f.lagging(a.i) {
			n = m
			f.current.Store(int32(j))
		}
	}
	return f.show(n), nil
}

// checkHeads reports whether BlockNumber, answered by endpoint i, should
// ask the others for their heads: i lags, or they were last asked
// HeadCheckInterval ago. One call at a time asks on schedule.
func (f *Failover) checkHeads(i int) bool {
	if len(f.clients) < 2 {
		return false
	}
	lagging := f.lagging(i)
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.clock()
	if !lagging && (f.HeadCheckInterval <= 0 || now.Sub(f.headsChecked) < f.HeadCheckInterval) {
		return false
	}
	f.headsChecked = now
	return true
}

// headFromOthers asks the endpoints other than i for their heads, and
// returns the highest and its endpoint (0 and i when none answers).
func (f *Failover) headFromOthers(ctx context.Context, i int) (head uint64, at int) {
	at = i
	for j, c := range f.clients {
		if j == i || f.benched(j) || !f.ledger().Usable(j) || f.check(ctx, j, c) != nil {
			continue
		}
		f.Calls.Add(1)
		n, err := c.BlockNumber(ctx)
		if err != nil {
			if f.rateLimited(j, err) {
				observability.RPCRequests.WithLabelValues(f.Network, "rate_limited").Inc()
			} else {
				observability.RPCRequests.WithLabelValues(f.Network, "error").Inc()
			}
			continue
		}
		observability.RPCRequests.WithLabelValues(f.Network, "ok").Inc()
		f.reported(j, n)
		if n > head {
			head, at = n, j
		}
	}
	return head, at
}

// show returns the head BlockNumber reports for n (see BlockNumber).
func (f *Failover) show(n uint64) uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.init()
	if n >= f.shown {
		f.shown = n
		return n
	}
	for i := range f.eps {
		if h := f.eps[i].head; h > f.shown || f.shown-h <= f.MaxLag {
			return f.shown
		}
	}
	f.shown = max(n, f.best())
	return f.shown
}

func (f *Failover) BlockByNumber(ctx context.Context, n *big.Int) (*types.Block, error) {
	return tryEach(ctx, f, func(i int, c *ethclient.Client) (*types.Block, error) {
		b, err := c.BlockByNumber(ctx, n)
		if err == nil {
			f.served(i, b.Number())
		}
		return b, err
	})
}

func (f *Failover) HeaderByNumber(ctx context.Context, n *big.Int) (*types.Header, error) {
	return tryEach(ctx, f, func(i int, c *ethclient.Client) (*types.Header, error) {
		h, err := c.HeaderByNumber(ctx, n)
		if err == nil {
			f.served(i, h.Number)
		}
		return h, err
	})
}

// FilterLogs returns the logs q matches. A query over a block range
// (FromBlock and ToBlock numbers, no BlockHash) adapts to the providers'
// eth_getLogs limits: when an endpoint refuses a range, by its block count
// or by the number of results (see logRangeWords), the range is split,
// to the span the refusal names or else in halves, down to single blocks,
// and the parts' logs are concatenated in order. A refusal is not a
// failure of the endpoint, so the call does not move to another; a single
// block refused still is. The span that worked is remembered per endpoint
// for the calls that follow, and after LogSpanGrowAfter successes twice
// that span is tried again, never past a limit the endpoint stated nor
// past the range asked.
//
// An endpoint is asked for logs up to a block only once it is known to
// have that block: a node behind would answer without the logs of the
// blocks it lacks, and chainwatch would miss their payments.
func (f *Failover) FilterLogs(ctx context.Context, q ethereum.FilterQuery) ([]types.Log, error) {
	if !rangeQuery(q) {
		return try(ctx, f, func(c *ethclient.Client) ([]types.Log, error) { return c.FilterLogs(ctx, q) })
	}
	from, to := q.FromBlock.Uint64(), q.ToBlock.Uint64()
	asked := to - from + 1
	var logs []types.Log
	for start := from; ; {
		part, err := tryEach(ctx, f, func(i int, c *ethclient.Client) (logPart, error) {
			return f.logsFrom(ctx, i, c, q, start, to, asked)
		})
		if err != nil {
			return nil, err
		}
		logs = append(logs, part.logs...)
		if part.end >= to {
			return logs, nil
		}
		start = part.end + 1
	}
}

// rangeQuery reports whether q asks for a range of block numbers, which
// FilterLogs splits as the endpoints' limits ask.
func rangeQuery(q ethereum.FilterQuery) bool {
	return q.BlockHash == nil && q.FromBlock != nil && q.ToBlock != nil && q.FromBlock.Sign() >= 0 && q.ToBlock.Sign() >= 0 &&
		q.ToBlock.IsUint64() && q.ToBlock.Cmp(q.FromBlock) >= 0
}

// logPart is the logs of the blocks up to end.
type logPart struct {
	logs []types.Log
	end  uint64
}

// errLogsBehind says an endpoint does not have the last block of an
// eth_getLogs range yet.
var errLogsBehind = errors.New("the endpoint does not have the range's last block yet")

// logsFrom reads endpoint i's logs of q from block start on, over as many
// blocks up to `to` as its span allows, cutting the span at each refusal.
func (f *Failover) logsFrom(ctx context.Context, i int, c *ethclient.Client, q ethereum.FilterQuery, start, to, asked uint64) (logPart, error) {
	for {
		span := f.logSpan(i, to-start+1)
		end := start + span - 1
		if err := f.reaches(ctx, i, c, end); err != nil {
			return logPart{}, err
		}
		part := q
		part.FromBlock, part.ToBlock = new(big.Int).SetUint64(start), new(big.Int).SetUint64(end)
		logs, err := c.FilterLogs(ctx, part)
		if err == nil {
			f.logSpanWorked(i, span, asked)
			return logPart{logs, end}, nil
		}
		fits, limit, refused := logRangeRefusal(err)
		if !refused {
			return logPart{}, err
		}
		observability.RPCRequests.WithLabelValues(f.Network, "range_refused").Inc()
		if span == 1 {
			return logPart{}, fmt.Errorf("eth_getLogs of block %d alone: %w", start, err)
		}
		f.cutLogSpan(i, span, fits, limit)
		f.Calls.Add(1) // the next attempt
	}
}

// reaches makes sure endpoint i has block n, asking for its head when the
// one known is lower.
func (f *Failover) reaches(ctx context.Context, i int, c *ethclient.Client, n uint64) error {
	if f.headOf(i) >= n {
		return nil
	}
	f.Calls.Add(1)
	head, err := c.BlockNumber(ctx)
	if err != nil {
		return err
	}
	f.reported(i, head)
	if head < n {
		return fmt.Errorf("%s is at block %d, eth_getLogs asks up to %d: %w", hostOf(f.urls[i]), head, n, errLogsBehind)
	}
	return nil
}

// logSpan is the span of endpoint i's next eth_getLogs over remaining
// blocks.
func (f *Failover) logSpan(i int, remaining uint64) uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.init()
	if s := f.eps[i].logSpan; s > 0 && s < remaining {
		return s
	}
	return remaining
}

// cutLogSpan records that endpoint i refused span blocks: the span drops
// to the one the refusal suggested or stated (fits) when that is smaller,
// else to half; a stated limit caps it for good.
func (f *Failover) cutLogSpan(i int, span, fits, limit uint64) {
	next := max(span/2, 1)
	if fits > 0 && fits < span {
		next = fits
	}
	f.mu.Lock()
	f.init()
	e := &f.eps[i]
	if e.logSpan == 0 || next < e.logSpan {
		e.logSpan = next
	}
	if limit > 0 && (e.logSpanCap == 0 || limit < e.logSpanCap) {
		e.logSpanCap = limit
	}
	e.logSpanOK = 0
	next = e.logSpan
	f.mu.Unlock()
	slog.Info("rpc endpoint refused an eth_getLogs range; the range is split", "network", f.Network,
		"endpoint", hostOf(f.urls[i]), "refused", span, "span", next)
}

// logSpanWorked records that endpoint i served span blocks of a query
// over asked blocks, and grows its span after LogSpanGrowAfter successes.
func (f *Failover) logSpanWorked(i int, span, asked uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.init()
	e := &f.eps[i]
	if e.logSpan == 0 || span < e.logSpan || e.logSpan >= asked || e.logSpanCap > 0 && e.logSpan >= e.logSpanCap {
		return // no limit met, a range's last part, or nothing to grow to
	}
	if e.logSpanOK++; e.logSpanOK < max(f.LogSpanGrowAfter, 1) {
		return
	}
	e.logSpanOK = 0
	e.logSpan = min(e.logSpan*2, asked)
	if e.logSpanCap > 0 {
		e.logSpan = min(e.logSpan, e.logSpanCap)
	}
}

func (f *Failover) TransactionByHash(ctx context.Context, h common.Hash) (*types.Transaction, bool, error) {
	type r struct {
		tx      *types.Transaction
		pending bool
	}
	v, err := try(ctx, f, func(c *ethclient.Client) (r, error) {
		tx, p, err := c.TransactionByHash(ctx, h)
		return r{tx, p}, err
	})
	return v.tx, v.pending, err
}

func (f *Failover) TransactionReceipt(ctx context.Context, h common.Hash) (*types.Receipt, error) {
	return tryEach(ctx, f, func(i int, c *ethclient.Client) (*types.Receipt, error) {
		r, err := c.TransactionReceipt(ctx, h)
		if err == nil {
			f.served(i, r.BlockNumber)
		}
		return r, err
	})
}

func (f *Failover) CallContract(ctx context.Context, msg ethereum.CallMsg, n *big.Int) ([]byte, error) {
	return try(ctx, f, func(c *ethclient.Client) ([]byte, error) { return c.CallContract(ctx, msg, n) })
}
