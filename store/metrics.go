package store

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/metrics"
)

// CountByStatus counts the checkout sessions and transactions by
// environment and status, for the metrics.
func (s *Store) CountByStatus(ctx context.Context) ([]metrics.RecordCount, error) {
	rows, err := s.pool.Query(ctx, `SELECT 'checkout_session', is_live, status, count(*) FROM checkout_sessions GROUP BY 2, 3
		UNION ALL SELECT 'transaction', is_live, status, count(*) FROM transactions GROUP BY 2, 3`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (metrics.RecordCount, error) {
		var c metrics.RecordCount
		err := r.Scan(&c.Kind, &c.IsLive, &c.Status, &c.Count)
		return c, err
	})
}
