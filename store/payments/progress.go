package payments

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store/internal/db"
)

// TxChange is one status transition of a transaction with what was learnt
// on-chain, recorded together with its event.
type TxChange struct {
	From, To              payment.TransactionStatus
	At                    time.Time
	Reason                string
	BlockNumber           *int64
	BlockHash             string
	Confirmations         int
	RequiredConfirmations int
	// Version is the transaction's version after this change; with the
	// transaction's ID it keys the event, so recording twice adds nothing.
	Version   int
	EventType payment.EventType
}

// AdvanceTransaction moves a transaction from one status to the next and
// records the change's event in the same database transaction. A change
// that was already recorded (the transaction's version has reached it)
// changes nothing.
func (s Store) AdvanceTransaction(ctx context.Context, id string, c TxChange, render db.Render[payment.Transaction]) error {
	if err := payment.AdvanceTransaction(c.From, c.To); err != nil {
		return &payment.Error{Kind: payment.KindConflict, Message: err.Error()}
	}
	entry, _ := json.Marshal([]payment.StatusChange{{Status: c.To, At: c.At, Reason: c.Reason}})
	return s.h.WithTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE transactions SET status = $3, status_history = status_history || $4::jsonb,
			block_number = $5, block_hash = $6, confirmations = $7, required_confirmations = $8,
			failure_reason = CASE WHEN $3 = 'failed' THEN $9 ELSE failure_reason END,
			confirmed_at = CASE WHEN $3 = 'confirmed' THEN $10 ELSE confirmed_at END,
			finalized_at = CASE WHEN $3 = 'finalized' THEN $10 ELSE finalized_at END,
			failed_at = CASE WHEN $3 = 'failed' THEN $10 ELSE failed_at END,
			version = $11, updated_at = $10
			WHERE id = $1 AND status = $2 AND version = $11 - 1`,
			id, c.From, c.To, entry, c.BlockNumber, c.BlockHash, c.Confirmations, c.RequiredConfirmations,
			c.Reason, c.At, c.Version)
		if err != nil {
			return db.MapErr(err)
		}
		if tag.RowsAffected() == 0 {
			return nil // recorded before
		}
		t, err := db.ScanTx(tx.QueryRow(ctx, `SELECT `+db.TxColumns+` FROM transactions WHERE id = $1`, id))
		if err != nil {
			return err
		}
		return db.InsertEvent(ctx, tx, t.ProjectID, t.IsLive, c.EventType, t.ID, c.Version, render, t, c.At)
	})
}

// TransactionByHash returns the transaction recorded for a chain and hash.
func (s Store) TransactionByHash(ctx context.Context, chainID int64, hash string) (payment.Transaction, error) {
	return db.ScanTx(s.h.Pool.QueryRow(ctx, `SELECT `+db.TxColumns+` FROM transactions WHERE chain_id = $1 AND tx_hash = $2
		ORDER BY log_index LIMIT 1`, chainID, hash))
}
