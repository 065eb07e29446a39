package service

import (
	"context"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/paymentsd/paymentsd/internal/nodetrust"
)

// ReadyCacheFor is how long the networks' state found by Ready is served
// again before the nodes are asked anew: a flood of readiness probes
// costs each network at most one node call in that time.
const ReadyCacheFor = 5 * time.Second

// readyCache is the networks' state Ready found last.
type readyCache struct {
	mu       sync.Mutex // held while the nodes are asked: callers wait for one answer
	at       time.Time
	networks []NetworkReadiness
}

// Readiness is what the engine's dependencies answer now.
type Readiness struct {
	// Database and Temporal are nil when they answer.
	Database error
	Temporal error
	// Networks are the watched networks, by key, in key order.
	Networks []NetworkReadiness
}

// NetworkReadiness is one network's state: its head block, or that no RPC
// URL of it answers; and what the engine believes of its nodes (those set
// aside for a failed check or for disagreeing with the others, and
// whether they disagree with no majority).
type NetworkReadiness struct {
	Key   string
	Head  uint64
	Err   error
	Nodes nodetrust.Status
}

// Ready asks the database and Temporal, each within timeout, and gives
// every network's state as its nodes answered within timeout at most
// ReadyCacheFor ago: calls at once wait for one round of node calls, and
// a caller that goes away does not cut that round short for the others.
// A network that does not answer is logged with its error, which stays
// out of what the caller shows.
func (svc Chains) Ready(ctx context.Context, timeout time.Duration) Readiness {
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var r Readiness
	r.Database = svc.store.Pool().Ping(tctx)
	if _, err := svc.temporal.CheckHealth(tctx, nil); err != nil {
		r.Temporal = err
	}
	r.Networks = svc.networksReady(ctx, timeout)
	return r
}

// networksReady is every network's state, from the cache when it is
// younger than ReadyCacheFor.
func (svc Chains) networksReady(ctx context.Context, timeout time.Duration) []NetworkReadiness {
	c := &svc.ready
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.at.IsZero() && time.Since(c.at) < ReadyCacheFor {
		return c.networks
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	c.networks, c.at = svc.askNetworks(ctx), time.Now()
	return c.networks
}

// askNetworks asks every network's nodes for their head, at once.
func (svc Chains) askNetworks(ctx context.Context) []NetworkReadiness {
	keys := make([]string, 0, len(svc.chains))
	for k := range svc.chains {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	networks := make([]NetworkReadiness, len(keys))
	done := make(chan struct{}, len(keys))
	for i, k := range keys {
		go func() {
			defer func() { done <- struct{}{} }()
			f := svc.chains[k].Family()
			head, err := f.Head(ctx)
			networks[i] = NetworkReadiness{Key: k, Head: head, Err: err, Nodes: f.Nodes()}
			if err != nil {
				slog.WarnContext(ctx, "network unreachable", "network", k, "err", err)
			}
		}()
	}
	for range keys {
		<-done
	}
	return networks
}
