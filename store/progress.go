package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/payment"
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

// Render turns a record into an event's data: the record as the API
// returns it, with its version. A nil Render records no event.
type Render[T any] func(record T, version int) ([]byte, error)

// AdvanceTransaction moves a transaction from one status to the next and
// records the change's event in the same database transaction. A change
// that was already recorded (the transaction's version has reached it)
// changes nothing.
func (s Payments) AdvanceTransaction(ctx context.Context, id string, c TxChange, render Render[payment.Transaction]) error {
	if err := payment.AdvanceTransaction(c.From, c.To); err != nil {
		return &payment.Error{Kind: payment.KindConflict, Message: err.Error()}
	}
	entry, _ := json.Marshal([]payment.StatusChange{{Status: c.To, At: c.At, Reason: c.Reason}})
	return s.WithTx(ctx, func(tx pgx.Tx) error {
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
			return mapErr(err)
		}
		if tag.RowsAffected() == 0 {
			return nil // recorded before
		}
		t, err := scanTx(tx.QueryRow(ctx, `SELECT `+txColumns+` FROM transactions WHERE id = $1`, id))
		if err != nil {
			return err
		}
		return insertEvent(ctx, tx, t.ProjectID, t.IsLive, c.EventType, t.ID, c.Version, render, t, c.At)
	})
}

// TransactionByHash returns the transaction recorded for a chain and hash.
func (s Payments) TransactionByHash(ctx context.Context, chainID int64, hash string) (payment.Transaction, error) {
	return scanTx(s.pool.QueryRow(ctx, `SELECT `+txColumns+` FROM transactions WHERE chain_id = $1 AND tx_hash = $2
		ORDER BY log_index LIMIT 1`, chainID, hash))
}

// insertEvent records an event of an object's change in the transaction
// that records the change itself (an outbox): the two are never apart.
// (object, version) keys it, so a repeated change adds nothing.
func insertEvent[T any](ctx context.Context, tx pgx.Tx, projectID string, isLive bool, typ payment.EventType, objectID string, version int,
	render Render[T], record T, at time.Time) error {
	if render == nil {
		return nil
	}
	data, err := render(record, version)
	if err != nil {
		return fmt.Errorf("render event: %w", err)
	}
	_, err = tx.Exec(ctx, `INSERT INTO events (id, project_id, is_live, type, object_id, version, data, created_at)
		VALUES ($1,$2,$3,$4,$5,$6,$7,$8) ON CONFLICT (object_id, version) DO NOTHING`,
		payment.NewID(payment.PrefixEvent, at), projectID, isLive, typ, objectID, version, data, at)
	return err
}
