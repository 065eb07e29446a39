package moneyout

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store/checkout"
	"github.com/paymentsd/paymentsd/store/internal/db"
)

const refundColumns = `id, project_id, is_live, checkout_session_id, status, network, chain_id, asset_definition_id,
	symbol, decimals, token_address, amount_base_units::text, amount_usd::text, rate_usd::text, reason,
	from_address, to_address, address_source, claim_token_hash, tx_hash, failure_reason, version, created_at, updated_at, sent_at, log_index,
	approved_by, approved_at, block_number, block_hash`

// CreateRefund records a refund of a session of the principal, built by
// build from the session, its transfers and its refunds so far, with its
// refund.created event. The session's row is locked while build runs, so
// two refunds of one session are built one after the other: the second
// sees the first, and cannot take what remains twice.
func (s Store) CreateRefund(ctx context.Context, p payment.Principal, sessionID string,
	build func(payment.Session, []payment.Transaction, []payment.Refund) (payment.Refund, error), render db.Render[payment.Refund]) (payment.Refund, error) {
	var r payment.Refund
	err := s.h.WithTx(ctx, func(tx pgx.Tx) error {
		cs, err := checkout.ScanSession(tx.QueryRow(ctx, `SELECT `+checkout.SessionColumns+` FROM checkout_sessions
			WHERE id = $1 AND project_id = $2 AND is_live = $3 FOR UPDATE`, sessionID, p.ProjectID, p.IsLive))
		if err != nil {
			return err
		}
		txs, err := db.SessionTransactions(ctx, tx, sessionID)
		if err != nil {
			return fmt.Errorf("session transactions: %w", err)
		}
		refunds, err := sessionRefunds(ctx, tx, sessionID)
		if err != nil {
			return err
		}
		if r, err = build(cs, txs, refunds); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO refunds (id, project_id, is_live, checkout_session_id, status, network, chain_id,
			asset_definition_id, symbol, decimals, token_address, amount_base_units, amount_usd, rate_usd, reason,
			from_address, to_address, address_source, claim_token_hash, tx_hash, failure_reason, version, created_at, updated_at,
			approved_by, approved_at)
			VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22,$23,$24,$25,$26)`,
			r.ID, r.ProjectID, r.IsLive, r.CheckoutSessionID, r.Status, r.Network, r.ChainID, r.AssetDefinitionID,
			r.Symbol, r.Decimals, r.TokenAddress, r.AmountBaseUnits, db.DecString(r.AmountUSD), db.DecString(r.RateUSD), r.Reason,
			r.FromAddress, r.ToAddress, r.AddressSource, r.ClaimTokenHash, r.TxHash, r.FailureReason, r.Version, r.CreatedAt, r.UpdatedAt,
			r.ApprovedBy, r.ApprovedAt)
		if err != nil {
			return db.MapErr(err)
		}
		return db.InsertEvent(ctx, tx, r.ProjectID, r.IsLive, payment.EventRefundCreated, r.ID, r.Version, render, r, r.CreatedAt)
	})
	return r, err
}

// SessionRefunds returns a session's refunds, oldest first.
func (s Store) SessionRefunds(ctx context.Context, sessionID string) ([]payment.Refund, error) {
	return sessionRefunds(ctx, s.db(ctx), sessionID)
}

func sessionRefunds(ctx context.Context, q db.Querier, sessionID string) ([]payment.Refund, error) {
	return refundsTable.query(ctx, q, "session refunds", `checkout_session_id = $1 ORDER BY created_at, id`, sessionID)
}

// GetRefund returns a refund of the principal's project and environment.
func (s Store) GetRefund(ctx context.Context, p payment.Principal, id string) (payment.Refund, error) {
	return refundsTable.get(ctx, s.db(ctx), p, id)
}

// EachRefund calls fn with each of the principal's refunds the query and
// sessionID (when set) keep, newest first, as the database streams them:
// the CSV export.
func (s Store) EachRefund(ctx context.Context, p payment.Principal, q payment.ListQuery, sessionID string, fn func(payment.Refund) error) error {
	return db.Each(ctx, s.h.Pool, "refunds", "refunds", refundColumns, refundFilter(p, q, sessionID), scanRefund, fn)
}

// RefundByID returns a refund whatever its project: for its workflow.
func (s Store) RefundByID(ctx context.Context, id string) (payment.Refund, error) {
	return refundsTable.one(ctx, s.db(ctx), `id = $1`, id)
}

// RefundsByTxHash returns the refunds whose recorded transaction is hash.
func (s Store) RefundsByTxHash(ctx context.Context, hash string) ([]payment.Refund, error) {
	return refundsTable.byTxHash(ctx, s.db(ctx), hash)
}

// RefundsToCheck returns the refunds a reconciliation checks against the
// chain and the books (one project's, or every project's for ""): those
// with a transaction, and every refund of their sessions is then read.
func (s Store) RefundsToCheck(ctx context.Context, projectID string) ([]payment.Refund, error) {
	return refundsTable.toCheck(ctx, s.db(ctx), projectID)
}

// RefundedSessions returns the IDs of the sessions (one project's, or
// every project's for "") with a refund that holds.
func (s Store) RefundedSessions(ctx context.Context, projectID string) ([]string, error) {
	rows, err := s.db(ctx).Query(ctx, `SELECT DISTINCT checkout_session_id FROM refunds
		WHERE ($1 = '' OR project_id = $1) AND status NOT IN ('failed', 'canceled') ORDER BY 1`, projectID)
	if err != nil {
		return nil, fmt.Errorf("refunded sessions: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// RefundByClaimHash returns the refund whose claim token hashes to hash,
// whatever its project: for the customer's claim link.
func (s Store) RefundByClaimHash(ctx context.Context, hash string) (payment.Refund, error) {
	return refundsTable.one(ctx, s.db(ctx), `claim_token_hash = $1`, hash)
}

// ListRefunds lists the principal's refunds, newest first; sessionID,
// when set, keeps one session's.
func (s Store) ListRefunds(ctx context.Context, p payment.Principal, q payment.ListQuery, sessionID string) ([]payment.Refund, int, error) {
	f := refundFilter(p, q, sessionID)
	return db.List(ctx, s.h, "refunds", refundColumns, f, q, scanRefund)
}

// UpdateRefund changes the refund with the given ID (of the principal's
// project and environment; any project's when p is nil, for the claim
// link, whose token found it) under its row's lock: change edits it and
// names the event the change records ("" when it changed nothing), or
// refuses it.
func (s Store) UpdateRefund(ctx context.Context, p *payment.Principal, id string,
	change func(*payment.Refund) (payment.EventType, error), render db.Render[payment.Refund]) (payment.Refund, error) {
	var r payment.Refund
	err := s.h.WithTx(ctx, func(tx pgx.Tx) (err error) {
		where, args := itemOf(p, id)
		if r, err = refundsTable.one(ctx, tx, where+` FOR UPDATE`, args...); err != nil {
			return err
		}
		typ, err := change(&r)
		if err != nil || typ == "" {
			return err // refused, or nothing changed
		}
		r.Version++
		if _, err := tx.Exec(ctx, `UPDATE refunds SET status = $2, to_address = $3, address_source = $4, tx_hash = $5,
			failure_reason = $6, version = $7, updated_at = $8, sent_at = $9, log_index = $10, approved_by = $11, approved_at = $12,
			block_number = $13, block_hash = $14 WHERE id = $1`,
			r.ID, r.Status, r.ToAddress, r.AddressSource, r.TxHash, r.FailureReason, r.Version, r.UpdatedAt, r.SentAt, r.LogIndex,
			r.ApprovedBy, r.ApprovedAt, r.BlockNumber, r.BlockHash); err != nil {
			return db.MapErr(err)
		}
		follow := typ == payment.EventRefundSent || typ == payment.EventRefundApproved ||
			typ == payment.EventRefundAddressProvided && r.Status == payment.RefundAwaitingSignature // the customer's, through the claim link
		if err := trackOutgoing(ctx, tx, r.ID, r.Outgoing, follow); err != nil {
			return err
		}
		return db.InsertEvent(ctx, tx, r.ProjectID, r.IsLive, typ, r.ID, r.Version, render, r, r.UpdatedAt)
	})
	return r, err
}

// refundFilter keeps the principal's refunds the query keeps, of one
// session when sessionID is set.
func refundFilter(p payment.Principal, q payment.ListQuery, sessionID string) *db.Filter {
	f := db.NewFilter(p, q, "status")
	if sessionID != "" {
		f.Add("checkout_session_id = ?", sessionID)
	}
	return f
}

func scanRefund(row pgx.Row) (payment.Refund, error) {
	var r payment.Refund
	var usd, rate *string
	err := row.Scan(&r.ID, &r.ProjectID, &r.IsLive, &r.CheckoutSessionID, &r.Status, &r.Network, &r.ChainID, &r.AssetDefinitionID,
		&r.Symbol, &r.Decimals, &r.TokenAddress, &r.AmountBaseUnits, &usd, &rate, &r.Reason,
		&r.FromAddress, &r.ToAddress, &r.AddressSource, &r.ClaimTokenHash, &r.TxHash, &r.FailureReason, &r.Version, &r.CreatedAt, &r.UpdatedAt,
		&r.SentAt, &r.LogIndex, &r.ApprovedBy, &r.ApprovedAt, &r.BlockNumber, &r.BlockHash)
	if err != nil {
		return r, db.MapErr(err)
	}
	r.AmountUSD, r.RateUSD = db.OptDecimal(usd), db.OptDecimal(rate)
	r.CreatedAt, r.UpdatedAt, r.SentAt, r.ApprovedAt = r.CreatedAt.UTC(), r.UpdatedAt.UTC(), db.UTCPtr(r.SentAt), db.UTCPtr(r.ApprovedAt)
	return r, nil
}
