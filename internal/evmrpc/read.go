package evmrpc

// Reads on one endpoint, and the endpoints' comparison: what lets the
// engine check its nodes' answers instead of trusting them
// (docs/decisions.md, "Node answers are checked, not trusted").

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/paymentsd/paymentsd/internal/nodetrust"
	"github.com/paymentsd/paymentsd/internal/observability"
	"github.com/paymentsd/paymentsd/internal/redact"
)

// errPinnedBehind says a read's "not found" came from an endpoint behind
// the highest head seen: the read runs again on another endpoint, as a
// call's "not found" would be asked again (tryOn).
var errPinnedBehind = errors.New("not found on an endpoint behind the highest head seen")

// compareTimeout bounds one comparison of the endpoints.
const compareTimeout = 10 * time.Second

// Read runs read on one endpoint at a time (see Client.Read), in the
// order a call would ask them.
func (f *Failover) Read(ctx context.Context, read func(Client) error) error {
	result, err := tryOn(ctx, f, false, func(i int, c *ethclient.Client) (error, error) {
		p := &pinned{f: f, i: i, c: c}
		err := read(p)
		var failed *nodeFailure
		switch {
		case err == nil:
			return nil, nil
		case errors.As(err, &failed):
			return nil, failed.err
		case errors.Is(err, nodetrust.ErrBadAnswer):
			return nil, err
		}
		return err, nil // read's own result
	})
	if err != nil {
		return err
	}
	return result
}

// Nodes is what the engine believes of the endpoints now: those set
// aside, and whether they disagree with no majority.
func (f *Failover) Nodes() nodetrust.Status { return f.ledger().Status() }

// Ledger is the endpoints' ledger (its settings may be tuned before use).
func (f *Failover) Ledger() *nodetrust.Ledger { return f.ledger() }

func (f *Failover) ledger() *nodetrust.Ledger {
	f.trustOnce.Do(func() {
		names := make([]string, len(f.urls))
		for i, u := range f.urls {
			names[i] = redact.URL(u)
		}
		f.trust = nodetrust.New(f.Network, names, observability.NodeReport{})
		f.trust.Now = f.clock
	})
	return f.trust
}

// nodeFailure is an endpoint's failure during a read: no answer, a rate
// limit, an error, or "not found" from behind.
type nodeFailure struct{ err error }

func (e *nodeFailure) Error() string { return e.err.Error() }
func (e *nodeFailure) Unwrap() error { return e.err }

// pinned is a Client whose calls all go to endpoint i.
type pinned struct {
	f *Failover
	i int
	c *ethclient.Client
}

// count counts one call and its outcome.
func (p *pinned) count(err error) {
	p.f.Calls.Add(1)
	outcome := "ok"
	if _, limited := rateLimitRefusal(err); limited {
		outcome = "rate_limited"
	} else if err != nil && !errors.Is(err, ethereum.NotFound) {
		outcome = "error"
	}
	observability.RPCRequests.WithLabelValues(p.f.Network, outcome).Inc()
}

// answer passes on a result, or a "not found" from an endpoint at the
// highest head; anything else is the endpoint's failure.
func (p *pinned) answer(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ethereum.NotFound):
		if p.f.atHead(p.i) {
			return err
		}
		return &nodeFailure{errPinnedBehind}
	}
	return &nodeFailure{redact.Error(err)}
}

func (p *pinned) Call(ctx context.Context, result any, method string, args ...any) error {
	err := rawCall(ctx, p.c.Client(), result, method, args...)
	p.count(err)
	return p.answer(err)
}

func (p *pinned) BlockNumber(ctx context.Context) (uint64, error) {
	n, err := p.c.BlockNumber(ctx)
	p.count(err)
	if err == nil {
		p.f.reported(p.i, n)
	}
	return n, p.answer(err)
}

func (p *pinned) CallContract(ctx context.Context, msg ethereum.CallMsg, n *big.Int) ([]byte, error) {
	b, err := p.c.CallContract(ctx, msg, n)
	p.count(err)
	return b, p.answer(err)
}

// FilterLogs reads the logs on the endpoint, adapting to its limits as
// Failover.FilterLogs does.
func (p *pinned) FilterLogs(ctx context.Context, q ethereum.FilterQuery) ([]types.Log, error) {
	if !rangeQuery(q) {
		logs, err := p.c.FilterLogs(ctx, q)
		p.count(err)
		return logs, p.answer(err)
	}
	from, to := q.FromBlock.Uint64(), q.ToBlock.Uint64()
	var logs []types.Log
	for start := from; ; {
		part, err := p.f.logsFrom(ctx, p.i, p.c, q, start, to, to-from+1)
		p.count(err)
		if err != nil {
			return nil, &nodeFailure{redact.Error(err)}
		}
		logs = append(logs, part.logs...)
		if part.end >= to {
			return logs, nil
		}
		start = part.end + 1
	}
}

// Read runs read on the same endpoint.
func (p *pinned) Read(_ context.Context, read func(Client) error) error { return read(p) }

// compareDue reports whether the endpoints are to be compared now, at most
// once per interval (0: never), and marks the comparison made if so.
func (f *Failover) compareDue(interval time.Duration) bool {
	if f.BlockAt == nil || len(f.clients) < 2 || interval <= 0 {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.clock()
	if !f.compared.IsZero() && now.Sub(f.compared) < interval {
		return false
	}
	f.compared = now
	return true
}

// compare asks each endpoint that may vote (nodetrust.Ledger.Voters) for
// its head, then, through BlockAt, for the hash of the block MaxLag below
// the lowest head they report: a block every one of them has, past the
// churn at the tip, where honest nodes agree. An answer that fails
// BlockAt's check sets its endpoint aside; the others are the ledger's
// vote. Two calls per endpoint; one comparison at a time.
func (f *Failover) compare(ctx context.Context) {
	if !f.comparing.CompareAndSwap(false, true) {
		return
	}
	defer f.comparing.Store(false)
	ctx, cancel := context.WithTimeout(ctx, compareTimeout)
	defer cancel()
	heads := map[int]uint64{}
	for _, j := range f.ledger().Voters() {
		if f.benched(j) || f.check(ctx, j, f.clients[j]) != nil {
			continue
		}
		p := &pinned{f: f, i: j, c: f.clients[j]}
		if n, err := p.BlockNumber(ctx); err == nil {
			heads[j] = n
		}
	}
	if len(heads) < 2 {
		return
	}
	low := uint64(0)
	first := true
	for _, h := range heads {
		if first || h < low {
			low, first = h, false
		}
	}
	n := low - min(low, f.MaxLag)
	answers, bad := map[int]string{}, 0
	for j := range heads {
		h, err := f.BlockAt(ctx, &pinned{f: f, i: j, c: f.clients[j]}, n)
		switch {
		case err == nil:
			answers[j] = h.Hex()
		case errors.Is(err, nodetrust.ErrBadAnswer):
			f.ledger().Failed(j, err)
			bad++
		}
	}
	// One answer is a vote only when the other node was just caught
	// failing a check: an endpoint that merely did not answer leaves the
	// question open.
	if len(answers) >= 2 || len(answers) == 1 && bad > 0 {
		f.ledger().Vote(fmt.Sprintf("the hash of block %d", n), answers)
	}
}
