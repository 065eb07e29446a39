package store

import (
	"context"
	"encoding/json"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/payment"
)

const txColumns = `id, project_id, checkout_session_id, payment_plan_id, is_live, status, network, chain_id,
	tx_hash, log_index, from_address, to_address, asset_definition_id, symbol, amount, amount_base_units::text,
	amount_usd::text, block_number, block_hash, confirmations, required_confirmations, failure_reason,
	status_history, created_at, updated_at, confirmed_at, finalized_at, failed_at, version, unexpected`

// InsertTransaction records a transaction; one that is already recorded
// (same chain, hash and log index) is left as it is.
func (s *Store) InsertTransaction(ctx context.Context, t payment.Transaction) error {
	history, _ := json.Marshal(t.StatusHistory)
	_, err := s.pool.Exec(ctx, `INSERT INTO transactions (`+txColumnsInsert+`)
		VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22,$23,$24,$25,$26,$27,$28,$29)
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
func (s *Store) GetTransaction(ctx context.Context, p payment.Principal, id string) (payment.Transaction, error) {
	return scanTx(s.pool.QueryRow(ctx, `SELECT `+txColumns+` FROM transactions
		WHERE id = $1 AND project_id = $2 AND is_live = $3`, id, p.ProjectID, p.IsLive))
}

// ListTransactions lists the principal's transactions, newest first.
func (s *Store) ListTransactions(ctx context.Context, p payment.Principal, q payment.ListQuery) ([]payment.Transaction, int, error) {
	return list(ctx, s, "transactions", txColumns, newFilter(p, q, "status"), q, scanTx)
}

// SessionTransactions returns a session's transactions, oldest first (a
// transaction's transfers in the order of their logs).
func (s *Store) SessionTransactions(ctx context.Context, sessionID string) ([]payment.Transaction, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+txColumns+` FROM transactions WHERE checkout_session_id = $1
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
		&t.Unexpected)
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
func (s *Store) RecordTransaction(ctx context.Context, t payment.Transaction, render Render[payment.Transaction]) (payment.Transaction, error) {
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
