package payments

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store/checkout"
	"github.com/paymentsd/paymentsd/store/internal/db"
)

// InsertTransaction records a transaction; one that is already recorded
// (same chain, hash and log index) is left as it is.
func (s Store) InsertTransaction(ctx context.Context, t payment.Transaction) error {
	history, _ := json.Marshal(t.StatusHistory)
	_, err := s.h.Pool.Exec(ctx, `INSERT INTO transactions (`+txColumnsInsert+`)
		VALUES ($1,$2,nullif($3, ''),nullif($4, ''),$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22,$23,$24,$25,$26,$27,$28,$29)
		ON CONFLICT (chain_id, tx_hash, log_index) DO NOTHING`,
		t.ID, t.ProjectID, t.CheckoutSessionID, t.PaymentPlanID, t.IsLive, t.Status, t.Network, t.ChainID,
		t.TxHash, logIndexValue(t.LogIndex), t.FromAddress, t.ToAddress, t.AssetDefinitionID, t.Symbol, t.Amount, t.AmountBaseUnits,
		t.AmountUSD.String(), t.BlockNumber, t.BlockHash, t.Confirmations, t.RequiredConfirmations, t.FailureReason,
		history, t.CreatedAt, t.UpdatedAt, t.ConfirmedAt, t.FinalizedAt, t.FailedAt, t.Unexpected)
	return db.MapErr(err)
}

const txColumnsInsert = `id, project_id, checkout_session_id, payment_plan_id, is_live, status, network, chain_id,
	tx_hash, log_index, from_address, to_address, asset_definition_id, symbol, amount, amount_base_units,
	amount_usd, block_number, block_hash, confirmations, required_confirmations, failure_reason,
	status_history, created_at, updated_at, confirmed_at, finalized_at, failed_at, unexpected`

// GetTransaction returns a transaction of the principal's project and environment.
func (s Store) GetTransaction(ctx context.Context, p payment.Principal, id string) (payment.Transaction, error) {
	return db.ScanTx(s.h.Pool.QueryRow(ctx, `SELECT `+db.TxColumns+` FROM transactions
		WHERE id = $1 AND project_id = $2 AND is_live = $3`, id, p.ProjectID, p.IsLive))
}

// ListTransactions lists the principal's transactions, newest first.
func (s Store) ListTransactions(ctx context.Context, p payment.Principal, q payment.ListQuery) ([]payment.Transaction, int, error) {
	return db.List(ctx, s.h, "transactions", db.TxColumns, txFilter(p, q), q, db.ScanTx)
}

// unassignedSQL keeps the unexpected transfers not assigned to a session.
const unassignedSQL = "unexpected AND assigned_session_id IS NULL"

// txFilter is a transactions list's filter: the list's, and with
// q.Flagged the unassigned unexpected transfers only.
func txFilter(p payment.Principal, q payment.ListQuery) *db.Filter {
	f := db.NewFilter(p, q, "status")
	if q.Flagged {
		f.Where = append(f.Where, unassignedSQL)
	}
	return f
}

// SessionTransactions returns a session's transactions, oldest first (a
// transaction's transfers in the order of their logs), with the unexpected
// transfers assigned to it.
func (s Store) SessionTransactions(ctx context.Context, sessionID string) ([]payment.Transaction, error) {
	return db.SessionTransactions(ctx, s.h.Pool, sessionID)
}

// RecordTransaction records a newly seen transaction with its first event,
// or, if the chain, hash and log index are recorded already, returns the
// stored one unchanged: the activity that calls it can be retried.
func (s Store) RecordTransaction(ctx context.Context, t payment.Transaction, render db.Render[payment.Transaction]) (payment.Transaction, error) {
	var stored payment.Transaction
	err := s.h.WithTx(ctx, func(tx pgx.Tx) error {
		history, _ := json.Marshal(t.StatusHistory)
		tag, err := tx.Exec(ctx, `INSERT INTO transactions (`+txColumnsInsert+`, version)
			VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22,$23,$24,$25,$26,$27,$28,$29,1)
			ON CONFLICT (chain_id, tx_hash, log_index) DO NOTHING`,
			t.ID, t.ProjectID, t.CheckoutSessionID, t.PaymentPlanID, t.IsLive, t.Status, t.Network, t.ChainID,
			t.TxHash, logIndexValue(t.LogIndex), t.FromAddress, t.ToAddress, t.AssetDefinitionID, t.Symbol, t.Amount, t.AmountBaseUnits,
			t.AmountUSD.String(), t.BlockNumber, t.BlockHash, t.Confirmations, t.RequiredConfirmations, t.FailureReason,
			history, t.CreatedAt, t.UpdatedAt, t.ConfirmedAt, t.FinalizedAt, t.FailedAt, t.Unexpected)
		if err != nil {
			return db.MapErr(err)
		}
		stored, err = db.ScanTx(tx.QueryRow(ctx, `SELECT `+db.TxColumns+` FROM transactions
			WHERE chain_id = $1 AND tx_hash = $2 AND log_index = $3`, t.ChainID, t.TxHash, t.LogIndex))
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		return db.InsertEvent(ctx, tx, t.ProjectID, t.IsLive, payment.TransactionEvent("", t.Status), t.ID, 1, render, stored, t.CreatedAt)
	})
	return stored, err
}

// logIndexValue is a log index as stored: a claim has none.
func logIndexValue(i int) *int {
	if i == payment.LogIndexClaim {
		return nil
	}
	return &i
}

// AssignTransaction assigns an unexpected transfer to a session
// (payment.Transaction.Assign) and records its event. settle, when not
// nil, is the session's change once it counts the transfer: it gets the
// session and its transactions, assigned ones included, and returns the
// session's events (for a session whose workflow has ended; a running one
// records its own progress). Both are one database transaction. It returns
// the transaction as recorded; assigning it again to the same session
// changes nothing.
func (s Store) AssignTransaction(ctx context.Context, txID, sessionID string, at time.Time, renderTx db.Render[payment.Transaction],
	settle func(*payment.Session, []payment.Transaction) []payment.EventType, renderSession db.Render[payment.Session]) (payment.Transaction, error) {
	var t payment.Transaction
	err := s.h.WithTx(ctx, func(tx pgx.Tx) error {
		var err error
		if t, err = db.ScanTx(tx.QueryRow(ctx, `SELECT `+db.TxColumns+` FROM transactions WHERE id = $1 FOR UPDATE`, txID)); err != nil {
			return err
		}
		cs, err := checkout.ScanSession(tx.QueryRow(ctx, `SELECT `+checkout.SessionColumns+` FROM checkout_sessions WHERE id = $1 FOR UPDATE`, sessionID))
		if err != nil {
			return err
		}
		events, err := t.Assign(cs)
		if err != nil {
			return err
		}
		if len(events) > 0 {
			t.UpdatedAt = at
			if _, err := tx.Exec(ctx, `UPDATE transactions SET assigned_session_id = $2, updated_at = $3, version = version + $4
				WHERE id = $1`, t.ID, sessionID, at, len(events)); err != nil {
				return db.MapErr(err)
			}
			base := t.Version
			for i, typ := range events {
				t.Version = base + i + 1
				if err := db.InsertEvent(ctx, tx, t.ProjectID, t.IsLive, typ, t.ID, t.Version, renderTx, t, at); err != nil {
					return err
				}
			}
		}
		if settle == nil {
			return nil
		}
		txs, err := db.SessionTransactions(ctx, tx, sessionID)
		if err != nil {
			return db.MapErr(err)
		}
		return checkout.UpdateSession(ctx, tx, cs, at, func(s *payment.Session) []payment.EventType { return settle(s, txs) }, renderSession)
	})
	return t, err
}

// UnfinishedTransactions returns the transactions not final yet (pending
// or confirmed), whose workflows must be running; of one project when
// projectID is set.
func (s Store) UnfinishedTransactions(ctx context.Context, projectID string) ([]payment.Transaction, error) {
	rows, err := s.h.Pool.Query(ctx, `SELECT `+db.TxColumns+` FROM transactions
		WHERE status IN ('pending', 'confirmed') AND ($1 = '' OR project_id = $1) ORDER BY created_at, id`, projectID)
	if err != nil {
		return nil, db.MapErr(err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (payment.Transaction, error) { return db.ScanTx(r) })
}
