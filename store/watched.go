package store

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
)

// watchedSet is, in the process that scans, every deposit address issued
// and every shared recipient ever held, by the first 8 bytes of the
// address: the scan's lookup asks the database only for the recipients it
// may hold, so what a lookup costs does not grow with the sessions stored.
// It is read whole on first use, then grows by the sessions and holds
// created since its last read before each lookup. Its last read noted the
// oldest transaction still running then (the snapshot's xmin): the next
// reads the rows created by that transaction or later ones, which holds
// every row committed since, in whatever order the transactions commit. A
// session and its holds are committed before its address is given to
// anyone, so before a payment to it can be mined and scanned.
type watchedSet struct {
	mu sync.Mutex
	// keys are the deposit addresses', shared those of the recipients
	// of holds (on any network).
	keys, shared map[uint64]struct{}
	// from is the xmin of the last read; zero before the first.
	from uint64
}

// addressKey is the first 8 bytes of a 0x-prefixed hex address, and false
// for a string that is not one.
func addressKey(a string) (uint64, bool) {
	a = strings.TrimPrefix(strings.TrimPrefix(a, "0x"), "0X")
	if len(a) < 16 {
		return 0, false
	}
	var b [8]byte
	if _, err := hex.Decode(b[:], []byte(a[:16])); err != nil {
		return 0, false
	}
	return binary.BigEndian.Uint64(b[:]), true
}

// refresh reads the sessions created since the last read (all of them the
// first time) into the set.
func (w *watchedSet) refresh(ctx context.Context, s *Store) error {
	if w.keys == nil {
		return w.readAll(ctx, s)
	}
	// One statement, one snapshot: the sessions and holds it sees, and
	// its xmin for the next read.
	var snapshot string
	var addresses, recipients []string
	if err := s.pool.QueryRow(ctx, `SELECT pg_snapshot_xmin(pg_current_snapshot())::text,
			coalesce((SELECT array_agg(deposit_address) FROM checkout_sessions
				WHERE created_xid >= $1::text::xid8 AND deposit_address <> '' AND NOT shared_recipient), '{}'),
			coalesce((SELECT array_agg(DISTINCT recipient) FROM amount_reservations
				WHERE created_xid >= $1::text::xid8), '{}')`,
		strconv.FormatUint(w.from, 10)).Scan(&snapshot, &addresses, &recipients); err != nil {
		return err
	}
	xmin, err := strconv.ParseUint(snapshot, 10, 64)
	if err != nil {
		return err
	}
	if xmin < w.from {
		// Transaction IDs only grow in one database: this one was
		// restored from a backup (or is another), and is read whole.
		return w.readAll(ctx, s)
	}
	add(w.keys, addresses...)
	add(w.shared, recipients...)
	w.from = xmin
	return nil
}

// readAll reads every session and hold into the set, streaming them in one
// repeatable-read transaction: its first statement takes the snapshot the
// others see, and its xmin.
func (w *watchedSet) readAll(ctx context.Context, s *Store) error {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	var snapshot string
	if err := tx.QueryRow(ctx, `SELECT pg_snapshot_xmin(pg_current_snapshot())::text`).Scan(&snapshot); err != nil {
		return err
	}
	xmin, err := strconv.ParseUint(snapshot, 10, 64)
	if err != nil {
		return err
	}
	rows, err := tx.Query(ctx, `SELECT deposit_address FROM checkout_sessions WHERE deposit_address <> '' AND NOT shared_recipient`)
	if err != nil {
		return err
	}
	// Filled aside and kept only whole: a read cut short must leave the
	// set to be read whole again, not to be taken for complete.
	keys := map[uint64]struct{}{}
	var a string
	if _, err := pgx.ForEachRow(rows, []any{&a}, func() error {
		add(keys, a)
		return nil
	}); err != nil {
		return err
	}
	if rows, err = tx.Query(ctx, `SELECT DISTINCT recipient FROM amount_reservations`); err != nil {
		return err
	}
	shared := map[uint64]struct{}{}
	if _, err := pgx.ForEachRow(rows, []any{&a}, func() error {
		add(shared, a)
		return nil
	}); err != nil {
		return err
	}
	w.keys, w.shared, w.from = keys, shared, xmin
	return nil
}

func add(keys map[uint64]struct{}, addresses ...string) {
	for _, a := range addresses {
		if k, ok := addressKey(a); ok {
			keys[k] = struct{}{}
		}
	}
}

// Watched is what a scan's lookup finds among its recipients.
type Watched struct {
	// Deposits are the sessions whose deposit addresses are among them.
	Deposits []WatchedAddress
	// Shared are those that are shared recipients watched on the network
	// (SharedRecipients).
	Shared []string
}

// WatchedRecipients is DepositAddresses and SharedRecipients through the
// process's set of every deposit address issued and every shared
// recipient held: of addresses (lowercase), only those the set may hold
// are looked up in the database, and not at all when no recipient of a
// scanned range is a session's or a hold's. It costs the process about 16
// bytes a session ever opened.
func (s *Store) WatchedRecipients(ctx context.Context, network string, addresses []string) (Watched, error) {
	w := &s.watched
	w.mu.Lock()
	err := w.refresh(ctx, s)
	var deposits, shared []string
	if err == nil {
		for _, a := range addresses {
			k, ok := addressKey(a)
			if _, held := w.keys[k]; held || !ok {
				deposits = append(deposits, a)
			}
			if _, held := w.shared[k]; held || !ok {
				shared = append(shared, a)
			}
		}
	}
	w.mu.Unlock()
	var out Watched
	if err != nil {
		return out, err
	}
	if len(deposits) > 0 {
		if out.Deposits, err = s.DepositAddresses(ctx, deposits); err != nil {
			return out, err
		}
	}
	if len(shared) > 0 {
		out.Shared, err = s.SharedRecipients(ctx, network, shared)
	}
	return out, err
}
