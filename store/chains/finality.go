package chains

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store/checkout"
	"github.com/paymentsd/paymentsd/store/internal/db"
)

// BlockRef is a block by height and hash.
type BlockRef struct {
	Number int64
	Hash   string
}

// FinalizedBlocks returns the blocks, from height from on, that hold the
// network's finalized payments: incoming transactions, refunds and
// payouts (of one project, unless projectID is empty). The finality
// watch checks each against the chain.
func (s Store) FinalizedBlocks(ctx context.Context, network string, from int64, projectID string) ([]BlockRef, error) {
	rows, err := s.h.Pool.Query(ctx, `
		SELECT block_number, block_hash FROM transactions WHERE network = $1 AND status = 'finalized' AND block_number >= $2
			AND ($3 = '' OR project_id = $3)
		UNION SELECT block_number, block_hash FROM refunds WHERE network = $1 AND status = 'finalized' AND block_number >= $2
			AND ($3 = '' OR project_id = $3)
		UNION SELECT block_number, block_hash FROM payouts WHERE network = $1 AND status = 'finalized' AND block_number >= $2
			AND ($3 = '' OR project_id = $3)
		ORDER BY 1`, network, from, projectID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (BlockRef, error) {
		var b BlockRef
		return b, r.Scan(&b.Number, &b.Hash)
	})
}

// FinalizedInBlock returns the network's finalized payments in a block:
// one incoming record per transaction hash, and the refunds' and payouts'
// IDs with their owners (of one project, unless projectID is empty).
func (s Store) FinalizedInBlock(ctx context.Context, network string, b BlockRef, projectID string) ([]payment.Transaction, []OutgoingRef, error) {
	rows, err := s.h.Pool.Query(ctx, `SELECT DISTINCT ON (tx_hash) `+db.TxColumns+` FROM transactions
		WHERE network = $1 AND status = 'finalized' AND block_number = $2 AND block_hash = $3 AND ($4 = '' OR project_id = $4)
		ORDER BY tx_hash, log_index`, network, b.Number, b.Hash, projectID)
	if err != nil {
		return nil, nil, err
	}
	txs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (payment.Transaction, error) { return db.ScanTx(r) })
	if err != nil {
		return nil, nil, err
	}
	rows, err = s.h.Pool.Query(ctx, `
		SELECT id, project_id, is_live, status FROM refunds WHERE network = $1 AND status = 'finalized' AND block_number = $2 AND block_hash = $3
			AND ($4 = '' OR project_id = $4)
		UNION ALL SELECT id, project_id, is_live, status FROM payouts WHERE network = $1 AND status = 'finalized' AND block_number = $2 AND block_hash = $3
			AND ($4 = '' OR project_id = $4)`,
		network, b.Number, b.Hash, projectID)
	if err != nil {
		return nil, nil, err
	}
	out, err := collectOutgoingRefs(rows)
	return txs, out, err
}

// collectOutgoingRefs reads rows of (id, project_id, is_live, status).
func collectOutgoingRefs(rows pgx.Rows) ([]OutgoingRef, error) {
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (OutgoingRef, error) {
		var o OutgoingRef
		return o, r.Scan(&o.ID, &o.ProjectID, &o.IsLive, &o.Status)
	})
}

// OutgoingRef names a refund or a payout, with its owner and status.
type OutgoingRef struct {
	ID        string
	ProjectID string
	IsLive    bool
	Status    payment.RefundStatus
}

// SettleSession works the books of a session whose workflow has ended out
// again from its records (payment.Resettle), and records the change with
// its events: a payment that counted for it was reversed past finality,
// or returned.
func (s Store) SettleSession(ctx context.Context, id string, at time.Time, render db.Render[payment.Session]) error {
	return s.h.WithTx(ctx, func(tx pgx.Tx) error {
		cs, err := checkout.ScanSession(tx.QueryRow(ctx, `SELECT `+checkout.SessionColumns+` FROM checkout_sessions WHERE id = $1 FOR UPDATE`, id))
		if err != nil {
			return err
		}
		var completeOn payment.TransactionStatus
		var tolerance string
		if err := tx.QueryRow(ctx, `SELECT complete_on, underpayment_tolerance_percent::text FROM projects WHERE id = $1`,
			cs.ProjectID).Scan(&completeOn, &tolerance); err != nil {
			return db.MapErr(err)
		}
		records, err := db.SessionTransactions(ctx, tx, id)
		if err != nil {
			return err
		}
		progress := payment.Resettle(cs, records, completeOn, decimal.RequireFromString(tolerance))
		return checkout.UpdateSession(ctx, tx, cs, at, func(s *payment.Session) []payment.EventType { return s.Progress(progress) }, render)
	})
}

// ReversedUnsettled returns what a reorg past finality reversed and no one
// has settled yet (of one project, unless projectID is empty): incoming
// records reversed whose session still flags payment_reversed, and
// refunds and payouts reversed.
func (s Store) ReversedUnsettled(ctx context.Context, projectID string) ([]payment.Transaction, []OutgoingRef, error) {
	rows, err := s.h.Pool.Query(ctx, `SELECT `+db.TxColumns+` FROM transactions t WHERE status = 'reversed' AND ($1 = '' OR project_id = $1)
		AND EXISTS (SELECT 1 FROM checkout_sessions c WHERE c.id = coalesce(t.assigned_session_id, t.checkout_session_id)
			AND c.exception = 'payment_reversed') ORDER BY created_at, id`, projectID)
	if err != nil {
		return nil, nil, err
	}
	txs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (payment.Transaction, error) { return db.ScanTx(r) })
	if err != nil {
		return nil, nil, err
	}
	rows, err = s.h.Pool.Query(ctx, `
		SELECT id, project_id, is_live, status FROM refunds WHERE status = 'reversed' AND ($1 = '' OR project_id = $1)
		UNION ALL SELECT id, project_id, is_live, status FROM payouts WHERE status = 'reversed' AND ($1 = '' OR project_id = $1)
		ORDER BY 1`, projectID)
	if err != nil {
		return nil, nil, err
	}
	out, err := collectOutgoingRefs(rows)
	return txs, out, err
}
