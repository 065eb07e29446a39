package payments

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store/checkout"
	"github.com/paymentsd/paymentsd/store/internal/db"
)

// EachTransaction calls fn with each of the principal's transactions that
// the query's filters keep, newest first, as the database returns them:
// one query, nothing held in memory (the CSV export). Pagination is not
// applied.
func (s Store) EachTransaction(ctx context.Context, p payment.Principal, q payment.ListQuery, fn func(payment.Transaction) error) error {
	return db.Each(ctx, s.h.Pool, "transactions", "transactions", db.TxColumns, txFilter(p, q), db.ScanTx, fn)
}

// paidSQL is what a session's counted transfers (confirmed or finalized,
// its own unless assigned elsewhere, and those assigned to it) add up to,
// per asset: "10.5 USDC on base; 0.01 ETH on base".
const paidSQL = `coalesce((SELECT string_agg(x, '; ' ORDER BY x) FROM (
	SELECT trim_scale(sum(t.amount::numeric))::text || ' ' || t.symbol || ' on ' || t.network AS x
	FROM transactions t
	WHERE ((t.checkout_session_id = checkout_sessions.id AND NOT t.unexpected) OR t.assigned_session_id = checkout_sessions.id)
		AND t.status IN ('confirmed', 'finalized')
	GROUP BY t.symbol, t.network) y), '')`

// EachSession is EachTransaction for checkout sessions; paid is what the
// session received per asset.
func (s Store) EachSession(ctx context.Context, p payment.Principal, q payment.ListQuery, fn func(cs payment.Session, paid string) error) error {
	type paidSession struct {
		cs   payment.Session
		paid string
	}
	scan := func(row pgx.Row) (x paidSession, err error) {
		x.cs, err = checkout.ScanSessionWith(row, &x.paid)
		return x, err
	}
	return db.Each(ctx, s.h.Pool, "sessions", "checkout_sessions", checkout.SessionColumns+`, `+paidSQL, checkout.SessionFilter(p, q), scan,
		func(x paidSession) error { return fn(x.cs, x.paid) })
}

// Overview is what a project's overview shows of one environment.
type Overview struct {
	PaidTodayUSD, PaidMonthUSD   decimal.Decimal
	PaymentsToday, PaymentsMonth int
	SessionsByStatus             map[string]int
	Exceptions, Unexpected       int
}

// Overview sums the principal's payments since the starts of today and of
// this month: the USD value of the transfers that count for a session
// (confirmed or finalized; an unexpected one once assigned), by the time
// they were confirmed; and counts the sessions by status, those with an
// exception not resolved and the unexpected transfers not assigned.
func (s Store) Overview(ctx context.Context, p payment.Principal, today, month time.Time) (Overview, error) {
	o := Overview{SessionsByStatus: map[string]int{}}
	var paidToday, paidMonth string
	err := s.h.Pool.QueryRow(ctx, `SELECT
		coalesce(sum(amount_usd) FILTER (WHERE confirmed_at >= $3), 0)::text, count(*) FILTER (WHERE confirmed_at >= $3),
		coalesce(sum(amount_usd), 0)::text, count(*)
		FROM transactions WHERE project_id = $1 AND is_live = $2 AND status IN ('confirmed', 'finalized')
		AND NOT (`+unassignedSQL+`) AND confirmed_at >= $4`,
		p.ProjectID, p.IsLive, today, month).Scan(&paidToday, &o.PaymentsToday, &paidMonth, &o.PaymentsMonth)
	if err != nil {
		return o, fmt.Errorf("overview payments: %w", err)
	}
	o.PaidTodayUSD, _ = decimal.NewFromString(paidToday)
	o.PaidMonthUSD, _ = decimal.NewFromString(paidMonth)
	rows, err := s.h.Pool.Query(ctx, `SELECT status, sum(n)::int FROM list_counts
		WHERE kind = 'checkout_sessions' AND project_id = $1 AND is_live = $2 GROUP BY status`, p.ProjectID, p.IsLive)
	if err != nil {
		return o, fmt.Errorf("overview sessions: %w", err)
	}
	counts, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (struct {
		status string
		n      int
	}, error) {
		var x struct {
			status string
			n      int
		}
		return x, r.Scan(&x.status, &x.n)
	})
	if err != nil {
		return o, err
	}
	for _, c := range counts {
		o.SessionsByStatus[c.status] = c.n
	}
	err = s.h.Pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM checkout_sessions WHERE project_id = $1 AND is_live = $2 AND `+checkout.ExceptionSQL+`),
		(SELECT count(*) FROM transactions WHERE project_id = $1 AND is_live = $2 AND `+unassignedSQL+`)`,
		p.ProjectID, p.IsLive).Scan(&o.Exceptions, &o.Unexpected)
	return o, err
}
