package store

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/oklog/ulid/v2"

	"github.com/paymentsd/paymentsd/payment"
)

// watchedSet is, in the process that scans, every deposit address issued,
// with what the scan needs of its session, and every shared recipient ever
// held: the scan's lookup reads its recipients' sessions from memory and
// asks the database only about recipients that are held, so what a lookup
// costs does not grow with the sessions stored. It is read whole on first
// use, then grows by the sessions and holds created since its last read
// before each lookup. Its last read noted the oldest transaction still
// running then (the snapshot's xmin): the next reads the rows created by
// that transaction or later ones, which holds every row committed since,
// in whatever order the transactions commit. A session and its holds are
// committed before its address is given to anyone, so before a payment to
// it can be mined and scanned. What it keeps of a session (its ID, project
// and environment) never changes, and sessions are never deleted.
type watchedSet struct {
	mu sync.Mutex
	// deposits are the sessions by deposit address; odd the few whose IDs
	// are not of the engine's form, by address, with their IDs.
	deposits map[[20]byte]watchedSession
	odd      map[[20]byte]string
	// filter has the bit of each deposit address's low bits set (16 to
	// 32 bits a session): most of a range's recipients are no session's,
	// and the filter, 2 to 4 megabytes at a million sessions, mostly tells
	// so from the processor's caches, where the map, about 100 megabytes,
	// would take a trip to memory for each.
	filter []uint64
	// projects are the projects' IDs, which watchedSession indexes.
	projects  []string
	projectOf map[string]uint32
	// shared are the recipients of holds, on any network.
	shared map[[20]byte]struct{}
	// from is the xmin of the last read; zero before the first.
	from uint64
}

// watchedSession is what the scan needs of a session: 24 bytes.
type watchedSession struct {
	id      ulid.ULID
	project uint32
	isLive  bool
}

// addressKey is a 0x-prefixed hex address's 20 bytes, and false for a
// string that is not one.
func addressKey(a string) ([20]byte, bool) {
	var k [20]byte
	a = strings.TrimPrefix(strings.TrimPrefix(a, "0x"), "0X")
	if len(a) != 40 {
		return k, false
	}
	_, err := hex.Decode(k[:], []byte(a))
	return k, err == nil
}

func (w *watchedSet) reset() {
	w.deposits, w.odd, w.shared = map[[20]byte]watchedSession{}, map[[20]byte]string{}, map[[20]byte]struct{}{}
	w.projects, w.projectOf, w.filter = nil, map[string]uint32{}, make([]uint64, minFilterWords)
}

// minFilterWords is the filter's least size, in 64-bit words (8 KB).
const minFilterWords = 1024

// filterBit is an address's bit in a filter of words 64-bit words (a power
// of two).
func filterBit(k [20]byte, words int) (int, uint64) {
	b := binary.BigEndian.Uint64(k[12:]) & uint64(words*64-1)
	return int(b >> 6), 1 << (b & 63)
}

// mayHold tells whether the address may be a session's: false for most
// that are not.
func (w *watchedSet) mayHold(k [20]byte) bool {
	i, bit := filterBit(k, len(w.filter))
	return w.filter[i]&bit != 0
}

// mark sets an address's bit, first doubling the filter when it holds
// more than a sixteenth as many sessions as bits.
func (w *watchedSet) mark(k [20]byte) {
	if 16*len(w.deposits) > 64*len(w.filter) {
		w.filter = make([]uint64, 2*len(w.filter))
		for d := range w.deposits {
			i, bit := filterBit(d, len(w.filter))
			w.filter[i] |= bit
		}
	}
	i, bit := filterBit(k, len(w.filter))
	w.filter[i] |= bit
}

// addSession keeps a session by its deposit address (not a hex address:
// a Bitcoin session's, not the EVM scan's to find).
func (w *watchedSet) addSession(address, id string, isLive bool, projectID string) {
	k, ok := addressKey(address)
	if !ok {
		return
	}
	p, known := w.projectOf[projectID]
	if !known {
		p = uint32(len(w.projects))
		w.projects = append(w.projects, projectID)
		w.projectOf[projectID] = p
	}
	rest, isSession := strings.CutPrefix(id, payment.PrefixSession)
	u, err := ulid.ParseStrict(strings.ToUpper(rest))
	if !isSession || err != nil || payment.PrefixSession+strings.ToLower(u.String()) != id {
		w.odd[k] = id
	}
	w.deposits[k] = watchedSession{id: u, project: p, isLive: isLive}
	w.mark(k)
}

func (w *watchedSet) addShared(recipients ...string) {
	for _, r := range recipients {
		if k, ok := addressKey(r); ok {
			w.shared[k] = struct{}{}
		}
	}
}

// refresh reads the sessions and holds created since the last read (all
// of them the first time) into the set.
func (w *watchedSet) refresh(ctx context.Context, s *Store) error {
	if w.deposits == nil {
		return w.readAll(ctx, s)
	}
	// One statement, one snapshot: the sessions and holds it sees, and
	// its xmin for the next read.
	var snapshot string
	var addresses, ids, projects, recipients []string
	var live []bool
	if err := s.pool.QueryRow(ctx, `SELECT pg_snapshot_xmin(pg_current_snapshot())::text, s.a, s.i, s.l, s.p, r.r
		FROM (SELECT coalesce(array_agg(deposit_address), '{}') a, coalesce(array_agg(id), '{}') i,
				coalesce(array_agg(is_live), '{}') l, coalesce(array_agg(project_id), '{}') p
			FROM checkout_sessions WHERE created_xid >= $1::text::xid8 AND deposit_address <> '' AND NOT shared_recipient) s,
			(SELECT coalesce(array_agg(DISTINCT recipient), '{}') r FROM amount_reservations
			WHERE created_xid >= $1::text::xid8) r`,
		strconv.FormatUint(w.from, 10)).Scan(&snapshot, &addresses, &ids, &live, &projects, &recipients); err != nil {
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
	for i, a := range addresses {
		w.addSession(a, ids[i], live[i], projects[i])
	}
	w.addShared(recipients...)
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
	// Filled aside and kept only whole: a read cut short must leave the
	// set to be read whole again, not to be taken for complete.
	var next watchedSet
	next.reset()
	rows, err := tx.Query(ctx, `SELECT deposit_address, id, is_live, project_id FROM checkout_sessions
		WHERE deposit_address <> '' AND NOT shared_recipient`)
	if err != nil {
		return err
	}
	var a, id, project string
	var live bool
	if _, err := pgx.ForEachRow(rows, []any{&a, &id, &live, &project}, func() error {
		next.addSession(a, id, live, project)
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
	w.deposits, w.odd, w.filter, w.projects, w.projectOf, w.shared, w.from = next.deposits, next.odd, next.filter, next.projects, next.projectOf, next.shared, xmin
	return nil
}

// found is the session whose deposit address is a (k its bytes), nil for
// none.
func (w *watchedSet) found(k [20]byte, a string) *WatchedAddress {
	if !w.mayHold(k) {
		return nil
	}
	d, held := w.deposits[k]
	if !held {
		return nil
	}
	id, isOdd := w.odd[k]
	if !isOdd {
		id = payment.PrefixSession + strings.ToLower(d.id.String())
	}
	return &WatchedAddress{Address: a, SessionID: id, IsLive: d.isLive, ProjectID: w.projects[d.project]}
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
// recipient held: of addresses (lowercase), the sessions' are found in
// memory, and the database is asked only about those held by a hold (and
// any that is not a hex address). It costs the process about 100 bytes
// a session ever opened (docs/performance.md, "Data at scale").
func (s *Store) WatchedRecipients(ctx context.Context, network string, addresses []string) (Watched, error) {
	var out Watched
	var ask, shared []string
	w := &s.watched
	w.mu.Lock()
	err := w.refresh(ctx, s)
	if err == nil {
		for _, a := range addresses {
			k, ok := addressKey(a)
			if !ok {
				ask, shared = append(ask, a), append(shared, a)
				continue
			}
			if f := w.found(k, a); f != nil && !slices.ContainsFunc(out.Deposits, func(o WatchedAddress) bool { return o.Address == a }) {
				out.Deposits = append(out.Deposits, *f)
			}
			if _, held := w.shared[k]; held {
				shared = append(shared, a)
			}
		}
	}
	w.mu.Unlock()
	if err != nil {
		return Watched{}, err
	}
	if len(ask) > 0 {
		more, err := s.DepositAddresses(ctx, ask)
		if err != nil {
			return Watched{}, err
		}
		out.Deposits = append(out.Deposits, more...)
	}
	if len(shared) > 0 {
		if out.Shared, err = s.SharedRecipients(ctx, network, shared); err != nil {
			return Watched{}, err
		}
	}
	return out, nil
}
