package webhooks

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store/internal/db"
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
		return e, db.MapErr(err)
	}
	e.CreatedAt, e.UpdatedAt = e.CreatedAt.UTC(), e.UpdatedAt.UTC()
	return e, json.Unmarshal(events, &e.EnabledEvents)
}

// CreateEndpoint records a webhook endpoint.
func (s Store) CreateEndpoint(ctx context.Context, e StoredEndpoint) error {
	events, _ := json.Marshal(e.EnabledEvents)
	_, err := s.db(ctx).Exec(ctx, `INSERT INTO webhook_endpoints (id, project_id, is_live, url, description, enabled_events,
		secret, status, created_at, updated_at) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$9)`,
		e.ID, e.ProjectID, e.IsLive, e.URL, e.Description, events, e.Secret, e.Status, e.CreatedAt)
	return db.MapErr(err)
}

// GetEndpoint returns one of the principal's endpoints.
func (s Store) GetEndpoint(ctx context.Context, p payment.Principal, id string) (StoredEndpoint, error) {
	return scanEndpoint(s.h.Pool.QueryRow(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints
		WHERE id = $1 AND project_id = $2 AND is_live = $3 AND deleted_at IS NULL`, id, p.ProjectID, p.IsLive))
}

// EndpointByID returns an endpoint whatever its project: for deliveries.
func (s Store) EndpointByID(ctx context.Context, id string) (StoredEndpoint, error) {
	return scanEndpoint(s.h.Pool.QueryRow(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints WHERE id = $1 AND deleted_at IS NULL`, id))
}

// ListEndpoints lists the principal's endpoints, newest first.
func (s Store) ListEndpoints(ctx context.Context, p payment.Principal, q payment.ListQuery) ([]StoredEndpoint, int, error) {
	f := db.NewFilter(p, q, "status")
	f.Where = append(f.Where, "deleted_at IS NULL")
	return db.List(ctx, s.h, "webhook_endpoints", endpointColumns, f, q, scanEndpoint)
}

// UpdateEndpoint changes an endpoint under a row lock: change edits it and
// returns an error to abandon the update.
func (s Store) UpdateEndpoint(ctx context.Context, id string, at time.Time, change func(*StoredEndpoint) error) (StoredEndpoint, error) {
	return s.updateEndpoint(ctx, id, at, change, nil)
}

// Disabling is what the engine records when it disables an endpoint
// itself (a 410, or failing for too long), beside the change and in its
// database transaction: the event's data (render, given the endpoint as
// disabled and the event's version) and the audit entry.
type Disabling struct {
	Render db.Render[StoredEndpoint]
	Audit  func(e StoredEndpoint) payment.AuditEntry
}

// UpdateEndpointHealth is UpdateEndpoint for the delivery path: when
// change disables an enabled endpoint, the transaction that disables it
// also records a webhook_endpoint.disabled event (the endpoint's object,
// numbered per endpoint) and the audit entry, so that the three are never
// apart. It reports whether it disabled the endpoint.
func (s Store) UpdateEndpointHealth(ctx context.Context, id string, at time.Time, change func(*StoredEndpoint) error,
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
		if err := db.InsertEvent(ctx, tx, after.ProjectID, after.IsLive, payment.EventWebhookDisabled, id, version,
			d.Render, after, at); err != nil {
			return err
		}
		if d.Audit == nil {
			return nil
		}
		return db.RecordAudit(ctx, tx, d.Audit(after))
	})
	return e, disabled && err == nil, err
}

// updateEndpoint is UpdateEndpoint with then, when set, run in the
// transaction after the row is written, given the endpoint before and
// after the change.
func (s Store) updateEndpoint(ctx context.Context, id string, at time.Time, change func(*StoredEndpoint) error,
	then func(tx pgx.Tx, before, after StoredEndpoint) error) (StoredEndpoint, error) {
	var e StoredEndpoint
	at = at.Truncate(time.Microsecond) // as stored, so that what then sees is what a read gives
	err := s.h.WithTx(ctx, func(tx pgx.Tx) error {
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
			return db.MapErr(err)
		}
		return then(tx, before, e)
	})
	return e, err
}

// DeleteEndpoint removes an endpoint; its deliveries stay on record.
func (s Store) DeleteEndpoint(ctx context.Context, p payment.Principal, id string, at time.Time) error {
	tag, err := s.db(ctx).Exec(ctx, `UPDATE webhook_endpoints SET deleted_at = $4, status = 'disabled', updated_at = $4
		WHERE id = $1 AND project_id = $2 AND is_live = $3 AND deleted_at IS NULL`, id, p.ProjectID, p.IsLive, at)
	if err == nil && tag.RowsAffected() == 0 {
		return payment.ErrNotFound
	}
	return db.MapErr(err)
}

const eventColumns = `id, project_id, is_live, type, object_id, version, data, created_at`

const deliveryColumns = `d.id, d.event_id, e.type, d.endpoint_id, d.status, d.delivered_at, d.created_at, d.updated_at,
	COALESCE((SELECT json_agg(json_build_object('attempt', a.attempt, 'at', a.at, 'statusCode', a.status_code,
		'latencyMs', a.latency_ms, 'responseExcerpt', a.response_excerpt, 'error', a.error) ORDER BY a.attempt)
		FROM webhook_attempts a WHERE a.delivery_id = d.id), '[]')`
