package webhooks

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store/internal/db"
)

func scanEvent(row pgx.Row) (payment.Event, error) {
	var e payment.Event
	err := row.Scan(&e.ID, &e.ProjectID, &e.IsLive, &e.Type, &e.ObjectID, &e.Version, &e.Data, &e.CreatedAt)
	e.CreatedAt = e.CreatedAt.UTC()
	return e, db.MapErr(err)
}

// ListEvents lists the principal's events, newest first; q.Status filters
// by type.
func (s Store) ListEvents(ctx context.Context, p payment.Principal, q payment.ListQuery) ([]payment.Event, int, error) {
	return db.List(ctx, s.h, "events", eventColumns, db.NewFilter(p, q, "type"), q, scanEvent)
}

// GetEvent returns one of the principal's events.
func (s Store) GetEvent(ctx context.Context, p payment.Principal, id string) (payment.Event, error) {
	return scanEvent(s.h.Pool.QueryRow(ctx, `SELECT `+eventColumns+` FROM events WHERE id = $1 AND project_id = $2 AND is_live = $3`,
		id, p.ProjectID, p.IsLive))
}

// EventByID returns an event whatever its project: for deliveries.
func (s Store) EventByID(ctx context.Context, id string) (payment.Event, error) {
	return scanEvent(s.h.Pool.QueryRow(ctx, `SELECT `+eventColumns+` FROM events WHERE id = $1`, id))
}

// InsertTestEvent records a test event, dispatched already: it goes to one
// endpoint only.
func (s Store) InsertTestEvent(ctx context.Context, e payment.Event) error {
	_, err := s.db(ctx).Exec(ctx, `INSERT INTO events (id, project_id, is_live, type, object_id, version, data, created_at, dispatched_at)
		VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$8)`, e.ID, e.ProjectID, e.IsLive, e.Type, e.ObjectID, e.Version, e.Data, e.CreatedAt)
	return db.MapErr(err)
}

// Dispatch is one delivery to start: an event to an endpoint.
type Dispatch struct {
	DeliveryID string
	EventID    string
	EndpointID string
	ProjectID  string
	IsLive     bool
}

// DispatchBatch is what one dispatch took: the events, oldest first, the
// endpoints that want them (by ID) as the dispatch read them, and a
// delivery of each event to each of those endpoints, in the order of the
// events, not recorded yet (RecordDispatch records them). A first attempt
// made at once needs to read neither the event nor the endpoint again.
type DispatchBatch struct {
	Events     []payment.Event
	Endpoints  map[string]StoredEndpoint
	Deliveries []Dispatch
	// At is when the batch was taken: its deliveries' creation.
	At time.Time
}

// DispatchEvents takes up to limit undispatched events, oldest first,
// leaving out those in except (taken already and not marked yet), with a
// delivery of each to every enabled endpoint that wants it: two queries,
// whatever the number of events and endpoints. maxDeliveries (when
// positive) stops the batch at the event that would take it past that
// many deliveries (one event is always taken): the events left stay for
// the next batch. The events stay undispatched until RecordDispatch or
// MarkDispatched marks them, so a crash in between dispatches them again.
func (s Store) DispatchEvents(ctx context.Context, limit, maxDeliveries int, except []string, now time.Time) (DispatchBatch, error) {
	b := DispatchBatch{At: now}
	rows, err := s.h.Pool.Query(ctx, `SELECT `+eventColumns+` FROM events WHERE dispatched_at IS NULL AND NOT id = ANY($2)
		ORDER BY created_at, id LIMIT $1`, limit, append([]string{}, except...))
	if err != nil {
		return b, err
	}
	evs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (payment.Event, error) { return scanEvent(r) })
	if err != nil || len(evs) == 0 {
		return b, err
	}
	// The endpoints of every project and environment of the batch, in one
	// query.
	type env struct {
		project string
		live    bool
	}
	var projects []string
	var lives []bool
	seen := map[env]bool{}
	for _, ev := range evs {
		if k := (env{ev.ProjectID, ev.IsLive}); !seen[k] {
			seen[k] = true
			projects, lives = append(projects, k.project), append(lives, k.live)
		}
	}
	eps, err := s.h.Pool.Query(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints
		WHERE (project_id, is_live) IN (SELECT * FROM unnest($1::text[], $2::boolean[]))
		AND deleted_at IS NULL AND status = 'enabled' ORDER BY id`, projects, lives)
	if err != nil {
		return b, err
	}
	endpoints, err := pgx.CollectRows(eps, func(r pgx.CollectableRow) (StoredEndpoint, error) { return scanEndpoint(r) })
	if err != nil {
		return b, err
	}
	byEnv := map[env][]StoredEndpoint{}
	for _, ep := range endpoints {
		k := env{ep.ProjectID, ep.IsLive}
		byEnv[k] = append(byEnv[k], ep)
	}
	b.Endpoints = map[string]StoredEndpoint{}
	for _, ev := range evs {
		var ds []Dispatch
		for _, ep := range byEnv[env{ev.ProjectID, ev.IsLive}] {
			if ep.Wants(ev.Type) {
				ds = append(ds, Dispatch{DeliveryID: payment.NewID(payment.PrefixDelivery, now), EventID: ev.ID,
					EndpointID: ep.ID, ProjectID: ev.ProjectID, IsLive: ev.IsLive})
				b.Endpoints[ep.ID] = ep
			}
		}
		if maxDeliveries > 0 && len(b.Events) > 0 && len(b.Deliveries)+len(ds) > maxDeliveries {
			break
		}
		b.Events, b.Deliveries = append(b.Events, ev), append(b.Deliveries, ds...)
	}
	return b, nil
}

// DispatchedDelivery is a delivery of a dispatch with its first attempt,
// when one was made (Attempt nil: none was), and its status after it.
type DispatchedDelivery struct {
	Dispatch
	Attempt *payment.Attempt
	Status  string
}

// RecordDispatch records a batch's deliveries (created at) with their
// first attempts and statuses, and marks events dispatched at now, in one
// database transaction of one statement each: the attempts and the events
// they finished commit together, or neither does (and the events are
// dispatched again). A delivery recorded before (its event dispatched
// again) keeps its ID, which ds takes, and its status when no attempt was
// made now.
func (s Store) RecordDispatch(ctx context.Context, at time.Time, ds []DispatchedDelivery, dispatched []string, now time.Time) error {
	// Rows are written in the order of their keys, so that two writers
	// never wait for each other.
	order := make([]int, len(ds))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(i, j int) int {
		return cmp.Or(strings.Compare(ds[i].EventID, ds[j].EventID), strings.Compare(ds[i].EndpointID, ds[j].EndpointID))
	})
	n := len(ds)
	var (
		ids, events, endpoints, projects, statuses = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		lives                                      = make([]bool, n)
		attempts, latencies                        = make([]int32, n), make([]int32, n)
		codes                                      = make([]*int32, n)
		ats                                        = make([]*time.Time, n)
		excerpts, errs                             = make([]string, n), make([]string, n)
	)
	for k, i := range order {
		d := ds[i]
		ids[k], events[k], endpoints[k], projects[k], lives[k] = d.DeliveryID, d.EventID, d.EndpointID, d.ProjectID, d.IsLive
		statuses[k] = payment.DeliveryPending
		if a := d.Attempt; a != nil {
			statuses[k], attempts[k], ats[k], latencies[k] = d.Status, int32(a.Attempt), &a.At, int32(a.LatencyMS)
			excerpts[k], errs[k] = a.ResponseExcerpt, a.Error
			if a.StatusCode != nil {
				code := int32(*a.StatusCode)
				codes[k] = &code
			}
		}
	}
	return s.h.WithTx(ctx, func(tx pgx.Tx) error {
		if n > 0 {
			rows, err := tx.Query(ctx, `WITH d AS (
				INSERT INTO webhook_deliveries AS w (id, event_id, endpoint_id, project_id, is_live, status, attempts,
					delivered_at, created_at, updated_at)
				SELECT id, event_id, endpoint_id, project_id, is_live, status, attempt,
					CASE WHEN status = 'delivered' THEN at END, $13::timestamptz, coalesce(at, $13::timestamptz)
				FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::boolean[], $6::text[], $7::int[], $8::timestamptz[])
					AS u(id, event_id, endpoint_id, project_id, is_live, status, attempt, at)
				ON CONFLICT (event_id, endpoint_id) DO UPDATE SET
					status = CASE WHEN EXCLUDED.attempts > 0 THEN EXCLUDED.status ELSE w.status END,
					attempts = w.attempts + CASE WHEN EXCLUDED.attempts > 0 THEN 1 ELSE 0 END,
					updated_at = CASE WHEN EXCLUDED.attempts > 0 THEN EXCLUDED.updated_at ELSE w.updated_at END,
					delivered_at = CASE WHEN EXCLUDED.status = 'delivered' THEN EXCLUDED.delivered_at ELSE w.delivered_at END
				RETURNING w.id, w.event_id, w.endpoint_id, w.attempts
			), a AS (
				INSERT INTO webhook_attempts (delivery_id, attempt, at, status_code, latency_ms, response_excerpt, error)
				SELECT d.id, d.attempts, u.at, u.status_code, u.latency_ms, u.excerpt, u.error
				FROM d JOIN unnest($2::text[], $3::text[], $7::int[], $8::timestamptz[], $9::int[], $10::int[], $11::text[], $12::text[])
					AS u(event_id, endpoint_id, attempt, at, status_code, latency_ms, excerpt, error) USING (event_id, endpoint_id)
				WHERE u.attempt > 0
				ON CONFLICT (delivery_id, attempt) DO NOTHING
			)
			SELECT id, event_id, endpoint_id FROM d`,
				ids, events, endpoints, projects, lives, statuses, attempts, ats, codes, latencies, excerpts, errs, at)
			if err != nil {
				return err
			}
			type key struct{ event, endpoint string }
			recorded := make(map[key]string, n)
			var id, event, endpoint string
			if _, err := pgx.ForEachRow(rows, []any{&id, &event, &endpoint}, func() error {
				recorded[key{event, endpoint}] = id
				return nil
			}); err != nil {
				return err
			}
			for i := range ds {
				if id, ok := recorded[key{ds[i].EventID, ds[i].EndpointID}]; ok {
					ds[i].DeliveryID = id
				}
			}
		}
		if len(dispatched) > 0 {
			if _, err := tx.Exec(ctx, `UPDATE events SET dispatched_at = $2 WHERE id = ANY($1)`, dispatched, now); err != nil {
				return err
			}
		}
		return nil
	})
}

// CreateDelivery records the delivery of an event to an endpoint, or
// returns the one recorded before.
func (s Store) CreateDelivery(ctx context.Context, ev payment.Event, endpointID string, now time.Time) (Dispatch, error) {
	var d Dispatch
	err := s.h.WithTx(ctx, func(tx pgx.Tx) error {
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
func (s Store) MarkDispatched(ctx context.Context, ids []string, now time.Time) error {
	_, err := s.h.Pool.Exec(ctx, `UPDATE events SET dispatched_at = $2 WHERE id = ANY($1)`, ids, now)
	return err
}

// RecordAttempt records an attempt and the delivery's resulting status,
// and returns the attempt's number. The database numbers a delivery's
// attempts (a.Attempt is not read): the next after the delivery's count,
// under the delivery row's lock, so that attempts made at the same time (a
// dispatch's first attempt and an operator's redelivery) are all kept.
func (s Store) RecordAttempt(ctx context.Context, deliveryID string, a payment.Attempt, status string) (int, error) {
	var n int
	err := s.h.Pool.QueryRow(ctx, `WITH d AS (
			UPDATE webhook_deliveries SET status = $2, attempts = attempts + 1, updated_at = $3,
				delivered_at = CASE WHEN $2 = 'delivered' THEN $3 ELSE delivered_at END
			WHERE id = $1 RETURNING id, attempts
		)
		INSERT INTO webhook_attempts (delivery_id, attempt, at, status_code, latency_ms, response_excerpt, error)
		SELECT d.id, d.attempts, $3, $4, $5, $6, $7 FROM d RETURNING attempt`,
		deliveryID, status, a.At, a.StatusCode, a.LatencyMS, a.ResponseExcerpt, a.Error).Scan(&n)
	return n, db.MapErr(err)
}

// SetDeliveryStatus sets a delivery's status (failed once its schedule ran
// out, pending again when redelivered).
func (s Store) SetDeliveryStatus(ctx context.Context, deliveryID, status string, at time.Time) error {
	_, err := s.db(ctx).Exec(ctx, `UPDATE webhook_deliveries SET status = $2, updated_at = $3 WHERE id = $1`, deliveryID, status, at)
	return err
}

func scanDelivery(row pgx.Row) (payment.Delivery, error) {
	var d payment.Delivery
	var attempts []byte
	err := row.Scan(&d.ID, &d.EventID, &d.EventType, &d.EndpointID, &d.Status, &d.DeliveredAt, &d.CreatedAt, &d.UpdatedAt, &attempts)
	if err != nil {
		return d, db.MapErr(err)
	}
	d.CreatedAt, d.UpdatedAt, d.DeliveredAt = d.CreatedAt.UTC(), d.UpdatedAt.UTC(), db.UTCPtr(d.DeliveredAt)
	if err := json.Unmarshal(attempts, &d.Attempts); err != nil {
		return d, err
	}
	for i := range d.Attempts {
		d.Attempts[i].At = d.Attempts[i].At.UTC()
	}
	return d, nil
}

// GetDelivery returns a delivery of one of the principal's endpoints.
func (s Store) GetDelivery(ctx context.Context, p payment.Principal, endpointID, id string) (payment.Delivery, error) {
	return scanDelivery(s.h.Pool.QueryRow(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
		WHERE d.id = $1 AND d.endpoint_id = $2 AND d.project_id = $3 AND d.is_live = $4`, id, endpointID, p.ProjectID, p.IsLive))
}

// ListDeliveries lists the deliveries to one of the principal's endpoints,
// newest first, under every filter of a list: status, from and to (on
// createdAt), isLive.
func (s Store) ListDeliveries(ctx context.Context, p payment.Principal, endpointID string, q payment.ListQuery) ([]payment.Delivery, int, error) {
	return s.listDeliveries(ctx, p, "d.endpoint_id = ?", endpointID, q)
}

// ListEventDeliveries lists an event's deliveries, to every endpoint.
func (s Store) ListEventDeliveries(ctx context.Context, p payment.Principal, eventID string, q payment.ListQuery) ([]payment.Delivery, int, error) {
	return s.listDeliveries(ctx, p, "d.event_id = ?", eventID, q)
}

func (s Store) listDeliveries(ctx context.Context, p payment.Principal, cond, arg string, q payment.ListQuery) ([]payment.Delivery, int, error) {
	f := db.NewFilterOn("d.", p, q, "d.status")
	f.Add(cond, arg)
	return db.List(ctx, s.h, "webhook_deliveries d JOIN events e ON e.id = d.event_id", deliveryColumns, f, q, scanDelivery)
}
