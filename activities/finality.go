package activities

import (
	"context"
	"log/slog"
	"time"

	"github.com/paymentsd/paymentsd/internal/observability"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/workflows"
)

// CheckFinality checks the blocks of the network's finalized payments,
// from its finality depth plus its reorg window below the head, against
// the chain's blocks at their heights (one read per block), and hands the
// payments of each block no longer the chain's to their workflows: a
// transaction's, started from its finalized record, and a refund's or
// payout's. They record the reversal and follow the transfer in case it
// is mined again. Starting a workflow that runs finds it running, so a
// retried check starts nothing twice.
func (a *Activities) CheckFinality(ctx context.Context, in workflows.CheckFinalityInput) (workflows.CheckFinalityOutput, error) {
	c, err := a.chain(in.Network)
	if err != nil {
		return workflows.CheckFinalityOutput{}, err
	}
	n := c.Network
	out := workflows.CheckFinalityOutput{Wait: time.Duration(n.ReorgCheckInterval)}
	f := c.Family()
	if out.Head, err = f.Head(ctx); err != nil {
		return out, err
	}
	out.From = n.ReorgWindowFrom(out.Head)
	blocks, err := a.Store.Chains().FinalizedBlocks(ctx, n.Key, int64(out.From), "")
	if err != nil {
		return out, err
	}
	heights := make([]uint64, 0, len(blocks))
	for _, b := range blocks {
		if h := uint64(b.Number); len(heights) == 0 || heights[len(heights)-1] != h {
			heights = append(heights, h)
		}
	}
	out.Blocks = len(heights)
	canonical, err := f.BlockHashes(ctx, heights)
	if err != nil {
		return out, err
	}
	for _, b := range blocks {
		if payment.SameBlock(canonical[uint64(b.Number)], b.Hash) {
			continue
		}
		out.Gone++
		observability.FinalizedBlocksGone.WithLabelValues(n.Key).Inc()
		slog.WarnContext(ctx, "a block of finalized payments left the chain: a reorg deeper than finality", "network", n.Key,
			"block", b.Number, "hash", b.Hash, "canonical", canonical[uint64(b.Number)])
		handed, err := a.handReversed(ctx, n.Key, b)
		out.Reversed += handed
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// handReversed starts the workflows of the finalized payments of a block
// that left the chain, and returns how many it handed over.
func (a *Activities) handReversed(ctx context.Context, network string, b store.BlockRef) (int, error) {
	txs, items, err := a.Store.Chains().FinalizedInBlock(ctx, network, b, "")
	if err != nil {
		return 0, err
	}
	now := time.Now().UTC()
	for _, t := range txs {
		if err := workflows.StartPastFinality(ctx, a.Temporal, t, now); err != nil {
			return 0, err
		}
	}
	for _, o := range items {
		if err := workflows.StartOutgoingRecheck(ctx, a.Temporal, o.ID, o.ProjectID, o.IsLive, network); err != nil {
			return 0, err
		}
	}
	return len(txs) + len(items), nil
}

// SettleSession works a session's books out again from its records, its
// workflow having ended: a payment that counted for it was reversed past
// finality, or returned.
func (a *Activities) SettleSession(ctx context.Context, in workflows.SettleSessionInput) error {
	return classify(a.Store.Chains().SettleSession(ctx, in.SessionID, in.At, renderSession))
}
