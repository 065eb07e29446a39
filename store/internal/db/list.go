package db

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/payment"
)

// Filter builds the WHERE clause of a list query: the principal's project
// and environment, then the query's filters.
type Filter struct {
	Where []string
	Args  []any
	// prefix qualifies the listed table's columns ("d."), for a list
	// that joins other tables.
	prefix string
	// key selects the list_counts rows that hold the number of rows the
	// filter selects, when it has only conditions those rows know: the
	// project, the environment and the status column, no date range. base
	// is the number of those conditions; a list that adds its own has more.
	key  *countKey
	base int
}

// countKey selects the rows of list_counts that hold a list's total.
type countKey struct {
	projectID string
	isLive    bool
	status    string // "": every status
	never     bool   // the query asks for the other environment
}

func (f *Filter) Add(cond string, arg any) {
	f.Args = append(f.Args, arg)
	f.Where = append(f.Where, strings.ReplaceAll(cond, "?", fmt.Sprintf("$%d", len(f.Args))))
}

func NewFilter(p payment.Principal, q payment.ListQuery, statusExpr string) *Filter {
	return NewFilterOn("", p, q, statusExpr)
}

// NewFilterOn is newFilter over a table known by an alias (prefix "d."),
// in a list that joins other tables.
func NewFilterOn(prefix string, p payment.Principal, q payment.ListQuery, statusExpr string) *Filter {
	f := &Filter{prefix: prefix}
	f.Add(prefix+"project_id = ?", p.ProjectID)
	f.Add(prefix+"is_live = ?", p.IsLive)
	if q.IsLive != nil && *q.IsLive != p.IsLive {
		f.Where = append(f.Where, "false") // the other environment is never visible
	}
	if q.Status != "" {
		f.Add(statusExpr+" = ?", q.Status)
	}
	if q.From != nil {
		f.Add(prefix+"created_at >= ?", *q.From)
	}
	if q.To != nil {
		f.Add(prefix+"created_at < ?", *q.To)
	}
	if prefix == "" && q.From == nil && q.To == nil && (q.Status == "" || statusExpr == "status") {
		f.key = &countKey{projectID: p.ProjectID, isLive: p.IsLive, status: q.Status,
			never: q.IsLive != nil && *q.IsLive != p.IsLive}
		f.base = len(f.Where)
	}
	// Filters past the base are counted, not read from list_counts.
	if len(q.StatusIn) > 0 {
		f.Add(statusExpr+" = ANY(?)", q.StatusIn)
	}
	if q.Network != "" {
		f.Add(prefix+"network = ?", q.Network)
	}
	if q.ObjectID != "" {
		f.Add(prefix+"object_id = ?", q.ObjectID)
	}
	return f
}

// countedTables keep their rows' number per project, environment and
// status in list_counts (migration 00009).
var countedTables = map[string]bool{"transactions": true, "checkout_sessions": true}

// countRows returns the number of table's rows f selects: read from
// list_counts when the table keeps counts and f is one of theirs, counted
// otherwise (a date range).
func countRows(ctx context.Context, db reader, table string, f *Filter) (int, error) {
	k := f.key
	if k == nil || !countedTables[table] || len(f.Where) != f.base {
		var n int
		err := db.QueryRow(ctx, "SELECT count(*) FROM "+table+" WHERE "+strings.Join(f.Where, " AND "), f.Args...).Scan(&n)
		return n, err
	}
	if k.never {
		return 0, nil
	}
	sql, args := countsSQL, []any{table, k.projectID, k.isLive}
	if k.status != "" {
		sql, args = countsByStatusSQL, append(args, k.status)
	}
	var n int64
	err := db.QueryRow(ctx, sql, args...).Scan(&n)
	return int(n), err
}

const (
	countsSQL         = `SELECT coalesce(sum(n), 0)::bigint FROM list_counts WHERE kind = $1 AND project_id = $2 AND is_live = $3`
	countsByStatusSQL = countsSQL + ` AND status = $4`
)

// List runs a count (see countRows) and a page query over table, newest first.
func List[T any](ctx context.Context, s *Handle, table, columns string, f *Filter, q payment.ListQuery, scan func(pgx.Row) (T, error)) ([]T, int, error) {
	if s.Replica != nil {
		items, total, err := listOn(ctx, s.Replica, table, columns, f, q, scan)
		if err == nil || ctx.Err() != nil {
			return items, total, err
		}
	}
	return listOn(ctx, s.Pool, table, columns, f, q, scan)
}

// reader is a pool that lists read: the primary's or the replica's.
type reader interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// listOn is list, on one database.
func listOn[T any](ctx context.Context, db reader, table, columns string, f *Filter, q payment.ListQuery, scan func(pgx.Row) (T, error)) ([]T, int, error) {
	total, err := countRows(ctx, db, table, f)
	if err != nil {
		return nil, 0, fmt.Errorf("count %s: %w", table, err)
	}
	where := strings.Join(f.Where, " AND ")
	if total <= q.Offset() {
		return []T{}, total, nil
	}
	// The page's room at once: growing a slice of records row by row
	// copied them five times over.
	items := make([]T, 0, max(0, min(q.Limit, total-q.Offset())))
	args := append(f.Args, q.Limit, q.Offset())
	rows, err := db.Query(ctx, fmt.Sprintf("SELECT %s FROM %s WHERE %s ORDER BY %screated_at DESC, %sid DESC LIMIT $%d OFFSET $%d",
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

// Each calls fn with each of table's rows f keeps, newest first, as the
// database streams them: one query, nothing held in memory (the CSV
// exports). Pagination is not applied; what names the export in its
// error.
func Each[T any](ctx context.Context, db reader, what, table, columns string, f *Filter, scan func(pgx.Row) (T, error), fn func(T) error) error {
	rows, err := db.Query(ctx, `SELECT `+columns+` FROM `+table+` WHERE `+strings.Join(f.Where, " AND ")+
		` ORDER BY created_at DESC, id DESC`, f.Args...)
	if err != nil {
		return fmt.Errorf("export %s: %w", what, err)
	}
	defer rows.Close()
	for rows.Next() {
		item, err := scan(rows)
		if err != nil {
			return err
		}
		if err := fn(item); err != nil {
			return err
		}
	}
	return rows.Err()
}

func UTCPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
