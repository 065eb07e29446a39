package service

import (
	"context"
	"log/slog"
	"sort"
	"time"
)

// Readiness is what the engine's dependencies answer now.
type Readiness struct {
	// Database and Temporal are nil when they answer.
	Database error
	Temporal error
	// Networks are the watched networks, by key, in key order.
	Networks []NetworkReadiness
}

// NetworkReadiness is one network's state: its head block, or that no RPC
// URL of it answers.
type NetworkReadiness struct {
	Key  string
	Head uint64
	Err  error
}

// Ready asks the database, Temporal and every network's nodes, each within
// timeout. A network that does not answer is logged with its error, which
// may name an RPC URL and so stays out of what the caller shows.
func (svc *Service) Ready(ctx context.Context, timeout time.Duration) Readiness {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var r Readiness
	r.Database = svc.store.Pool().Ping(ctx)
	if _, err := svc.temporal.CheckHealth(ctx, nil); err != nil {
		r.Temporal = err
	}
	keys := make([]string, 0, len(svc.chains))
	for k := range svc.chains {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	r.Networks = make([]NetworkReadiness, len(keys))
	done := make(chan struct{}, len(keys))
	for i, k := range keys {
		go func() {
			defer func() { done <- struct{}{} }()
			head, err := svc.chains[k].Family().Head(ctx)
			r.Networks[i] = NetworkReadiness{Key: k, Head: head, Err: err}
			if err != nil {
				slog.WarnContext(ctx, "network unreachable", "network", k, "err", err)
			}
		}()
	}
	for range keys {
		<-done
	}
	return r
}
