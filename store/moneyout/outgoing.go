package moneyout

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store/chains"
	"github.com/paymentsd/paymentsd/store/internal/db"
)

// ErrTransferTaken is an outgoing item's transfer that another item
// counts already (a race between two looks): the change is not made, and
// the next look sees the transfer taken.
var ErrTransferTaken = errors.New("the transfer counts for another outgoing item already")

// followGrace is how long an item's new follow is left to the process
// that made the change before a sweep starts its workflow.
const followGrace = 2 * time.Second

// trackOutgoing keeps, with an outgoing item's change, the transfer it
// counts (one item a transfer, whichever project's) and, when it has just
// been approved (its address given through the claim link, an owner's
// approval) or sent (follow), the pending start of the workflow that
// follows it, or the signal that wakes it.
func trackOutgoing(ctx context.Context, tx pgx.Tx, id string, o payment.Outgoing, follow bool) error {
	if o.LogIndex == nil || o.TxHash == "" {
		if _, err := tx.Exec(ctx, `DELETE FROM outgoing_transfers WHERE item_id = $1`, id); err != nil {
			return db.MapErr(err)
		}
	} else {
		if _, err := tx.Exec(ctx, `DELETE FROM outgoing_transfers WHERE item_id = $1 AND (chain_id, tx_hash, log_index) <> ($2, $3, $4)`,
			id, o.ChainID, o.TxHash, *o.LogIndex); err != nil {
			return db.MapErr(err)
		}
		var owner string
		err := tx.QueryRow(ctx, `WITH ins AS (INSERT INTO outgoing_transfers (chain_id, tx_hash, log_index, item_id)
				VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING item_id)
			SELECT item_id FROM ins UNION ALL
			SELECT item_id FROM outgoing_transfers WHERE chain_id = $1 AND tx_hash = $2 AND log_index = $3`,
			o.ChainID, o.TxHash, *o.LogIndex, id).Scan(&owner)
		if err != nil {
			return fmt.Errorf("count the transfer of %s: %w", id, db.MapErr(err))
		}
		if owner != id {
			return fmt.Errorf("%s: %w (%s)", id, ErrTransferTaken, owner)
		}
	}
	if !follow || o.Status != payment.RefundSent && !o.Awaited() {
		return nil
	}
	_, err := tx.Exec(ctx, `INSERT INTO outgoing_follows (item_id, due_at) VALUES ($1, now() + make_interval(secs => $2))
		ON CONFLICT (item_id) DO UPDATE SET due_at = least(outgoing_follows.due_at, excluded.due_at)`, id, followGrace.Seconds())
	return db.MapErr(err)
}

// TakenTransfers names, by log index, the transfers of a transaction that
// count already for an outgoing item other than except, or for an
// incoming payment (a transaction's record; a payer's claim, which names
// no transfer yet, is none).
func (s Store) TakenTransfers(ctx context.Context, chainID int64, hash, except string) (map[int]string, error) {
	rows, err := s.db(ctx).Query(ctx, `SELECT log_index, item_id FROM outgoing_transfers
			WHERE chain_id = $1 AND tx_hash = $2 AND item_id <> $3
		UNION ALL SELECT log_index, id FROM transactions WHERE chain_id = $1 AND tx_hash = $2 AND log_index <> $4`,
		chainID, strings.ToLower(hash), except, payment.LogIndexClaim)
	if err != nil {
		return nil, fmt.Errorf("taken transfers: %w", err)
	}
	taken := map[int]string{}
	var i int
	var by string
	_, err = pgx.ForEachRow(rows, []any{&i, &by}, func() error {
		if taken[i] == "" {
			taken[i] = by
		}
		return nil
	})
	return taken, err
}

// AwaitingOutgoingTo returns the refunds and payouts of a network that pay
// one of addrs and wait for their signature, or are sent and not mined
// (sent, stale: a replacement may pay them), those waiting first, oldest
// first: those a scan's recipients may have paid unreported. It reads by
// destination, so a scan's cost does not grow with the items open.
func (s Store) AwaitingOutgoingTo(ctx context.Context, network string, addrs []string) ([]payment.Refund, []payment.Payout, error) {
	if len(addrs) == 0 {
		return nil, nil, nil
	}
	lower := make([]string, len(addrs))
	for i, a := range addrs {
		lower[i] = strings.ToLower(a)
	}
	lower, err := chains.New(s.h).MayBeDestinations(ctx, lower)
	if err != nil || len(lower) == 0 {
		return nil, nil, err
	}
	const where = `network = $1 AND status IN ('awaiting_signature', 'sent', 'stale') AND lower(to_address) = ANY($2)
		ORDER BY status <> 'awaiting_signature', created_at, id`
	q := s.db(ctx)
	refunds, err := refundsTable.query(ctx, q, "awaiting refunds", where, network, lower)
	if err != nil {
		return nil, nil, err
	}
	payouts, err := payoutsTable.query(ctx, q, "awaiting payouts", where, network, lower)
	return refunds, payouts, err
}

// OutgoingInFlight counts a project's refunds and payouts in one
// environment whose transaction is sent and not mined yet (sent or stale).
func (s Store) OutgoingInFlight(ctx context.Context, projectID string, isLive bool) (int, error) {
	var n int
	err := s.db(ctx).QueryRow(ctx, `SELECT
		(SELECT count(*) FROM refunds WHERE project_id = $1 AND is_live = $2 AND status IN ('sent', 'stale')) +
		(SELECT count(*) FROM payouts WHERE project_id = $1 AND is_live = $2 AND status IN ('sent', 'stale'))`,
		projectID, isLive).Scan(&n)
	return n, db.MapErr(err)
}

// ProvenAddresses returns a project's verified recipients in one
// environment: the addresses it proved it controls.
func (s Store) ProvenAddresses(ctx context.Context, projectID string, isLive bool) ([]string, error) {
	rows, err := s.db(ctx).Query(ctx, `SELECT address FROM recipients
		WHERE project_id = $1 AND is_live = $2 AND verified_at IS NOT NULL ORDER BY address`, projectID, isLive)
	if err != nil {
		return nil, fmt.Errorf("proven addresses: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// ClaimOutgoingFollows takes up to limit due follows for a sweep: each is
// not due again before lease has passed, so that concurrent sweeps take
// different rows and a sweeper that dies lets its rows go.
func (s Store) ClaimOutgoingFollows(ctx context.Context, limit int, lease time.Duration) ([]string, error) {
	rows, err := s.h.Pool.Query(ctx, `UPDATE outgoing_follows SET due_at = now() + make_interval(secs => $2), attempts = attempts + 1
		WHERE item_id IN (SELECT item_id FROM outgoing_follows WHERE due_at <= now()
			ORDER BY due_at LIMIT $1 FOR UPDATE SKIP LOCKED)
		RETURNING item_id`, limit, lease.Seconds())
	if err != nil {
		return nil, db.MapErr(err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// WakeOutgoing makes an item's follow due now, so that the sweep wakes
// its workflow (SignalOutgoingChanged), which then looks at the chain at
// once.
func (s Store) WakeOutgoing(ctx context.Context, id string) error {
	_, err := s.h.Pool.Exec(ctx, `INSERT INTO outgoing_follows (item_id, due_at) VALUES ($1, now())
		ON CONFLICT (item_id) DO UPDATE SET due_at = least(outgoing_follows.due_at, excluded.due_at)`, id)
	return db.MapErr(err)
}

// FollowStarted deletes an item's pending follow: its workflow runs.
func (s Store) FollowStarted(ctx context.Context, id string) error {
	_, err := s.h.Pool.Exec(ctx, `DELETE FROM outgoing_follows WHERE item_id = $1`, id)
	return db.MapErr(err)
}

// Kinds of address that receive payments (ReceivingAddresses).
const (
	ReceivesDeposit   = "deposit"
	ReceivesRecipient = "recipient"
)

// ReceivingAddresses says which of addrs receive payments the engine
// counts, whatever the project or environment: a checkout session's
// deposit address, or a verified recipient. Keyed by the lowercase
// address.
func (s Store) ReceivingAddresses(ctx context.Context, addrs []string) (map[string]string, error) {
	lower := make([]string, len(addrs))
	for i, a := range addrs {
		lower[i] = strings.ToLower(a)
	}
	rows, err := s.db(ctx).Query(ctx, `SELECT lower(deposit_address), 'deposit' FROM checkout_sessions
			WHERE deposit_address <> '' AND lower(deposit_address) = ANY($1)
		UNION ALL SELECT address, 'deposit' FROM bitcoin_deposit_addresses WHERE address = ANY($1)
		UNION ALL SELECT address, 'recipient' FROM recipients WHERE verified_at IS NOT NULL AND address = ANY($1)`, lower)
	if err != nil {
		return nil, fmt.Errorf("receiving addresses: %w", err)
	}
	out := map[string]string{}
	var a, kind string
	_, err = pgx.ForEachRow(rows, []any{&a, &kind}, func() error {
		if out[a] == "" {
			out[a] = kind
		}
		return nil
	})
	return out, err
}
