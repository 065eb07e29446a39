package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/payment"
)

func scanEvent(row pgx.Row) (payment.Event, error) {
	var e payment.Event
	err := row.Scan(&e.ID, &e.ProjectID, &e.IsLive, &e.Type, &e.ObjectID, &e.Version, &e.Data, &e.CreatedAt)
	e.CreatedAt = e.CreatedAt.UTC()
	return e, mapErr(err)
}

// ListEvents lists the principal's events, newest first; q.Status filters
// by type.
func (s *Store) ListEvents(ctx context.Context, p payment.Principal, q payment.ListQuery) ([]payment.Event, int, error) {
	return list(ctx, s, "events", eventColumns, newFilter(p, q, "type"), q, scanEvent)
}

// GetEvent returns one of the principal's events.
func (s *Store) GetEvent(ctx context.Context, p payment.Principal, id string) (payment.Event, error) {
	return scanEvent(s.pool.QueryRow(ctx, `SELECT `+eventColumns+` FROM events WHERE id = $1 AND project_id = $2 AND is_live = $3`,
		id, p.ProjectID, p.IsLive))
}

// EventByID returns an event whatever its project: for deliveries.
func (s *Store) EventByID(ctx context.Context, id string) (payment.Event, error) {
	return scanEvent(s.pool.QueryRow(ctx, `SELECT `+eventColumns+` FROM events WHERE id = $1`, id))
}

// InsertTestEvent records a test event, dispatched already: it goes to one
// endpoint only.
func (s *Store) InsertTestEvent(ctx context.Context, e payment.Event) error {
	_, err := s.db(ctx).Exec(ctx, `INSERT INTO events (id, project_id, is_live, type, object_id, version, data, created_at, dispatched_at)
		VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$8)`, e.ID, e.ProjectID, e.IsLive, e.Type, e.ObjectID, e.Version, e.Data, e.CreatedAt)
	return mapErr(err)
}

// Dispatch is one delivery to start: an event to an endpoint.
type Dispatch struct {
	DeliveryID string
	EventID    string
	EndpointID string
	ProjectID  string
	IsLive     bool
}

// DispatchEvents takes up to limit undispatched events, oldest first,
// records a delivery for each endpoint that wants it, and returns the
// deliveries. The events stay undispatched until MarkDispatched, so a
// crash in between dispatches them again (deliveries are unique per event
// and endpoint, so nothing is delivered twice).
func (s *Store) DispatchEvents(ctx context.Context, limit int, now time.Time) (events []string, out []Dispatch, err error) {
	err = s.WithTx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT `+eventColumns+` FROM events WHERE dispatched_at IS NULL
			ORDER BY created_at, id LIMIT $1 FOR UPDATE SKIP LOCKED`, limit)
		if err != nil {
			return err
		}
		evs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (payment.Event, error) { return scanEvent(r) })
		if err != nil {
			return err
		}
		for _, ev := range evs {
			events = append(events, ev.ID)
			eps, err := tx.Query(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints
				WHERE project_id = $1 AND is_live = $2 AND deleted_at IS NULL AND status = 'enabled'`, ev.ProjectID, ev.IsLive)
			if err != nil {
				return err
			}
			endpoints, err := pgx.CollectRows(eps, func(r pgx.CollectableRow) (StoredEndpoint, error) { return scanEndpoint(r) })
			if err != nil {
				return err
			}
			for _, ep := range endpoints {
				if !ep.Wants(ev.Type) {
					continue
				}
				d, err := createDelivery(ctx, tx, ev, ep.ID, now)
				if err != nil {
					return err
				}
				out = append(out, d)
			}
		}
		return nil
	})
	return events, out, err
}

// CreateDelivery records the delivery of an event to an endpoint, or
// returns the one recorded before.
func (s *Store) CreateDelivery(ctx context.Context, ev payment.Event, endpointID string, now time.Time) (Dispatch, error) {
	var d Dispatch
	err := s.WithTx(ctx, func(tx pgx.Tx) error {
		var err error
		d, err = createDelivery(ctx, tx, ev, endpointID, now)
		return err
	})
	return d, err
}

func createDelivery(ctx context.Context, tx pgx.Tx, ev payment.Event, endpointID string, now time.Time) (Dispatch, error) {
	d := Dispatch{DeliveryID: payment.NewID(payment.PrefixDelivery, now), EventID: ev.ID, EndpointID: endpointID,
		ProjectID: ev.ProjectID, IsLive: ev.IsLive}
	err := tx.QueryRow(ctx, `INSERT INTO webhook_deliveries (id, event_id, endpoint_id, project_id, is_live, status, created_at, updated_at)
		VALUES ($1,$2,$3,$4,$5,'pending',$6,$6) ON CONFLICT (event_id, endpoint_id) DO UPDATE SET event_id = EXCLUDED.event_id
		RETURNING id`, d.DeliveryID, ev.ID, endpointID, ev.ProjectID, ev.IsLive, now).Scan(&d.DeliveryID)
	return d, err
}

// MarkDispatched records that events' deliveries were started.
func (s *Store) MarkDispatched(ctx context.Context, ids []string, now time.Time) error {
	_, err := s.pool.Exec(ctx, `UPDATE events SET dispatched_at = $2 WHERE id = ANY($1)`, ids, now)
	return err
}

// RecordAttempt records an attempt and the delivery's resulting status.
func (s *Store) RecordAttempt(ctx context.Context, deliveryID string, a payment.Attempt, status string) error {
	return s.WithTx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO webhook_attempts (delivery_id, attempt, at, status_code, latency_ms, response_excerpt, error)
			VALUES ($1,$2,$3,$4,$5,$6,$7) ON CONFLICT (delivery_id, attempt) DO NOTHING`,
			deliveryID, a.Attempt, a.At, a.StatusCode, a.LatencyMS, a.ResponseExcerpt, a.Error)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE webhook_deliveries SET status = $2, attempts = GREATEST(attempts, $3), updated_at = $4,
			delivered_at = CASE WHEN $2 = 'delivered' THEN $4 ELSE delivered_at END WHERE id = $1`, deliveryID, status, a.Attempt, a.At)
		return err
	})
}

// SetDeliveryStatus sets a delivery's status (failed once its schedule ran
// out, pending again when redelivered).
func (s *Store) SetDeliveryStatus(ctx context.Context, deliveryID, status string, at time.Time) error {
	_, err := s.db(ctx).Exec(ctx, `UPDATE webhook_deliveries SET status = $2, updated_at = $3 WHERE id = $1`, deliveryID, status, at)
	return err
}

func scanDelivery(row pgx.Row) (payment.Delivery, error) {
	var d payment.Delivery
	var attempts []byte
	err := row.Scan(&d.ID, &d.EventID, &d.EventType, &d.EndpointID, &d.Status, &d.DeliveredAt, &d.CreatedAt, &d.UpdatedAt, &attempts)
	if err != nil {
		return d, mapErr(err)
	}
	d.CreatedAt, d.UpdatedAt, d.DeliveredAt = d.CreatedAt.UTC(), d.UpdatedAt.UTC(), utcPtr(d.DeliveredAt)
	if err := json.Unmarshal(attempts, &d.Attempts); err != nil {
		return d, err
	}
	for i := range d.Attempts {
		d.Attempts[i].At = d.Attempts[i].At.UTC()
	}
	return d, nil
}

// GetDelivery returns a delivery of one of the principal's endpoints.
func (s *Store) GetDelivery(ctx context.Context, p payment.Principal, endpointID, id string) (payment.Delivery, error) {
	return scanDelivery(s.pool.QueryRow(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
		WHERE d.id = $1 AND d.endpoint_id = $2 AND d.project_id = $3 AND d.is_live = $4`, id, endpointID, p.ProjectID, p.IsLive))
}

// ListDeliveries lists the deliveries to one of the principal's endpoints,
// newest first, under every filter of a list: status, from and to (on
// createdAt), isLive.
func (s *Store) ListDeliveries(ctx context.Context, p payment.Principal, endpointID string, q payment.ListQuery) ([]payment.Delivery, int, error) {
	return s.listDeliveries(ctx, p, "d.endpoint_id = ?", endpointID, q)
}

// ListEventDeliveries lists an event's deliveries, to every endpoint.
func (s *Store) ListEventDeliveries(ctx context.Context, p payment.Principal, eventID string, q payment.ListQuery) ([]payment.Delivery, int, error) {
	return s.listDeliveries(ctx, p, "d.event_id = ?", eventID, q)
}

func (s *Store) listDeliveries(ctx context.Context, p payment.Principal, cond, arg string, q payment.ListQuery) ([]payment.Delivery, int, error) {
	f := newFilterOn("d.", p, q, "d.status")
	f.add(cond, arg)
	return list(ctx, s, "webhook_deliveries d JOIN events e ON e.id = d.event_id", deliveryColumns, f, q, scanDelivery)
}
