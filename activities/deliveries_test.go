package activities_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/activities"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/store/storetest"
	"github.com/paymentsd/paymentsd/webhook"
)

// A dispatch makes each delivery's first attempt, records it and marks
// dispatched the events whose deliveries all arrived, in one database
// transaction. An event with a failed delivery is left undispatched for
// the dispatcher's workflow, which starts that delivery's workflow before
// it marks the event: taken again before (a crash in between), the event
// is attempted again, under the same delivery. A delivery to an endpoint
// that is not failing writes nothing to the endpoint.
func TestADispatchMarksTheEventsItDelivered(t *testing.T) {
	ctx := context.Background()
	st := storetest.NewStore(t)
	sealer, _ := webhook.NewSealer(make([]byte, webhook.KeySize))
	secrets := map[string]string{"/up": webhook.NewSecret(), "/down": webhook.NewSecret()}
	var mu sync.Mutex
	got := map[string][]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := webhook.Verify(r.Header, body, secrets[r.URL.Path], 0, time.Now()); err != nil {
			t.Errorf("%s: %v", r.URL.Path, err)
		}
		mu.Lock()
		got[r.URL.Path] = append(got[r.URL.Path], r.Header.Get(webhook.HeaderID))
		mu.Unlock()
		if r.URL.Path == "/down" {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()

	now := time.Now().UTC().Truncate(time.Microsecond)
	endpoint := func(path string) store.StoredEndpoint {
		pid := recordProject(t, st, "Hooks", now)
		id := payment.NewID(payment.PrefixWebhook, now)
		sealed, _ := sealer.Seal(id, secrets[path])
		ep := store.StoredEndpoint{WebhookEndpoint: payment.WebhookEndpoint{ID: id, ProjectID: pid, URL: srv.URL + path,
			EnabledEvents: []string{"*"}, Status: payment.WebhookEnabled, CreatedAt: now}, Secret: sealed}
		if err := st.Webhooks().CreateEndpoint(ctx, ep); err != nil {
			t.Fatal(err)
		}
		return ep
	}
	up, down := endpoint("/up"), endpoint("/down")
	var events []string
	for i, ep := range []store.StoredEndpoint{up, down, up} {
		id := payment.NewID(payment.PrefixEvent, now)
		events = append(events, id)
		if _, err := st.Pool().Exec(ctx, `INSERT INTO events (id, project_id, is_live, type, object_id, version, data, created_at)
			VALUES ($1, $2, false, 'transaction.confirmed', $1, 1, '{}', $3)`, id, ep.ProjectID, now.Add(time.Duration(i)*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}

	acts := &activities.Activities{Store: st, Webhooks: activities.Webhooks{Sealer: sealer,
		Client: webhook.NewClient(webhook.ClientOptions{AllowPrivate: true})}}
	out, err := acts.DispatchEvents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Events, events[1:2]) || len(out.Retries) != 1 {
		t.Fatalf("dispatch left %v with retries %+v; want %s with one", out.Events, out.Retries, events[1])
	}
	retry := out.Retries[0]
	if in := retry.Input; in.EventID != events[1] || in.EndpointID != down.ID || in.FirstAttempt != 2 || in.Retried != 1 ||
		in.Wait < 4500*time.Millisecond || in.Wait > 5500*time.Millisecond || retry.ProjectID != down.ProjectID {
		t.Errorf("retry = %+v; want attempt 2 to %s after the schedule's first wait", retry, down.ID)
	}
	mu.Lock()
	if !slices.Equal(got["/up"], []string{events[0], events[2]}) && !slices.Equal(got["/up"], []string{events[2], events[0]}) ||
		!slices.Equal(got["/down"], events[1:2]) {
		t.Errorf("the receiver got %v", got)
	}
	mu.Unlock()
	for i, id := range events {
		var dispatched bool
		if err := st.Pool().QueryRow(ctx, `SELECT dispatched_at IS NOT NULL FROM events WHERE id = $1`, id).Scan(&dispatched); err != nil {
			t.Fatal(err)
		}
		if dispatched != (i != 1) {
			t.Errorf("event %d dispatched: %v", i, dispatched)
		}
	}
	delivery := func(ep store.StoredEndpoint, event string) payment.Delivery {
		t.Helper()
		ds, _, err := st.Webhooks().ListEventDeliveries(ctx, payment.Principal{ProjectID: ep.ProjectID}, event, payment.ListQuery{Page: 1, Limit: 10})
		if err != nil || len(ds) != 1 {
			t.Fatalf("deliveries of %s: %v, %v", event, ds, err)
		}
		return ds[0]
	}
	if d := delivery(up, events[0]); d.Status != payment.DeliveryDelivered || len(d.Attempts) != 1 || d.DeliveredAt == nil {
		t.Errorf("delivery to the receiver that took it: %+v", d)
	}
	failed := delivery(down, events[1])
	if failed.Status == payment.DeliveryDelivered || len(failed.Attempts) != 1 || failed.Attempts[0].StatusCode == nil ||
		*failed.Attempts[0].StatusCode != 500 || failed.ID != retry.Input.DeliveryID {
		t.Errorf("delivery to the receiver that failed it: %+v", failed)
	}
	if ep, err := st.Webhooks().EndpointByID(ctx, up.ID); err != nil || !ep.UpdatedAt.Equal(now) || ep.FailingSince != nil {
		t.Errorf("the endpoint that took every delivery was written: %+v, %v", ep, err)
	}
	if ep, err := st.Webhooks().EndpointByID(ctx, down.ID); err != nil || ep.FailingSince == nil {
		t.Errorf("the endpoint that failed is not failing: %+v, %v", ep, err)
	}

	// The workflow did not mark the event: the next dispatch attempts it
	// again, under the same delivery.
	again, err := acts.DispatchEvents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(again.Events, events[1:2]) || len(again.Retries) != 1 || again.Retries[0].Input.DeliveryID != failed.ID {
		t.Errorf("dispatched again: %+v; want %s under delivery %s", again, events[1], failed.ID)
	}
	mu.Lock()
	if len(got["/down"]) != 2 || len(got["/up"]) != 2 {
		t.Errorf("the receiver got %v", got)
	}
	mu.Unlock()
}

// With more events than a batch takes, a dispatch goes on with the next
// batch while the first is being recorded, leaving out the events of the
// batch under way: every event is delivered once and marked.
func TestADispatchTakesBatchAfterBatch(t *testing.T) {
	ctx := context.Background()
	st := storetest.NewStore(t)
	sealer, _ := webhook.NewSealer(make([]byte, webhook.KeySize))
	var mu sync.Mutex
	got := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got[r.Header.Get(webhook.HeaderID)]++
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	now := time.Now().UTC()
	pid := recordProject(t, st, "Hooks", now)
	id := payment.NewID(payment.PrefixWebhook, now)
	sealed, _ := sealer.Seal(id, webhook.NewSecret())
	if err := st.Webhooks().CreateEndpoint(ctx, store.StoredEndpoint{WebhookEndpoint: payment.WebhookEndpoint{ID: id, ProjectID: pid, URL: srv.URL,
		EnabledEvents: []string{"*"}, Status: payment.WebhookEnabled, CreatedAt: now}, Secret: sealed}); err != nil {
		t.Fatal(err)
	}
	const events = 2500 // three batches of one delivery an event
	if _, err := st.Pool().Exec(ctx, `INSERT INTO events (id, project_id, is_live, type, object_id, version, data, created_at)
		SELECT 'evt_many' || i, $1, false, 'transaction.confirmed', 'tx_many' || i, 1, '{}', $2::timestamptz + i * interval '1 microsecond'
		FROM generate_series(1, $3::int) AS i`, pid, now, events); err != nil {
		t.Fatal(err)
	}
	acts := &activities.Activities{Store: st, Webhooks: activities.Webhooks{Sealer: sealer,
		Client: webhook.NewClient(webhook.ClientOptions{AllowPrivate: true})}}
	for {
		out, err := acts.DispatchEvents(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Events) > 0 || len(out.Retries) > 0 {
			t.Fatalf("a dispatch to a receiver that takes everything left %d events", len(out.Events))
		}
		var left int
		if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM events WHERE project_id = $1 AND dispatched_at IS NULL`, pid).Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left == 0 {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != events {
		t.Fatalf("the receiver got %d events, want %d", len(got), events)
	}
	for id, n := range got {
		if n != 1 {
			t.Fatalf("event %s arrived %d times", id, n)
		}
	}
	var delivered int
	if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM webhook_deliveries d JOIN webhook_attempts a ON a.delivery_id = d.id
		WHERE d.project_id = $1 AND d.status = 'delivered'`, pid).Scan(&delivered); err != nil {
		t.Fatal(err)
	}
	if delivered != events {
		t.Fatalf("%d deliveries recorded delivered with their attempt, want %d", delivered, events)
	}
}
