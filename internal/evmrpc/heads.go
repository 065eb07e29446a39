package evmrpc

import (
	"context"
	"math/big"

	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/paymentsd/paymentsd/internal/observability"
)

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
