package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/payment"
)

const txColumns = `id, project_id, coalesce(checkout_session_id, ''), coalesce(payment_plan_id, ''), is_live, status, network, chain_id,
	tx_hash, log_index, from_address, to_address, asset_definition_id, symbol, amount, amount_base_units::text,
	amount_usd::text, block_number, block_hash, confirmations, required_confirmations, failure_reason,
	status_history, created_at, updated_at, confirmed_at, finalized_at, failed_at, version, unexpected,
	coalesce(assigned_session_id, '')`

// InsertTransaction records a transaction; one that is already recorded
// (same chain, hash and log index) is left as it is.
func (s Payments) InsertTransaction(ctx context.Context, t payment.Transaction) error {
	history, _ := json.Marshal(t.StatusHistory)
	_, err := s.pool.Exec(ctx, `INSERT INTO transactions (`+txColumnsInsert+`)
		VALUES ($1,$2,nullif($3, ''),nullif($4, ''),$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22,$23,$24,$25,$26,$27,$28,$29)
		ON CONFLICT (chain_id, tx_hash, log_index) DO NOTHING`,
		t.ID, t.ProjectID, t.CheckoutSessionID, t.PaymentPlanID, t.IsLive, t.Status, t.Network, t.ChainID,
		t.TxHash, logIndexValue(t.LogIndex), t.FromAddress, t.ToAddress, t.AssetDefinitionID, t.Symbol, t.Amount, t.AmountBaseUnits,
		t.AmountUSD.String(), t.BlockNumber, t.BlockHash, t.Confirmations, t.RequiredConfirmations, t.FailureReason,
		history, t.CreatedAt, t.UpdatedAt, t.ConfirmedAt, t.FinalizedAt, t.FailedAt, t.Unexpected)
	return mapErr(err)
}

const txColumnsInsert = `id, project_id, checkout_session_id, payment_plan_id, is_live, status, network, chain_id,
	tx_hash, log_index, from_address, to_address, asset_definition_id, symbol, amount, amount_base_units,
	amount_usd, block_number, block_hash, confirmations, required_confirmations, failure_reason,
	status_history, created_at, updated_at, confirmed_at, finalized_at, failed_at, unexpected`

// GetTransaction returns a transaction of the principal's project and environment.
func (s Payments) GetTransaction(ctx context.Context, p payment.Principal, id string) (payment.Transaction, error) {
	return scanTx(s.pool.QueryRow(ctx, `SELECT `+txColumns+` FROM transactions
		WHERE id = $1 AND project_id = $2 AND is_live = $3`, id, p.ProjectID, p.IsLive))
}

// ListTransactions lists the principal's transactions, newest first.
func (s Payments) ListTransactions(ctx context.Context, p payment.Principal, q payment.ListQuery) ([]payment.Transaction, int, error) {
	return list(ctx, s.Store, "transactions", txColumns, txFilter(p, q), q, scanTx)
}

// unassignedSQL keeps the unexpected transfers not assigned to a session.
const unassignedSQL = "unexpected AND assigned_session_id IS NULL"

// txFilter is a transactions list's filter: the list's, and with
// q.Flagged the unassigned unexpected transfers only.
func txFilter(p payment.Principal, q payment.ListQuery) *filter {
	f := newFilter(p, q, "status")
	if q.Flagged {
		f.where = append(f.where, unassignedSQL)
	}
	return f
}

// SessionTransactions returns a session's transactions, oldest first (a
// transaction's transfers in the order of their logs), with the unexpected
// transfers assigned to it.
func (s Payments) SessionTransactions(ctx context.Context, sessionID string) ([]payment.Transaction, error) {
	return sessionTransactions(ctx, s.pool, sessionID)
}

func sessionTransactions(ctx context.Context, q querier, sessionID string) ([]payment.Transaction, error) {
	rows, err := q.Query(ctx, `SELECT `+txColumns+` FROM transactions WHERE checkout_session_id = $1 OR assigned_session_id = $1
		ORDER BY created_at, log_index, id`, sessionID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (payment.Transaction, error) { return scanTx(r) })
}

func scanTx(row pgx.Row) (payment.Transaction, error) {
	var t payment.Transaction
	var usd string
	var history []byte
	var logIndex *int
	err := row.Scan(&t.ID, &t.ProjectID, &t.CheckoutSessionID, &t.PaymentPlanID, &t.IsLive, &t.Status, &t.Network,
		&t.ChainID, &t.TxHash, &logIndex, &t.FromAddress, &t.ToAddress, &t.AssetDefinitionID, &t.Symbol, &t.Amount,
		&t.AmountBaseUnits, &usd, &t.BlockNumber, &t.BlockHash, &t.Confirmations, &t.RequiredConfirmations,
		&t.FailureReason, &history, &t.CreatedAt, &t.UpdatedAt, &t.ConfirmedAt, &t.FinalizedAt, &t.FailedAt, &t.Version,
		&t.Unexpected, &t.AssignedSessionID)
	if err != nil {
		return t, mapErr(err)
	}
	t.AmountUSD = mustDecimal(usd)
	t.LogIndex = payment.LogIndexClaim
	if logIndex != nil {
		t.LogIndex = *logIndex
	}
	if t.StatusHistory, err = decodeHistory(history); err != nil {
		return t, err
	}
	t.CreatedAt, t.UpdatedAt = t.CreatedAt.UTC(), t.UpdatedAt.UTC()
	t.ConfirmedAt, t.FinalizedAt, t.FailedAt = utcPtr(t.ConfirmedAt), utcPtr(t.FinalizedAt), utcPtr(t.FailedAt)
	return t, nil
}

// RecordTransaction records a newly seen transaction with its first event,
// or, if the chain, hash and log index are recorded already, returns the
// stored one unchanged: the activity that calls it can be retried.
func (s Payments) RecordTransaction(ctx context.Context, t payment.Transaction, render Render[payment.Transaction]) (payment.Transaction, error) {
	var stored payment.Transaction
	err := s.WithTx(ctx, func(tx pgx.Tx) error {
		history, _ := json.Marshal(t.StatusHistory)
		tag, err := tx.Exec(ctx, `INSERT INTO transactions (`+txColumnsInsert+`, version)
			VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22,$23,$24,$25,$26,$27,$28,$29,1)
			ON CONFLICT (chain_id, tx_hash, log_index) DO NOTHING`,
			t.ID, t.ProjectID, t.CheckoutSessionID, t.PaymentPlanID, t.IsLive, t.Status, t.Network, t.ChainID,
			t.TxHash, logIndexValue(t.LogIndex), t.FromAddress, t.ToAddress, t.AssetDefinitionID, t.Symbol, t.Amount, t.AmountBaseUnits,
			t.AmountUSD.String(), t.BlockNumber, t.BlockHash, t.Confirmations, t.RequiredConfirmations, t.FailureReason,
			history, t.CreatedAt, t.UpdatedAt, t.ConfirmedAt, t.FinalizedAt, t.FailedAt, t.Unexpected)
		if err != nil {
			return mapErr(err)
		}
		stored, err = scanTx(tx.QueryRow(ctx, `SELECT `+txColumns+` FROM transactions
			WHERE chain_id = $1 AND tx_hash = $2 AND log_index = $3`, t.ChainID, t.TxHash, t.LogIndex))
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		return insertEvent(ctx, tx, t.ProjectID, t.IsLive, payment.TransactionEvent("", t.Status), t.ID, 1, render, stored, t.CreatedAt)
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

// querier is a pool or a database transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// AssignTransaction assigns an unexpected transfer to a session
// (payment.Transaction.Assign) and records its event. settle, when not
// nil, is the session's change once it counts the transfer: it gets the
// session and its transactions, assigned ones included, and returns the
// session's events (for a session whose workflow has ended; a running one
// records its own progress). Both are one database transaction. It returns
// the transaction as recorded; assigning it again to the same session
// changes nothing.
func (s Payments) AssignTransaction(ctx context.Context, txID, sessionID string, at time.Time, renderTx Render[payment.Transaction],
	settle func(*payment.Session, []payment.Transaction) []payment.EventType, renderSession Render[payment.Session]) (payment.Transaction, error) {
	var t payment.Transaction
	err := s.WithTx(ctx, func(tx pgx.Tx) error {
		var err error
		if t, err = scanTx(tx.QueryRow(ctx, `SELECT `+txColumns+` FROM transactions WHERE id = $1 FOR UPDATE`, txID)); err != nil {
			return err
		}
		cs, err := scanSession(tx.QueryRow(ctx, `SELECT `+sessionColumns+` FROM checkout_sessions WHERE id = $1 FOR UPDATE`, sessionID))
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
				return mapErr(err)
			}
			base := t.Version
			for i, typ := range events {
				t.Version = base + i + 1
				if err := insertEvent(ctx, tx, t.ProjectID, t.IsLive, typ, t.ID, t.Version, renderTx, t, at); err != nil {
					return err
				}
			}
		}
		if settle == nil {
			return nil
		}
		txs, err := sessionTransactions(ctx, tx, sessionID)
		if err != nil {
			return mapErr(err)
		}
		return updateSession(ctx, tx, cs, at, func(s *payment.Session) []payment.EventType { return settle(s, txs) }, renderSession)
	})
	return t, err
}

// UnfinishedTransactions returns the transactions not final yet (pending
// or confirmed), whose workflows must be running; of one project when
// projectID is set.
func (s Payments) UnfinishedTransactions(ctx context.Context, projectID string) ([]payment.Transaction, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+txColumns+` FROM transactions
		WHERE status IN ('pending', 'confirmed') AND ($1 = '' OR project_id = $1) ORDER BY created_at, id`, projectID)
	if err != nil {
		return nil, mapErr(err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (payment.Transaction, error) { return scanTx(r) })
}
