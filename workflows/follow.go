package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/paymentsd/paymentsd/payment"
)

// txWatch follows one on-chain transaction through the domain's
// transitions, one look at a time: the transaction's workflow and a
// session's workflow following a payment itself (followInline) both use it.
type txWatch struct {
	p      SessionTransfer
	status payment.TransactionStatus
	// blockHash is the block the transaction was confirmed in.
	blockHash string
	// pendingSince is when the transaction last entered pending: its
	// start, or the reorg that took its block away.
	pendingSince time.Time
	// told is the last news of each record, by record ID.
	told map[string]TxStatus
	// upsert keeps the workflow's PaymentStatus at the transaction's
	// status: a transaction's workflow; a session's shows the session's.
	upsert bool
	// readIn is the block whose transfers were last read, and transfers
	// what was read there: a later look at the same block does not read
	// them again (CheckInput.ReadIn).
	readIn    string
	transfers []payment.Transfer
}

func newTxWatch(ctx workflow.Context, p SessionTransfer) *txWatch {
	return &txWatch{p: p, status: payment.TxPending, pendingSince: workflow.Now(ctx), told: map[string]TxStatus{}}
}

// look reads the transaction once, moves it to its next status, and
// brings its records in line (SyncTransaction). It returns what the chain
// said and the records.
func (w *txWatch) look(ctx workflow.Context) (CheckOutput, []payment.Transaction, error) {
	p := w.p
	st, err := checkTransaction(ctx, CheckInput{Network: p.Network, TxHash: p.TxHash, ReadIn: w.readIn})
	if err != nil {
		return st, nil, err
	}
	switch {
	case st.SameBlock:
		st.Transfers = w.transfers
	case st.Mined && st.Succeeded && !st.InternalUnknown:
		w.readIn, w.transfers = st.BlockHash, st.Transfers
	default:
		w.readIn, w.transfers = "", nil
	}
	chain := payment.ChainLook{Mined: st.Mined, Succeeded: st.Succeeded, BlockHash: st.BlockHash, Final: st.Final,
		Confirmations: st.Confirmations, Required: st.RequiredConfirmations, Conflict: st.Conflict}
	if !st.Mined && workflow.Now(ctx).Sub(w.pendingSince) >= st.PendingTimeout {
		chain.Overdue = "not mined within " + st.PendingTimeout.String()
	}
	c := payment.Confirmation{Status: w.status, Block: w.blockHash}
	reason := c.Step(chain, payment.ConfirmIn)
	next := c.Status
	w.blockHash = c.Block
	if next != w.status && (next == payment.TxPending || next == payment.TxReversed) {
		w.pendingSince = workflow.Now(ctx) // followed from now, in case it is mined again
	}
	justMined := next == payment.TxConfirmed && w.status == payment.TxPending
	if next != w.status {
		w.status = next
		if w.upsert {
			_ = workflow.UpsertTypedSearchAttributes(ctx, PaymentStatus.ValueSet(string(w.status)))
		}
	}
	obs := payment.Observation{Network: p.Network, ChainID: p.ChainID, TxHash: p.TxHash, Status: w.status,
		Reason: reason, Mined: st.Mined, Succeeded: st.Succeeded, BlockHash: st.BlockHash,
		Confirmations: st.Confirmations, RequiredConfirmations: st.RequiredConfirmations, At: workflow.Now(ctx)}
	obs.Transfers = st.Transfers // none before an EVM transaction is mined; a Bitcoin one's are known sooner
	if st.Mined {
		n := int64(st.BlockNumber)
		obs.BlockNumber = &n
		obs.InternalUnknown = st.InternalUnknown
		obs.BlockTime = time.Unix(int64(st.MinedAt), 0).UTC()
	}
	synced, err := syncTransaction(ctx, SyncInput{Observation: obs, ReportIgnored: justMined})
	return st, synced.Transactions, err
}

// news returns what a record's session is to be told of it, and whether
// that is news since the last word.
func (w *txWatch) news(r payment.Transaction, st CheckOutput) (TxStatus, bool) {
	u := TxStatus{Key: w.p.Key(), RowID: r.ID, Status: r.Status, AssetID: r.AssetDefinitionID,
		AmountBaseUnits: r.AmountBaseUnits, Unexpected: r.Unexpected}
	if st.Mined {
		u.MinedAt = st.MinedAt
	}
	if !r.IsClaim() {
		u.TransferKey = transferKey(r.ChainID, r.TxHash, r.LogIndex)
	}
	if w.told[r.ID] == u {
		return u, false
	}
	w.told[r.ID] = u
	return u, true
}

// ended tells that the transaction needs no more looks: no record left to
// follow, and final or mined.
func (w *txWatch) ended(st CheckOutput, records []payment.Transaction) bool {
	for _, r := range records {
		if !r.Status.Terminal() {
			return false
		}
	}
	return w.status.Terminal() || st.Mined
}

// maxInlineLooks bounds the looks a session's workflow takes at a payment
// it follows itself (each adds a few events to its history): a payment
// still unsettled by then (a slow chain's finality, a long reorg) is
// handed to a transaction's workflow, which continues as new as it goes.
const maxInlineLooks = 300

// nextLook is how long a session's workflow waits before its next look
// at a payment it follows: the blocks still missing to the confirmations
// required (one block while it is pending), up to maxLookBlocks, so a
// payment takes about two looks from the block it is seen in to finalized.
func nextLook(status payment.TransactionStatus, st CheckOutput) time.Duration {
	blocks := 1
	if status == payment.TxConfirmed && !st.Final {
		blocks = min(max(st.RequiredConfirmations-st.Confirmations, 1), maxLookBlocks)
	}
	return time.Duration(blocks) * st.BlockTime
}

// deepEnough tells that a payment just confirmed is already final by the
// look that confirmed it: the next look (which sees its block still
// there) finalizes it.
func deepEnough(status payment.TransactionStatus, st CheckOutput) bool {
	return status == payment.TxConfirmed && (st.Final || st.Confirmations >= st.RequiredConfirmations)
}

// maxLookBlocks bounds the wait between two looks at a confirmed payment,
// in blocks: a reorg that takes its block away is seen within that many.
const maxLookBlocks = 8

// followInline follows a transfer that pays this session alone
// (PaysSessionAlone) to its end inside the session's workflow: no
// transaction workflow and no signals, its looks' news handed to the main
// loop like a transaction workflow's (onTxStatus). A transaction that turns out to pay another
// session too, or that is still not settled after maxInlineLooks, is
// handed to a transaction's workflow (follow), which tells every session.
func (cs *checkoutSession) followInline(ctx workflow.Context, in TransactionInput) {
	key := in.Transfer.Key()
	cs.inline[key] = true
	workflow.Go(ctx, func(ctx workflow.Context) {
		w := newTxWatch(ctx, in.Transfer)
		if t := in.Transfer; len(t.TxTransfers) > 0 {
			w.readIn, w.transfers = t.BlockHash, t.TxTransfers // what the scan read there
		}
		var pause time.Duration
		for looks := 1; ; looks++ {
			st, records, err := w.look(ctx)
			if err != nil {
				// Only an error no retry fixes gets here: as for a
				// transaction's workflow that failed, look again later.
				pause = min(max(2*pause, 10*time.Second), time.Hour)
				workflow.GetLogger(ctx).Warn("a payment's look failed; it looks again", "transaction", key,
					"after", pause, "error", err)
				if workflow.Sleep(ctx, pause) != nil {
					return
				}
				continue
			}
			pause = 0
			others := false
			for _, r := range records {
				if r.CheckoutSessionID != cs.s.ID {
					others = others || r.CheckoutSessionID != ""
					continue
				}
				if u, isNews := w.news(r, st); isNews {
					cs.news.Send(ctx, u)
				}
			}
			if others || looks >= maxInlineLooks && !w.ended(st, records) {
				delete(cs.inline, key)
				cs.restarts.Send(ctx, in)
				return
			}
			if w.ended(st, records) {
				delete(cs.inline, key)
				cs.news.Send(ctx, TxStatus{Key: key, Ended: true})
				return
			}
			if deepEnough(w.status, st) {
				// Confirmed by this look and already as deep as the
				// network asks (a scan behind the head, a session's task
				// late in its queue, a one-confirmation network): the
				// next look, at once and in the same workflow task,
				// finalizes it. No timer, no workflow task more.
				continue
			}
			if workflow.Sleep(ctx, nextLook(w.status, st)) != nil {
				return
			}
		}
	})
}
