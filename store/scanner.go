package store

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// ScannedBlock is a block a network's scanner has read.
type ScannedBlock struct {
	Number int64
	Hash   string
	Parent string
}

// keepScannedBlocks bounds how far back a reorg can rewind: deeper reorgs
// than this many blocks restart the scan from the chain's head.
const keepScannedBlocks = 256

// LastScanned returns the newest scanned block of a network; ok is false
// before the first scan.
func (s *Store) LastScanned(ctx context.Context, network string) (b ScannedBlock, ok bool, err error) {
	err = s.pool.QueryRow(ctx, `SELECT number, hash, parent FROM scanned_blocks WHERE network = $1
		ORDER BY number DESC LIMIT 1`, network).Scan(&b.Number, &b.Hash, &b.Parent)
	if errors.Is(err, pgx.ErrNoRows) {
		return b, false, nil
	}
	return b, err == nil, err
}

// ScannedBlocks returns the kept scanned blocks of a network, newest first.
func (s *Store) ScannedBlocks(ctx context.Context, network string) ([]ScannedBlock, error) {
	rows, err := s.pool.Query(ctx, `SELECT number, hash, parent FROM scanned_blocks WHERE network = $1
		ORDER BY number DESC`, network)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[ScannedBlock])
}

// SaveScanned records scanned blocks and forgets every kept block at or
// above from that is not among them (a rewind), and the oldest beyond the
// kept window, in one transaction.
func (s *Store) SaveScanned(ctx context.Context, network string, from int64, blocks []ScannedBlock, now time.Time) error {
	return s.WithTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM scanned_blocks WHERE network = $1 AND number >= $2`, network, from); err != nil {
			return err
		}
		for _, b := range blocks {
			if _, err := tx.Exec(ctx, `INSERT INTO scanned_blocks (network, number, hash, parent, scanned_at)
				VALUES ($1,$2,$3,$4,$5)`, network, b.Number, b.Hash, b.Parent, now); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, `DELETE FROM scanned_blocks WHERE network = $1 AND number <
			(SELECT max(number) FROM scanned_blocks WHERE network = $1) - $2`, network, keepScannedBlocks)
		return err
	})
}

// ResetScanned forgets a network's scan cursor (the chain was replaced).
func (s *Store) ResetScanned(ctx context.Context, network string) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM scanned_blocks WHERE network = $1`, network)
	return err
}
