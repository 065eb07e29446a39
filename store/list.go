package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/payment"
)

// filter builds the WHERE clause of a list query: the principal's project
// and environment, then the query's filters.
type filter struct {
	where []string
	args  []any
	// prefix qualifies the listed table's columns ("d."), for a list
	// that joins other tables.
	prefix string
}

func (f *filter) add(cond string, arg any) {
	f.args = append(f.args, arg)
	f.where = append(f.where, strings.ReplaceAll(cond, "?", fmt.Sprintf("$%d", len(f.args))))
}

func newFilter(p payment.Principal, q payment.ListQuery, statusExpr string) *filter {
	return newFilterOn("", p, q, statusExpr)
}

// newFilterOn is newFilter over a table known by an alias (prefix "d."),
// in a list that joins other tables.
func newFilterOn(prefix string, p payment.Principal, q payment.ListQuery, statusExpr string) *filter {
	f := &filter{prefix: prefix}
	f.add(prefix+"project_id = ?", p.ProjectID)
	f.add(prefix+"is_live = ?", p.IsLive)
	if q.IsLive != nil && *q.IsLive != p.IsLive {
		f.where = append(f.where, "false") // the other environment is never visible
	}
	if q.Status != "" {
		f.add(statusExpr+" = ?", q.Status)
	}
	if q.From != nil {
		f.add(prefix+"created_at >= ?", *q.From)
	}
	if q.To != nil {
		f.add(prefix+"created_at < ?", *q.To)
	}
	return f
}

// list runs a count and a page query over table, newest first.
func list[T any](ctx context.Context, s *Store, table, columns string, f *filter, q payment.ListQuery, scan func(pgx.Row) (T, error)) ([]T, int, error) {
	where := strings.Join(f.where, " AND ")
	var total int
	if err := s.pool.QueryRow(ctx, "SELECT count(*) FROM "+table+" WHERE "+where, f.args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count %s: %w", table, err)
	}
	items := []T{}
	if total <= q.Offset() {
		return items, total, nil
	}
	args := append(f.args, q.Limit, q.Offset())
	rows, err := s.pool.Query(ctx, fmt.Sprintf("SELECT %s FROM %s WHERE %s ORDER BY %screated_at DESC, %sid DESC LIMIT $%d OFFSET $%d",
		columns, table, where, f.prefix, f.prefix, len(args)-1, len(args)), args...)
	if err != nil {
		return nil, 0, fmt.Errorf("list %s: %w", table, err)
	}
	defer rows.Close()
	for rows.Next() {
		item, err := scan(rows)
		if err != nil {
			return nil, 0, fmt.Errorf("scan %s: %w", table, err)
		}
		items = append(items, item)
	}
	return items, total, rows.Err()
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
