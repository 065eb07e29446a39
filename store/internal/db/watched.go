package db

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
)

// WatchedSet is, in the process that scans, every deposit address issued,
// every shared recipient ever held and every destination a refund or
// payout was ever given, by the first 8 bytes of the address: the scan's
// lookups ask the database only about the recipients it may hold (none,
// in most ranges), so that what a lookup costs hardly grows with the
// sessions stored or the money out waiting. The database, not the set, says which
// sessions exist (a database restored from a backup may have lost some the
// set holds). The set is read whole on first use, then grows by the
// sessions, holds and destinations created (or, for a destination,
// changed) since its last read at each lookup. Its
// last read noted the oldest transaction still running then (the
// snapshot's xmin): the next reads the rows created by that transaction or
// later ones, which holds every row committed since, in whatever order the
// transactions commit. A session and its holds are committed before its
// address is given to anyone, so before a payment to it can be mined and
// scanned.
type WatchedSet struct {
	Mu sync.Mutex
	// keys are the deposit addresses', shared those of the recipients of
	// holds (on any network), outgoing those of every destination a
	// refund or payout was given (on any network, in any status).
	keys, Shared, Outgoing map[uint64]struct{}
	// filter has two bits of a word set for each deposit address's key
	// (filterBits; 16 to 32 bits a session): most of a range's recipients
	// are no session's, and the filter, 2 to 4 megabytes at a million
	// sessions, tells so with one read each, where the map, about 40
	// megabytes, would take several.
	filter []uint64
	// from is the xmin of the last read; zero before the first.
	from uint64
}

// AddressKey is the first 8 bytes of a 0x-prefixed hex address, and false
// for a string that is not one.
func AddressKey(a string) (uint64, bool) {
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

func (w *WatchedSet) reset() {
	w.keys, w.Shared, w.Outgoing = map[uint64]struct{}{}, map[uint64]struct{}{}, map[uint64]struct{}{}
	w.filter = make([]uint64, minFilterWords)
}

// minFilterWords is the filter's least size, in 64-bit words (8 KB).
const minFilterWords = 1024

// filterBits are a key's word in a filter of words 64-bit words (a power
// of two), from its low bits, and its two bits in that word, from its
// high ones: one word to read for a key, and a key not held gets past when
// others have set both its bits, about one time in 65 at 16 bits a
// session and one in 220 at 32 (one bit a key: one in 16 and 32).
func filterBits(k uint64, words int) (int, uint64) {
	return int((k & uint64(words*64-1)) >> 6), 1<<(k>>52&63) | 1<<(k>>58)
}

// MayHold tells, for each of keys, whether its address may be a
// session's, into held: false for most that are not, true for every one
// that is. It reads the filter's words for all of them before it looks at
// any: the reads do not wait on one another, so the processor has many in
// flight at once, where one key after the other would wait on memory for
// each (at a million sessions the filter is out of the processor's caches
// again after each round trip to the database).
func (w *WatchedSet) MayHold(keys []uint64, held []bool) {
	words := make([]uint64, len(keys))
	for i, k := range keys {
		j, _ := filterBits(k, len(w.filter))
		words[i] = w.filter[j]
	}
	for i, k := range keys {
		if _, bits := filterBits(k, len(w.filter)); words[i]&bits == bits {
			_, held[i] = w.keys[k]
		}
	}
}

// addDeposits keeps deposit addresses, first doubling the filter when it
// holds more than a sixteenth as many sessions as bits.
func (w *WatchedSet) addDeposits(addresses ...string) {
	for _, a := range addresses {
		k, ok := AddressKey(a)
		if !ok {
			continue
		}
		w.keys[k] = struct{}{}
		if 16*len(w.keys) > 64*len(w.filter) {
			w.filter = make([]uint64, 2*len(w.filter))
			for k := range w.keys {
				i, bits := filterBits(k, len(w.filter))
				w.filter[i] |= bits
			}
		}
		i, bits := filterBits(k, len(w.filter))
		w.filter[i] |= bits
	}
}

func (w *WatchedSet) addShared(recipients ...string) { addKeys(w.Shared, recipients) }

func (w *WatchedSet) addOutgoing(destinations ...string) { addKeys(w.Outgoing, destinations) }

func addKeys(set map[uint64]struct{}, addresses []string) {
	for _, a := range addresses {
		if k, ok := AddressKey(a); ok {
			set[k] = struct{}{}
		}
	}
}

// Refresh reads the sessions created since the last read (all of them the
// first time) into the set.
func (w *WatchedSet) Refresh(ctx context.Context, s *Handle) error {
	if w.keys == nil {
		return w.readAll(ctx, s)
	}
	// One statement, one snapshot: the sessions and holds it sees, and
	// its xmin for the next read.
	var snapshot string
	var addresses, recipients, destinations []string
	// Planned for its xmin each time (an unnamed statement): a plan made
	// for any xmin would read the tables whole, where the indexes on the
	// creating transactions find the few rows since.
	if err := s.Pool.QueryRow(ctx, `SELECT pg_snapshot_xmin(pg_current_snapshot())::text,
			coalesce((SELECT array_agg(deposit_address) FROM checkout_sessions
				WHERE created_xid >= $1::text::xid8 AND deposit_address <> '' AND NOT shared_recipient), '{}'),
			coalesce((SELECT array_agg(DISTINCT recipient) FROM amount_reservations
				WHERE created_xid >= $1::text::xid8), '{}'),
			coalesce((SELECT array_agg(DISTINCT to_address) FROM (
				SELECT to_address FROM refunds WHERE address_xid >= $1::text::xid8 AND to_address <> ''
				UNION ALL SELECT to_address FROM payouts WHERE address_xid >= $1::text::xid8 AND to_address <> '') d), '{}')`,
		pgx.QueryExecModeExec, strconv.FormatUint(w.from, 10)).Scan(&snapshot, &addresses, &recipients, &destinations); err != nil {
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
	w.addDeposits(addresses...)
	w.addShared(recipients...)
	w.addOutgoing(destinations...)
	w.from = xmin
	return nil
}

// readAll reads every session and hold into the set, streaming them in one
// repeatable-read transaction: its first statement takes the snapshot the
// others see, and its xmin.
func (w *WatchedSet) readAll(ctx context.Context, s *Handle) error {
	tx, err := s.Pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
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
	// Filled aside and kept only whole: a read cut short must leave the
	// set to be read whole again, not to be taken for complete.
	var next WatchedSet
	next.reset()
	rows, err := tx.Query(ctx, `SELECT deposit_address FROM checkout_sessions WHERE deposit_address <> '' AND NOT shared_recipient`)
	if err != nil {
		return err
	}
	var a string
	if _, err := pgx.ForEachRow(rows, []any{&a}, func() error {
		next.addDeposits(a)
		return nil
	}); err != nil {
		return err
	}
	if rows, err = tx.Query(ctx, `SELECT DISTINCT recipient FROM amount_reservations`); err != nil {
		return err
	}
	if _, err := pgx.ForEachRow(rows, []any{&a}, func() error {
		next.addShared(a)
		return nil
	}); err != nil {
		return err
	}
	if rows, err = tx.Query(ctx, `SELECT to_address FROM refunds WHERE to_address <> ''
		UNION SELECT to_address FROM payouts WHERE to_address <> ''`); err != nil {
		return err
	}
	if _, err := pgx.ForEachRow(rows, []any{&a}, func() error {
		next.addOutgoing(a)
		return nil
	}); err != nil {
		return err
	}
	w.keys, w.Shared, w.Outgoing, w.filter, w.from = next.keys, next.Shared, next.Outgoing, next.filter, xmin
	return nil
}
