package evmrpc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net/http"
	"net/url"
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
	t := &tries{f: f, counted: counted}
	for {
		if f.ledger().Split() && f.compareDue(f.SplitRecheck) {
			f.compare(ctx) // the only way out of a split
		}
		order, wake := f.order()
		t.behind, t.limited = false, !wake.IsZero()
		for _, i := range order {
			if ctx.Err() != nil {
				break
			}
			if v, done, err := tryOne(ctx, t, i, call); done {
				return v, err
			}
		}
		if ctx.Err() != nil {
			if t.err == nil {
				t.err = ctx.Err()
			}
			return zero, t.err
		}
		if t.limited {
			again, err := t.waitForBenched(ctx)
			if err != nil {
				return zero, err
			}
			if again {
				continue
			}
		}
		return zero, t.failure()
	}
}

// tries is what a call on the endpoints (tryOn) has met so far.
type tries struct {
	f       *Failover
	counted bool
	// err is the last endpoint's failure, kept across passes.
	err error
	// behind: in this pass a NotFound from an endpoint behind the head was
	// set aside; limited: an endpoint was benched, before or during the
	// pass, and may answer once it is back.
	behind, limited bool
}

// tryOne asks endpoint i, unless it is benched or serves another chain;
// done says the call is over, with v and err its outcome.
func tryOne[T any](ctx context.Context, t *tries, i int, call func(i int, c *ethclient.Client) (T, error)) (v T, done bool, err error) {
	f := t.f
	if f.benched(i) { // by a concurrent call, since order
		t.limited = true
		return v, false, nil
	}
	c := f.clients[i]
	if cerr := f.check(ctx, i, c); cerr != nil {
		if f.rateLimited(i, cerr) {
			observability.RPCRequests.WithLabelValues(f.Network, "rate_limited").Inc()
			t.limited = true
		}
		t.err = redact.Error(cerr)
		return v, false, nil
	}
	if t.counted {
		f.Calls.Add(1)
	}
	v, err = call(i, c)
	return v, t.answer(i, err), err
}

// answer weighs endpoint i's answer err (nil: a result) and reports
// whether it ends the call.
func (t *tries) answer(i int, err error) bool {
	f := t.f
	switch {
	case err == nil:
		f.answered(i)
		t.count("ok")
		observability.NetworkUp.WithLabelValues(f.Network).Set(1)
		if t.err != nil || t.behind {
			observability.RPCFailovers.WithLabelValues(f.Network).Inc()
		}
		return true
	case errors.Is(err, nodetrust.ErrBadAnswer):
		f.ledger().Failed(i, err)
		t.err = err
	case errors.Is(err, errPinnedBehind):
		t.behind = true // a read's "not found" on an endpoint behind
	case errors.Is(err, ethereum.NotFound):
		t.count("ok")
		if f.atHead(i) {
			f.answered(i)
			observability.NetworkUp.WithLabelValues(f.Network).Set(1)
			return true
		}
		t.behind = true
	case f.rateLimited(i, err):
		t.count("rate_limited")
		t.limited = true
		t.err = redact.Error(err)
	default:
		t.count("error")
		t.err = redact.Error(err)
	}
	return false
}

// count counts a request's outcome, when the call is one request.
func (t *tries) count(outcome string) {
	if t.counted {
		observability.RPCRequests.WithLabelValues(t.f.Network, outcome).Inc()
	}
}

// waitForBenched waits for the first benched endpoint (it may be back
// already) and says to try again, unless the call's deadline comes
// first; err is the context's end during the wait.
func (t *tries) waitForBenched(ctx context.Context) (again bool, err error) {
	f := t.f
	var d time.Duration
	if wake := f.wake(); !wake.IsZero() {
		d = wake.Sub(f.clock())
	}
	if deadline, ok := ctx.Deadline(); !ok || d < time.Until(deadline) {
		if d > 0 {
			if err := f.pause(ctx, d); err != nil {
				return false, err
			}
		}
		return true, nil
	}
	if t.err == nil || t.behind {
		t.err = fmt.Errorf("%w for %s, past the call's deadline", errAllBenched, d.Round(time.Millisecond))
	}
	return false, nil
}

// failure is the error of a call no endpoint answered.
func (t *tries) failure() error {
	f := t.f
	observability.NetworkUp.WithLabelValues(f.Network).Set(0)
	if t.behind && t.err != nil {
		return fmt.Errorf("%w; the others: %w", errBehind, t.err)
	} else if t.behind {
		return errBehind
	}
	if t.err == nil {
		return f.noneUsable()
	}
	return t.err
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

// answered records that endpoint i answered: calls start there, and its
// rate-limit backoff starts over.
func (f *Failover) answered(i int) {
	f.current.Store(int32(i))
	f.mu.Lock()
	defer f.mu.Unlock()
	f.init()
	f.eps[i].strikes = 0
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

// hostOf names an endpoint in logs by its host: provider URLs often carry
// an API key in their path.
func hostOf(u string) string {
	if p, err := url.Parse(u); err == nil && p.Host != "" {
		return p.Host
	}
	return "endpoint"
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
