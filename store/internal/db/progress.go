package db

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/payment"
)

// Render turns a record into an event's data: the record as the API
// returns it, with its version. A nil Render records no event.
type Render[T any] func(record T, version int) ([]byte, error)

// InsertEvent records an event of an object's change in the transaction
// that records the change itself (an outbox): the two are never apart.
// (object, version) keys it, so a repeated change adds nothing.
func InsertEvent[T any](ctx context.Context, tx pgx.Tx, projectID string, isLive bool, typ payment.EventType, objectID string, version int,
	render Render[T], record T, at time.Time) error {
	if render == nil {
		return nil
	}
	data, err := render(record, version)
	if err != nil {
		return fmt.Errorf("render event: %w", err)
	}
	_, err = tx.Exec(ctx, `INSERT INTO events (id, project_id, is_live, type, object_id, version, data, created_at)
		VALUES ($1,$2,$3,$4,$5,$6,$7,$8) ON CONFLICT (object_id, version) DO NOTHING`,
		payment.NewID(payment.PrefixEvent, at), projectID, isLive, typ, objectID, version, data, at)
	return err
}
