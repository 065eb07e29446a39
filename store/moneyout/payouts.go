package moneyout

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store/internal/db"
)

const batchColumns = `id, project_id, is_live, status, reference, from_address, created_by, approved_by, approved_at,
	payout_count, version, created_at, updated_at`

const payoutColumns = `id, batch_id, project_id, is_live, line, reference, status, network, chain_id, asset_definition_id,
	symbol, decimals, token_address, amount_base_units::text, from_address, to_address, tx_hash, failure_reason,
	version, created_at, updated_at, sent_at, log_index, block_number, block_hash`

// CreatePayoutBatch records a batch and its payouts, with its
// payout_batch.created event, all or nothing.
func (s Store) CreatePayoutBatch(ctx context.Context, rec payment.BatchRecord, render db.Render[payment.BatchRecord]) error {
	b := rec.Batch
	return s.h.WithTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO payout_batches (`+batchColumns+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13)`,
			b.ID, b.ProjectID, b.IsLive, b.Status, b.Reference, b.FromAddress, b.CreatedBy, b.ApprovedBy, b.ApprovedAt,
			b.Count, b.Version, b.CreatedAt, b.UpdatedAt); err != nil {
			return db.MapErr(err)
		}
		rows := make([][]any, len(rec.Payouts))
		for i, p := range rec.Payouts {
			rows[i] = []any{p.ID, p.BatchID, p.ProjectID, p.IsLive, p.Line, p.Reference, string(p.Status), p.Network, p.ChainID,
				p.AssetDefinitionID, p.Symbol, p.Decimals, p.TokenAddress, p.AmountBaseUnits, p.FromAddress, p.ToAddress,
				p.TxHash, p.FailureReason, p.Version, p.CreatedAt, p.UpdatedAt}
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"payouts"}, []string{"id", "batch_id", "project_id", "is_live", "line",
			"reference", "status", "network", "chain_id", "asset_definition_id", "symbol", "decimals", "token_address",
			"amount_base_units", "from_address", "to_address", "tx_hash", "failure_reason", "version", "created_at", "updated_at"},
			pgx.CopyFromRows(rows)); err != nil {
			return fmt.Errorf("record payouts: %w", db.MapErr(err))
		}
		return db.InsertEvent(ctx, tx, b.ProjectID, b.IsLive, payment.EventPayoutBatchCreated, b.ID, b.Version, render, rec, b.CreatedAt)
	})
}

// PayoutBatch returns a batch of the principal's project and environment
// with its payouts.
func (s Store) PayoutBatch(ctx context.Context, p payment.Principal, id string) (payment.BatchRecord, error) {
	var rec payment.BatchRecord
	err := s.h.WithTx(ctx, func(tx pgx.Tx) (err error) {
		rec.Batch, err = scanBatch(tx.QueryRow(ctx, `SELECT `+batchColumns+` FROM payout_batches
			WHERE id = $1 AND project_id = $2 AND is_live = $3`, id, p.ProjectID, p.IsLive))
		if err != nil {
			return err
		}
		rec.Payouts, err = batchPayouts(ctx, tx, id)
		return err
	})
	return rec, err
}

// ListPayoutBatches lists the principal's batches, newest first.
func (s Store) ListPayoutBatches(ctx context.Context, p payment.Principal, q payment.ListQuery) ([]payment.PayoutBatch, int, error) {
	return db.List(ctx, s.h, "payout_batches", batchColumns, db.NewFilter(p, q, "status"), q, scanBatch)
}

// GetPayout returns a payout of the principal's project and environment.
func (s Store) GetPayout(ctx context.Context, p payment.Principal, id string) (payment.Payout, error) {
	return payoutsTable.get(ctx, s.db(ctx), p, id)
}

func batchPayouts(ctx context.Context, q db.Querier, batchID string) ([]payment.Payout, error) {
	return payoutsTable.query(ctx, q, "batch payouts", `batch_id = $1 ORDER BY line`, batchID)
}

// PayoutsByTxHash returns the payouts whose recorded transaction is hash.
func (s Store) PayoutsByTxHash(ctx context.Context, hash string) ([]payment.Payout, error) {
	return payoutsTable.byTxHash(ctx, s.db(ctx), hash)
}

// PayoutByID returns a payout whatever its project: for its workflow.
func (s Store) PayoutByID(ctx context.Context, id string) (payment.Payout, error) {
	return payoutsTable.one(ctx, s.db(ctx), `id = $1`, id)
}

// PayoutsToCheck returns the payouts a reconciliation checks against the
// chain (one project's, or every project's for ""): those with a
// transaction.
func (s Store) PayoutsToCheck(ctx context.Context, projectID string) ([]payment.Payout, error) {
	return payoutsTable.toCheck(ctx, s.db(ctx), projectID)
}

// UpdatePayoutBatch changes a batch of the principal's and its payouts
// under the batch's lock: change edits them and names the event ("" for
// no change) or refuses. Every payout's status is written back.
func (s Store) UpdatePayoutBatch(ctx context.Context, p payment.Principal, id string,
	change func(*payment.PayoutBatch, []payment.Payout) (payment.EventType, error), render db.Render[payment.BatchRecord]) (payment.BatchRecord, error) {
	var rec payment.BatchRecord
	err := s.h.WithTx(ctx, func(tx pgx.Tx) (err error) {
		rec.Batch, err = scanBatch(tx.QueryRow(ctx, `SELECT `+batchColumns+` FROM payout_batches
			WHERE id = $1 AND project_id = $2 AND is_live = $3 FOR UPDATE`, id, p.ProjectID, p.IsLive))
		if err != nil {
			return err
		}
		if rec.Payouts, err = batchPayouts(ctx, tx, id); err != nil {
			return err
		}
		typ, err := change(&rec.Batch, rec.Payouts)
		if err != nil || typ == "" {
			return err
		}
		// Approval and cancellation move every payout alike; the batch's
		// event says so, not one event a payout.
		if _, err := tx.Exec(ctx, `UPDATE payouts SET status = $2, version = version + 1, updated_at = $3 WHERE batch_id = $1`,
			id, string(rec.Payouts[0].Status), rec.Batch.UpdatedAt); err != nil {
			return db.MapErr(err)
		}
		if rec.Payouts[0].Awaited() {
			// Approved: each payout's workflow starts, and waits for its
			// transaction.
			if _, err := tx.Exec(ctx, `INSERT INTO outgoing_follows (item_id, due_at)
				SELECT id, now() + make_interval(secs => $2) FROM payouts WHERE batch_id = $1
				ON CONFLICT (item_id) DO NOTHING`, id, followGrace.Seconds()); err != nil {
				return db.MapErr(err)
			}
		}
		for i := range rec.Payouts {
			rec.Payouts[i].Version++
		}
		return saveBatch(ctx, tx, &rec, typ, render)
	})
	return rec, err
}

// saveBatch writes a changed batch with its event.
func saveBatch(ctx context.Context, tx pgx.Tx, rec *payment.BatchRecord, typ payment.EventType, render db.Render[payment.BatchRecord]) error {
	b := &rec.Batch
	b.Version++
	if _, err := tx.Exec(ctx, `UPDATE payout_batches SET status = $2, approved_by = $3, approved_at = $4, version = $5,
		updated_at = $6 WHERE id = $1`, b.ID, b.Status, b.ApprovedBy, b.ApprovedAt, b.Version, b.UpdatedAt); err != nil {
		return db.MapErr(err)
	}
	return db.InsertEvent(ctx, tx, b.ProjectID, b.IsLive, typ, b.ID, b.Version, render, *rec, b.UpdatedAt)
}

// UpdatePayout changes a payout (of the principal's project and
// environment; any project's when p is nil, for its chainwatch) under
// its batch's lock and its own: change edits it and names the event (""
// for no change) or refuses. The change that leaves every payout of the
// batch done completes the batch, with its event.
func (s Store) UpdatePayout(ctx context.Context, p *payment.Principal, id string, change func(*payment.Payout) (payment.EventType, error),
	render db.Render[payment.Payout], renderBatch db.Render[payment.BatchRecord]) (payment.Payout, error) {
	var po payment.Payout
	err := s.h.WithTx(ctx, func(tx pgx.Tx) (err error) {
		var batchID string
		where, args := itemOf(p, id)
		if err = tx.QueryRow(ctx, `SELECT batch_id FROM payouts WHERE `+where, args...).Scan(&batchID); err != nil {
			return db.MapErr(err)
		}
		// The batch first, as UpdatePayoutBatch takes it.
		rec := payment.BatchRecord{}
		if rec.Batch, err = scanBatch(tx.QueryRow(ctx, `SELECT `+batchColumns+` FROM payout_batches WHERE id = $1 FOR UPDATE`, batchID)); err != nil {
			return err
		}
		if po, err = payoutsTable.one(ctx, tx, `id = $1 FOR UPDATE`, id); err != nil {
			return err
		}
		typ, err := change(&po)
		if err != nil || typ == "" {
			return err
		}
		po.Version++
		if _, err := tx.Exec(ctx, `UPDATE payouts SET status = $2, tx_hash = $3, failure_reason = $4, version = $5, updated_at = $6,
			sent_at = $7, log_index = $8, block_number = $9, block_hash = $10 WHERE id = $1`, po.ID, string(po.Status), po.TxHash,
			po.FailureReason, po.Version, po.UpdatedAt, po.SentAt, po.LogIndex, po.BlockNumber, po.BlockHash); err != nil {
			return db.MapErr(err)
		}
		if err := trackOutgoing(ctx, tx, po.ID, po.Outgoing, typ == payment.EventPayoutSent); err != nil {
			return err
		}
		if err := db.InsertEvent(ctx, tx, po.ProjectID, po.IsLive, typ, po.ID, po.Version, render, po, po.UpdatedAt); err != nil {
			return err
		}
		if !po.Done() {
			return nil
		}
		if rec.Payouts, err = batchPayouts(ctx, tx, batchID); err != nil {
			return err
		}
		if !rec.Batch.Complete(rec.Payouts, po.UpdatedAt) {
			return nil
		}
		return saveBatch(ctx, tx, &rec, payment.EventPayoutBatchCompleted, renderBatch)
	})
	return po, err
}

func scanBatch(row pgx.Row) (payment.PayoutBatch, error) {
	var b payment.PayoutBatch
	err := row.Scan(&b.ID, &b.ProjectID, &b.IsLive, &b.Status, &b.Reference, &b.FromAddress, &b.CreatedBy, &b.ApprovedBy,
		&b.ApprovedAt, &b.Count, &b.Version, &b.CreatedAt, &b.UpdatedAt)
	if err != nil {
		return b, db.MapErr(err)
	}
	b.CreatedAt, b.UpdatedAt = b.CreatedAt.UTC(), b.UpdatedAt.UTC()
	if b.ApprovedAt != nil {
		t := b.ApprovedAt.UTC()
		b.ApprovedAt = &t
	}
	return b, nil
}

func scanPayout(row pgx.Row) (payment.Payout, error) {
	var p payment.Payout
	err := row.Scan(&p.ID, &p.BatchID, &p.ProjectID, &p.IsLive, &p.Line, &p.Reference, &p.Status, &p.Network, &p.ChainID,
		&p.AssetDefinitionID, &p.Symbol, &p.Decimals, &p.TokenAddress, &p.AmountBaseUnits, &p.FromAddress, &p.ToAddress,
		&p.TxHash, &p.FailureReason, &p.Version, &p.CreatedAt, &p.UpdatedAt, &p.SentAt, &p.LogIndex, &p.BlockNumber, &p.BlockHash)
	if err != nil {
		return p, db.MapErr(err)
	}
	p.CreatedAt, p.UpdatedAt, p.SentAt = p.CreatedAt.UTC(), p.UpdatedAt.UTC(), db.UTCPtr(p.SentAt)
	return p, nil
}
