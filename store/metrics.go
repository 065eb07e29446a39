package store

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/internal/observability"
)

// CountByStatus counts the checkout sessions and transactions by
// environment and status, for the metrics.
func (s *Store) CountByStatus(ctx context.Context) ([]observability.RecordCount, error) {
	// The counts the lists keep (migration 00009), not a count of the rows.
	rows, err := s.h.Pool.Query(ctx, `SELECT CASE kind WHEN 'checkout_sessions' THEN 'checkout_session' ELSE 'transaction' END,
		is_live, status, sum(n)::bigint FROM list_counts WHERE kind IN ('checkout_sessions', 'transactions')
		GROUP BY 1, 2, 3 HAVING sum(n) > 0 ORDER BY 1, 2, 3`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (observability.RecordCount, error) {
		var c observability.RecordCount
		err := r.Scan(&c.Kind, &c.IsLive, &c.Status, &c.Count)
		return c, err
	})
}
