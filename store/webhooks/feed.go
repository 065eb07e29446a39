package webhooks

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store/internal/db"
)

// FeedEvents reads a page of the principal's events as a feed: in the
// order of the database transactions that wrote them (then of their
// writing within one), after q.After, created at or after q.Since, with
// q's other filters. It reads only the events of transactions older than
// the oldest transaction still running: all of those have committed or
// rolled back, so an event that commits later is always after every
// position a reader was given, and paging never skips or repeats one.
// The price is that an event becomes readable only once every
// transaction that started before its own has ended (usually
// milliseconds; as long as a stuck transaction runs, at worst).
func (s Store) FeedEvents(ctx context.Context, p payment.Principal, q payment.FeedQuery) (payment.EventFeedPage, error) {
	var out payment.EventFeedPage
	f := db.NewFilter(p, q.ListQuery, "type")
	if q.Since != nil {
		f.Add("created_at >= ?", *q.Since)
	}
	after := payment.EventCursor{}
	if q.After != nil {
		after = *q.After
	}
	f.Args = append(f.Args, strconv.FormatUint(after.XID, 10), after.Seq)
	f.Where = append(f.Where, fmt.Sprintf("(xid, seq) > ($%d::text::xid8, $%d)", len(f.Args)-1, len(f.Args)))
	f.Where = append(f.Where, "xid < pg_snapshot_xmin(pg_current_snapshot())")
	where := strings.Join(f.Where, " AND ")

	// One snapshot for the horizon, the page and the count, so that they
	// agree.
	err := pgx.BeginTxFunc(ctx, s.h.Pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		out = payment.EventFeedPage{Next: after}
		var horizon string
		if err := tx.QueryRow(ctx, `SELECT pg_snapshot_xmin(pg_current_snapshot())::text`).Scan(&horizon); err != nil {
			return err
		}
		args := append(f.Args, q.Limit+1)
		rows, err := tx.Query(ctx, fmt.Sprintf(`SELECT %s, xid::text, seq FROM events WHERE %s ORDER BY xid, seq LIMIT $%d`,
			eventColumns, where, len(args)), args...)
		if err != nil {
			return err
		}
		type positioned struct {
			ev  payment.Event
			pos payment.EventCursor
		}
		page, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (positioned, error) {
			var x positioned
			var xid string
			err := r.Scan(&x.ev.ID, &x.ev.ProjectID, &x.ev.IsLive, &x.ev.Type, &x.ev.ObjectID, &x.ev.Version, &x.ev.Data,
				&x.ev.CreatedAt, &xid, &x.pos.Seq)
			if err != nil {
				return x, err
			}
			x.ev.CreatedAt = x.ev.CreatedAt.UTC()
			x.pos.XID, err = strconv.ParseUint(xid, 10, 64)
			return x, err
		})
		if err != nil {
			return fmt.Errorf("feed events: %w", err)
		}
		if out.HasMore = len(page) > q.Limit; out.HasMore {
			page = page[:q.Limit]
		}
		out.Events = make([]payment.Event, len(page))
		for i, x := range page {
			out.Events[i] = x.ev
			out.Next = x.pos
		}
		if !out.HasMore {
			// Every transaction before the horizon has ended: nothing can
			// come before it any more.
			xmin, err := strconv.ParseUint(horizon, 10, 64)
			if err != nil {
				return fmt.Errorf("feed horizon %q: %w", horizon, err)
			}
			if h := (payment.EventCursor{XID: xmin}); h.XID > out.Next.XID {
				out.Next = h
			}
		}
		return tx.QueryRow(ctx, `SELECT count(*) FROM events WHERE `+where, f.Args...).Scan(&out.Remaining)
	})
	return out, db.MapErr(err)
}
