package db

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/payment"
)

const TxColumns = `id, project_id, coalesce(checkout_session_id, ''), coalesce(payment_plan_id, ''), is_live, status, network, chain_id,
	tx_hash, log_index, from_address, to_address, asset_definition_id, symbol, amount, amount_base_units::text,
	amount_usd::text, block_number, block_hash, confirmations, required_confirmations, failure_reason,
	status_history, created_at, updated_at, confirmed_at, finalized_at, failed_at, version, unexpected,
	coalesce(assigned_session_id, '')`

func SessionTransactions(ctx context.Context, q RowsQuerier, sessionID string) ([]payment.Transaction, error) {
	rows, err := q.Query(ctx, `SELECT `+TxColumns+` FROM transactions WHERE checkout_session_id = $1 OR assigned_session_id = $1
		ORDER BY created_at, log_index, id`, sessionID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (payment.Transaction, error) { return ScanTx(r) })
}

func ScanTx(row pgx.Row) (payment.Transaction, error) {
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
		return t, MapErr(err)
	}
	t.AmountUSD = MustDecimal(usd)
	t.LogIndex = payment.LogIndexClaim
	if logIndex != nil {
		t.LogIndex = *logIndex
	}
	if t.StatusHistory, err = decodeHistory(history); err != nil {
		return t, err
	}
	t.CreatedAt, t.UpdatedAt = t.CreatedAt.UTC(), t.UpdatedAt.UTC()
	t.ConfirmedAt, t.FinalizedAt, t.FailedAt = UTCPtr(t.ConfirmedAt), UTCPtr(t.FinalizedAt), UTCPtr(t.FailedAt)
	return t, nil
}

// RowsQuerier is a pool or a database transaction.
type RowsQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}
