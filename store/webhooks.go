package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/payment"
)

// StoredEndpoint is a webhook endpoint with its sealed secrets.
type StoredEndpoint struct {
	payment.WebhookEndpoint
	Secret              string // sealed
	PreviousSecret      string // sealed; signs too until PreviousSecretUntil
	PreviousSecretUntil *time.Time
	FailingSince        *time.Time
}

const endpointColumns = `id, project_id, is_live, url, description, enabled_events, status, disabled_reason,
	created_at, updated_at, secret, previous_secret, previous_secret_until, failing_since`

func scanEndpoint(row pgx.Row) (StoredEndpoint, error) {
	var e StoredEndpoint
	var events []byte
	err := row.Scan(&e.ID, &e.ProjectID, &e.IsLive, &e.URL, &e.Description, &events, &e.Status, &e.DisabledReason,
		&e.CreatedAt, &e.UpdatedAt, &e.Secret, &e.PreviousSecret, &e.PreviousSecretUntil, &e.FailingSince)
	if err != nil {
		return e, mapErr(err)
	}
	e.CreatedAt, e.UpdatedAt = e.CreatedAt.UTC(), e.UpdatedAt.UTC()
	return e, json.Unmarshal(events, &e.EnabledEvents)
}

// CreateEndpoint records a webhook endpoint.
func (s *Store) CreateEndpoint(ctx context.Context, e StoredEndpoint) error {
	events, _ := json.Marshal(e.EnabledEvents)
	_, err := s.db(ctx).Exec(ctx, `INSERT INTO webhook_endpoints (id, project_id, is_live, url, description, enabled_events,
		secret, status, created_at, updated_at) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$9)`,
		e.ID, e.ProjectID, e.IsLive, e.URL, e.Description, events, e.Secret, e.Status, e.CreatedAt)
	return mapErr(err)
}

// GetEndpoint returns one of the principal's endpoints.
func (s *Store) GetEndpoint(ctx context.Context, p payment.Principal, id string) (StoredEndpoint, error) {
	return scanEndpoint(s.pool.QueryRow(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints
		WHERE id = $1 AND project_id = $2 AND is_live = $3 AND deleted_at IS NULL`, id, p.ProjectID, p.IsLive))
}

// EndpointByID returns an endpoint whatever its project: for deliveries.
func (s *Store) EndpointByID(ctx context.Context, id string) (StoredEndpoint, error) {
	return scanEndpoint(s.pool.QueryRow(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints WHERE id = $1 AND deleted_at IS NULL`, id))
}

// ListEndpoints lists the principal's endpoints, newest first.
func (s *Store) ListEndpoints(ctx context.Context, p payment.Principal, q payment.ListQuery) ([]StoredEndpoint, int, error) {
	f := newFilter(p, q, "status")
	f.where = append(f.where, "deleted_at IS NULL")
	return list(ctx, s, "webhook_endpoints", endpointColumns, f, q, scanEndpoint)
}

// UpdateEndpoint changes an endpoint under a row lock: change edits it and
// returns an error to abandon the update.
func (s *Store) UpdateEndpoint(ctx context.Context, id string, at time.Time, change func(*StoredEndpoint) error) (StoredEndpoint, error) {
	return s.updateEndpoint(ctx, id, at, change, nil)
}

// Disabling is what the engine records when it disables an endpoint
// itself (a 410, or failing for too long), beside the change and in its
// database transaction: the event's data (render, given the endpoint as
// disabled and the event's version) and the audit entry.
type Disabling struct {
	Render Render[StoredEndpoint]
	Audit  func(e StoredEndpoint) payment.AuditEntry
}

// UpdateEndpointHealth is UpdateEndpoint for the delivery path: when
// change disables an enabled endpoint, the transaction that disables it
// also records a webhook_endpoint.disabled event (the endpoint's object,
// numbered per endpoint) and the audit entry, so that the three are never
// apart. It reports whether it disabled the endpoint.
func (s *Store) UpdateEndpointHealth(ctx context.Context, id string, at time.Time, change func(*StoredEndpoint) error,
	d Disabling) (StoredEndpoint, bool, error) {
	var disabled bool
	e, err := s.updateEndpoint(ctx, id, at, change, func(tx pgx.Tx, before, after StoredEndpoint) error {
		disabled = before.Status == payment.WebhookEnabled && after.Status == payment.WebhookDisabled
		if !disabled {
			return nil
		}
		var version int
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) + 1 FROM events WHERE object_id = $1`, id).Scan(&version); err != nil {
			return err
		}
		if err := insertEvent(ctx, tx, after.ProjectID, after.IsLive, payment.EventWebhookDisabled, id, version,
			d.Render, after, at); err != nil {
			return err
		}
		if d.Audit == nil {
			return nil
		}
		return recordAudit(ctx, tx, d.Audit(after))
	})
	return e, disabled && err == nil, err
}

// updateEndpoint is UpdateEndpoint with then, when set, run in the
// transaction after the row is written, given the endpoint before and
// after the change.
func (s *Store) updateEndpoint(ctx context.Context, id string, at time.Time, change func(*StoredEndpoint) error,
	then func(tx pgx.Tx, before, after StoredEndpoint) error) (StoredEndpoint, error) {
	var e StoredEndpoint
	at = at.Truncate(time.Microsecond) // as stored, so that what then sees is what a read gives
	err := s.WithTx(ctx, func(tx pgx.Tx) error {
		var err error
		e, err = scanEndpoint(tx.QueryRow(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints
			WHERE id = $1 AND deleted_at IS NULL FOR UPDATE`, id))
		if err != nil {
			return err
		}
		before := e
		if err := change(&e); err != nil {
			return err
		}
		e.UpdatedAt = at
		events, _ := json.Marshal(e.EnabledEvents)
		_, err = tx.Exec(ctx, `UPDATE webhook_endpoints SET url = $2, description = $3, enabled_events = $4, status = $5,
			disabled_reason = $6, secret = $7, previous_secret = $8, previous_secret_until = $9, failing_since = $10,
			updated_at = $11 WHERE id = $1`, id, e.URL, e.Description, events, e.Status, e.DisabledReason, e.Secret,
			e.PreviousSecret, e.PreviousSecretUntil, e.FailingSince, at)
		if err != nil || then == nil {
			return mapErr(err)
		}
		return then(tx, before, e)
	})
	return e, err
}

// DeleteEndpoint removes an endpoint; its deliveries stay on record.
func (s *Store) DeleteEndpoint(ctx context.Context, p payment.Principal, id string, at time.Time) error {
	tag, err := s.db(ctx).Exec(ctx, `UPDATE webhook_endpoints SET deleted_at = $4, status = 'disabled', updated_at = $4
		WHERE id = $1 AND project_id = $2 AND is_live = $3 AND deleted_at IS NULL`, id, p.ProjectID, p.IsLive, at)
	if err == nil && tag.RowsAffected() == 0 {
		return payment.ErrNotFound
	}
	return mapErr(err)
}

const eventColumns = `id, project_id, is_live, type, object_id, version, data, created_at`

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

const deliveryColumns = `d.id, d.event_id, e.type, d.endpoint_id, d.status, d.delivered_at, d.created_at, d.updated_at,
	COALESCE((SELECT json_agg(json_build_object('attempt', a.attempt, 'at', a.at, 'statusCode', a.status_code,
		'latencyMs', a.latency_ms, 'responseExcerpt', a.response_excerpt, 'error', a.error) ORDER BY a.attempt)
		FROM webhook_attempts a WHERE a.delivery_id = d.id), '[]')`

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
