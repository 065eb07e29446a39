package chains

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/store/internal/db"
)

// ScannedBlocks are the blocks one network's chainwatch has read: its poller's
// chainwatch.BlockStore, durable across restarts.
type ScannedBlocks struct {
	store   *db.Handle
	network string
}

var _ chainwatch.BlockStore = (*ScannedBlocks)(nil)

// ScannedBlocks returns the scanned blocks of a network.
func (s Store) ScannedBlocks(network string) *ScannedBlocks {
	return &ScannedBlocks{store: s.h, network: network}
}

// Kept returns the kept blocks, newest first.
func (b *ScannedBlocks) Kept(ctx context.Context) ([]chainwatch.Block, error) {
	rows, err := b.store.Pool.Query(ctx, `SELECT number, hash, parent FROM scanned_blocks WHERE network = $1
		ORDER BY number DESC`, b.network)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (chainwatch.Block, error) {
		var number int64
		var hash, parent string
		if err := row.Scan(&number, &hash, &parent); err != nil {
			return chainwatch.Block{}, err
		}
		if number < 0 {
			return chainwatch.Block{}, fmt.Errorf("scanned block number %d", number)
		}
		return chainwatch.Block{Number: uint64(number), Hash: common.HexToHash(hash), Parent: common.HexToHash(parent)}, nil
	})
}

// SaveBlocks records scanned blocks and forgets, in one transaction, every
// kept block at or above the first one's number that is not among them (a
// rewind) and every one below oldest.
func (b *ScannedBlocks) SaveBlocks(ctx context.Context, blocks []chainwatch.Block, oldest uint64) error {
	if len(blocks) == 0 {
		return nil
	}
	now := time.Now() // scanned_at is for people reading the table
	return b.store.WithTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM scanned_blocks WHERE network = $1 AND number >= $2`,
			b.network, int64(blocks[0].Number)); err != nil {
			return err
		}
		for _, k := range blocks {
			if _, err := tx.Exec(ctx, `INSERT INTO scanned_blocks (network, number, hash, parent, scanned_at)
				VALUES ($1,$2,$3,$4,$5)`, b.network, int64(k.Number), k.Hash.Hex(), k.Parent.Hex(), now); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, `DELETE FROM scanned_blocks WHERE network = $1 AND number < $2`, b.network, int64(oldest))
		return err
	})
}

// Reset forgets every kept block of the network (the chain was replaced,
// or reorged deeper than the kept window).
func (b *ScannedBlocks) Reset(ctx context.Context) error {
	_, err := b.store.Pool.Exec(ctx, `DELETE FROM scanned_blocks WHERE network = $1`, b.network)
	return err
}

// RecordScanProgress records that a network's transfers up to a block
// (mined at blockTime) have been reported to their sessions.
func (s Store) RecordScanProgress(ctx context.Context, network string, number uint64, blockTime, at time.Time) error {
	_, err := s.h.Pool.Exec(ctx, `INSERT INTO scan_progress (network, block_number, block_time, updated_at)
		VALUES ($1, $2, $3, $4) ON CONFLICT (network) DO UPDATE
		SET block_number = $2, block_time = $3, updated_at = $4`, network, int64(number), blockTime, at)
	return db.MapErr(err)
}

// ScanBehind returns those of the networks whose chainwatch has not yet
// reported the blocks mined before t; a network that was never scanned is
// not waited for.
func (s Store) ScanBehind(ctx context.Context, networks []string, t time.Time) ([]string, error) {
	rows, err := s.h.Pool.Query(ctx, `SELECT network FROM scan_progress WHERE network = ANY($1) AND block_time < $2
		ORDER BY network`, networks, t)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// SessionsDue returns the sessions taking payments on network whose expiry
// (while they are open or processing) or late-payment window ends after
// after and no later than upTo, earliest first: those a chainwatch that
// has handed over the transfers mined before upTo tells so. It returns at
// most limit of each kind; until is how far the answer goes (upTo, or the
// last time returned of a kind that reached the limit).
func (s Store) SessionsDue(ctx context.Context, network string, after, upTo time.Time, limit int) (ids []string, until time.Time, err error) {
	until = upTo
	on := fmt.Sprintf(`[{"network": %q}]`, network)
	for _, q := range []string{
		`SELECT id, expires_at FROM checkout_sessions WHERE expires_at > $1 AND expires_at <= $2
			AND status IN ('open', 'processing') AND payment_options @> $3::jsonb ORDER BY expires_at LIMIT $4`,
		`SELECT id, late_until FROM checkout_sessions WHERE late_until > $1 AND late_until <= $2
			AND payment_options @> $3::jsonb ORDER BY late_until LIMIT $4`,
	} {
		rows, err := s.h.Pool.Query(ctx, q, after, upTo, on, limit)
		if err != nil {
			return nil, upTo, err
		}
		var n int
		var last time.Time
		for rows.Next() {
			var id string
			if err := rows.Scan(&id, &last); err != nil {
				rows.Close()
				return nil, upTo, err
			}
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
			n++
		}
		if err := rows.Err(); err != nil {
			return nil, upTo, err
		}
		if n == limit && last.Before(until) {
			until = last
		}
	}
	return ids, until, nil
}
