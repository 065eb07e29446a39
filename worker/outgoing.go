package worker

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/workflows"
)

// SweepFollows starts the workflows of up to limit refunds and payouts
// sent with their workflow's start not made yet (the scan found their
// transfer, or the API process that recorded the report could not reach
// Temporal), and returns how many it started. It stops at the first start
// that fails; the rest are due again once their lease passes.
func SweepFollows(ctx context.Context, st *store.Store, c client.Client, limit int) (int, error) {
	ids, err := st.MoneyOut().ClaimOutgoingFollows(ctx, limit, 30*time.Second)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		var o payment.Outgoing
		var projectID string
		var isLive bool
		if strings.HasPrefix(id, payment.PrefixRefund) {
			r, err := st.MoneyOut().RefundByID(ctx, id)
			o, projectID, isLive = r.Outgoing, r.ProjectID, r.IsLive
			if err != nil && !errors.Is(err, payment.ErrNotFound) {
				return n, err
			}
		} else {
			p, err := st.MoneyOut().PayoutByID(ctx, id)
			o, projectID, isLive = p.Outgoing, p.ProjectID, p.IsLive
			if err != nil && !errors.Is(err, payment.ErrNotFound) {
				return n, err
			}
		}
		if projectID != "" {
			one, cancel := context.WithTimeout(ctx, 10*time.Second)
			err = workflows.StartOutgoing(one, c, id, projectID, isLive, o)
			cancel()
			if err != nil {
				return n, err
			}
		}
		if err := st.MoneyOut().FollowStarted(ctx, id); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// runFollowSweeper sweeps the pending follows every interval until ctx
// ends, and at once again when a sweep was full.
func runFollowSweeper(ctx context.Context, st *store.Store, c client.Client, every time.Duration) {
	const batch = 100
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		n, err := SweepFollows(ctx, st, c, batch)
		if err != nil && ctx.Err() == nil {
			slog.Warn("outgoing follow sweep", "started", n, "err", err)
		}
		if n == batch {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
