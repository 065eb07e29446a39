package chains

import (
	"context"
	"log/slog"
	"sort"
	"time"

	"github.com/paymentsd/paymentsd/service/internal/core"
)

// ReadyCacheFor is how long the networks' state found by Ready is served
// again before the nodes are asked anew: a flood of readiness probes
// costs each network at most one node call in that time.
const ReadyCacheFor = 5 * time.Second

// NetworkReadiness is one network's state: its head block, or that no RPC
// URL of it answers; and what the engine believes of its nodes (the
// floor keeps the last found, core.ReadyCache).
type NetworkReadiness = core.NetworkReadiness

// Readiness is what the engine's dependencies answer now.
type Readiness struct {
	// Database and Temporal are nil when they answer.
	Database error
	Temporal error
	// Networks are the watched networks, by key, in key order.
	Networks []NetworkReadiness
}

// Ready asks the database and Temporal, each within timeout, and gives
// every network's state as its nodes answered within timeout at most
// ReadyCacheFor ago: calls at once wait for one round of node calls, and
// a caller that goes away does not cut that round short for the others.
// A network that does not answer is logged with its error, which stays
// out of what the caller shows.
func (svc Service) Ready(ctx context.Context, timeout time.Duration) Readiness {
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var r Readiness
	r.Database = svc.Store.Pool().Ping(tctx)
	if _, err := svc.Temporal.CheckHealth(tctx, nil); err != nil {
		r.Temporal = err
	}
	r.Networks = svc.networksReady(ctx, timeout)
	return r
}

// networksReady is every network's state, from the cache when it is
// younger than ReadyCacheFor.
func (svc Service) networksReady(ctx context.Context, timeout time.Duration) []NetworkReadiness {
	c := &svc.ReadyCache
	c.Mu.Lock()
	defer c.Mu.Unlock()
	if !c.At.IsZero() && time.Since(c.At) < ReadyCacheFor {
		return c.Networks
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	c.Networks, c.At = svc.askNetworks(ctx), time.Now()
	return c.Networks
}

// askNetworks asks every network's nodes for their head, at once.
func (svc Service) askNetworks(ctx context.Context) []NetworkReadiness {
	keys := make([]string, 0, len(svc.Chains))
	for k := range svc.Chains {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	networks := make([]NetworkReadiness, len(keys))
	done := make(chan struct{}, len(keys))
	for i, k := range keys {
		go func() {
			defer func() { done <- struct{}{} }()
			f := svc.Chains[k].Family()
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
