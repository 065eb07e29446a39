package activities

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"go.temporal.io/sdk/temporal"

	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/workflows"
)

// freshScanDepth is how far behind the head a scanner with no usable cursor
// starts (a first start, or a chain that was replaced).
const freshScanDepth = 64

// headWait is how long one scan waits at the chain's head for a new block.
const headWait = 5 * time.Second

func (a *Activities) chain(key string) (*chainwatch.Chain, error) {
	c, ok := a.Chains[key]
	if !ok {
		return nil, temporal.NewNonRetryableApplicationError("unknown network "+key, "invalid", nil)
	}
	return c, nil
}

// ScanNetwork scans the blocks after the cursor for payments to watched
// deposit addresses. It does not move the cursor itself: the scanner
// workflow does, with the result, so a retried scan rescans the same range.
// A cursor whose block left the chain rewinds to the newest kept block
// still on it; with none, the scan starts again near the head.
func (a *Activities) ScanNetwork(ctx context.Context, in workflows.ScanInput) (workflows.ScanOutput, error) {
	c, err := a.chain(in.Network)
	if err != nil {
		return workflows.ScanOutput{}, err
	}
	sc := c.Scanner()
	out := workflows.ScanOutput{Cursor: in.Cursor}
	head, err := sc.Head(ctx)
	if err != nil {
		return out, fmt.Errorf("head: %w", err)
	}
	cursor := chainwatch.Cursor{Number: in.Cursor.Number, Hash: common.HexToHash(in.Cursor.Hash)}
	if in.Cursor.Hash != "" {
		ok, err := sc.Canonical(ctx, cursor)
		if err != nil {
			return out, err
		}
		if !ok {
			if cursor, err = a.commonAncestor(ctx, sc, in.Network); err != nil {
				return out, err
			}
		}
	}
	from := cursor.Number + 1
	if cursor.Hash == (common.Hash{}) {
		from = 0
		if head > freshScanDepth {
			from = head - freshScanDepth
		}
	}
	out.Cursor = workflows.ScanCursor{Number: cursor.Number, Hash: hashString(cursor.Hash)}
	// At the head, wait here for the next block rather than in a workflow
	// timer: a payment is seen one poll interval after its block, and the
	// scanner's history grows only when there is something to scan.
	for wait := time.Now().Add(headWait); from > head; {
		if time.Now().After(wait) {
			out.CaughtUp = true
			return out, nil
		}
		select {
		case <-ctx.Done():
			return out, ctx.Err()
		case <-time.After(time.Duration(c.Network.PollInterval)):
		}
		if head, err = sc.Head(ctx); err != nil {
			return out, fmt.Errorf("head: %w", err)
		}
	}
	to := min(head, from+uint64(c.Network.MaxBlockRange)-1)
	watched, err := a.Store.WatchedAddresses(ctx, time.Now())
	if err != nil {
		return out, err
	}
	sessions := make(map[string]string, len(watched))
	for _, w := range watched {
		sessions[strings.ToLower(w.Address)] = w.SessionID
	}
	blocks, transfers, err := sc.Scan(ctx, from, to, cursor.Hash, func(addr common.Address) bool {
		_, ok := sessions[chainwatch.Normalize(addr)]
		return ok
	})
	if err != nil {
		return out, err // a reorg during the scan: the retry starts over
	}
	kept := make([]store.ScannedBlock, len(blocks))
	for i, b := range blocks {
		kept[i] = store.ScannedBlock{Number: int64(b.Number), Hash: b.Hash.Hex(), Parent: b.Parent.Hex()}
	}
	if err := a.Store.SaveScanned(ctx, in.Network, int64(from), kept, time.Now()); err != nil {
		return out, err
	}
	for _, t := range transfers {
		asset, ok := c.AssetOf(t)
		if !ok {
			continue
		}
		out.Payments = append(out.Payments, workflows.Payment{
			SessionID: sessions[chainwatch.Normalize(t.To)], Network: in.Network, ChainID: c.Network.ChainID,
			TxHash: hashString(t.TxHash), LogIndex: t.LogIndex, From: t.From.Hex(), To: t.To.Hex(), AssetID: asset.ID,
			AmountBaseUnits: t.Amount.String(), BlockNumber: t.BlockNumber, BlockHash: t.BlockHash.Hex(), Source: "scanner",
		})
	}
	last := blocks[len(blocks)-1]
	out.Cursor = workflows.ScanCursor{Number: last.Number, Hash: last.Hash.Hex()}
	out.CaughtUp = to == head
	return out, nil
}

// commonAncestor walks the kept blocks back to the newest one still on the
// chain; zero when none is (a deep reorg or a new chain).
func (a *Activities) commonAncestor(ctx context.Context, sc chainwatch.Scanner, network string) (chainwatch.Cursor, error) {
	kept, err := a.Store.ScannedBlocks(ctx, network)
	if err != nil {
		return chainwatch.Cursor{}, err
	}
	for _, b := range kept {
		c := chainwatch.Cursor{Number: uint64(b.Number), Hash: common.HexToHash(b.Hash)}
		ok, err := sc.Canonical(ctx, c)
		if err != nil {
			return chainwatch.Cursor{}, err
		}
		if ok {
			return c, nil
		}
	}
	return chainwatch.Cursor{}, a.Store.ResetScanned(ctx, network)
}

func hashString(h common.Hash) string {
	if h == (common.Hash{}) {
		return ""
	}
	return h.Hex()
}

// CheckTransaction reads a transaction's receipt and confirmations, and
// the transfer it makes to the deposit address.
func (a *Activities) CheckTransaction(ctx context.Context, in workflows.CheckInput) (workflows.CheckOutput, error) {
	c, err := a.chain(in.Network)
	if err != nil {
		return workflows.CheckOutput{}, err
	}
	n := c.Network
	out := workflows.CheckOutput{RequiredConfirmations: n.Confirmations, BlockTime: time.Duration(n.BlockTime),
		PendingTimeout: time.Duration(n.PendingTimeout)}
	hash := common.HexToHash(in.TxHash)
	st, err := chainwatch.CheckTransaction(ctx, c.Client, hash, n.FinalizedTag())
	if err != nil {
		return out, err
	}
	out.Mined, out.Succeeded, out.BlockNumber, out.Confirmations, out.Final = st.Mined, st.Succeeded, st.BlockNumber, int(st.Confirmations), st.Final
	out.BlockHash = hashString(st.BlockHash)
	transfers := st.Transfers
	if !st.Mined || !st.Succeeded {
		// Not mined (or reverted): what the transaction would pay, from
		// the transaction itself.
		if t, found, err := chainwatch.IntendedTransfer(ctx, c.Client, hash); err != nil {
			return out, err
		} else if found && t != nil {
			transfers = []chainwatch.Transfer{*t}
		}
	}
	for _, t := range transfers {
		if !strings.EqualFold(t.To.Hex(), in.DepositAddress) {
			continue
		}
		asset, ok := c.AssetOf(t)
		if !ok {
			continue
		}
		out.Payment = &workflows.Payment{Network: in.Network, ChainID: n.ChainID, TxHash: in.TxHash, LogIndex: t.LogIndex,
			From: t.From.Hex(), To: t.To.Hex(), AssetID: asset.ID, AmountBaseUnits: t.Amount.String()}
		break
	}
	return out, nil
}

// RecordTransaction records a transaction when first seen, with its event.
func (a *Activities) RecordTransaction(ctx context.Context, in workflows.RecordInput) (payment.Transaction, error) {
	t, err := a.Store.RecordTransaction(ctx, in.Transaction, renderTransaction)
	return t, classify(err)
}

// AdvanceTransaction records a transaction's status change with its event.
func (a *Activities) AdvanceTransaction(ctx context.Context, in workflows.AdvanceInput) error {
	event := "transaction." + string(in.To)
	if in.From == payment.TxConfirmed && in.To == payment.TxPending {
		event = "transaction.reorged"
	}
	var block *int64
	if in.Check.Mined {
		n := int64(in.Check.BlockNumber)
		block = &n
	}
	err := a.Store.AdvanceTransaction(ctx, in.TransactionID, store.TxChange{From: in.From, To: in.To, At: in.At,
		Reason: in.Reason, BlockNumber: block, BlockHash: in.Check.BlockHash, Confirmations: in.Check.Confirmations,
		RequiredConfirmations: in.Check.RequiredConfirmations, Version: in.Version, EventType: event}, renderTransaction)
	return classify(err)
}
