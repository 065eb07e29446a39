package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/store/storetest"
)

// A dispatch takes events oldest first, with a delivery to each enabled
// endpoint of their project and environment that wants them, and stops
// before the event that would take it past its bound on deliveries (one
// event goes whatever its endpoints), leaving out the events it is told
// to. RecordDispatch records the deliveries with their first attempts and
// marks events; taken again before they are marked, events keep their
// deliveries.
func TestDispatchEventsTakesABatch(t *testing.T) {
	ctx := context.Background()
	st := storetest.NewStore(t)
	now := time.Now().UTC().Truncate(time.Microsecond)
	pid := payment.NewID(payment.PrefixProject, now)
	if err := st.Checkout().CreateProject(ctx, payment.Project{ID: pid, Name: "Hooks", CompleteOn: payment.TxFinalized, CreatedAt: now}, nil); err != nil {
		t.Fatal(err)
	}
	var endpoints []string
	for i, e := range []struct {
		live   bool
		events []string
		status string
	}{
		{false, []string{"*"}, payment.WebhookEnabled},
		{false, []string{"transaction.confirmed"}, payment.WebhookEnabled},
		{false, []string{"checkout.session.completed"}, payment.WebhookEnabled}, // wants none of them
		{false, []string{"*"}, payment.WebhookDisabled},
		{true, []string{"*"}, payment.WebhookEnabled}, // the other environment
	} {
		id := payment.NewID(payment.PrefixWebhook, now.Add(time.Duration(i)*time.Millisecond))
		endpoints = append(endpoints, id)
		if err := st.Webhooks().CreateEndpoint(ctx, store.StoredEndpoint{WebhookEndpoint: payment.WebhookEndpoint{ID: id, ProjectID: pid,
			IsLive: e.live, URL: "http://127.0.0.1:1/", EnabledEvents: e.events, Status: e.status, CreatedAt: now}, Secret: "v2:x"}); err != nil {
			t.Fatal(err)
		}
	}
	var events []string
	for i := range 4 {
		id := payment.NewID(payment.PrefixEvent, now)
		events = append(events, id)
		if _, err := st.Pool().Exec(ctx, `INSERT INTO events (id, project_id, is_live, type, object_id, version, data, created_at)
			VALUES ($1, $2, false, 'transaction.confirmed', $1, 1, '{}', $3)`, id, pid, now.Add(time.Duration(i)*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}

	// Two deliveries an event: a bound of 5 takes two events.
	b, err := st.Webhooks().DispatchEvents(ctx, 10, 5, nil, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Events) != 2 || b.Events[0].ID != events[0] || b.Events[1].ID != events[1] || len(b.Deliveries) != 4 || len(b.Endpoints) != 2 {
		t.Fatalf("batch: %d events, %d deliveries, %d endpoints", len(b.Events), len(b.Deliveries), len(b.Endpoints))
	}
	for i, d := range b.Deliveries {
		if d.EventID != events[i/2] || d.EndpointID != endpoints[i%2] || d.ProjectID != pid || d.IsLive {
			t.Errorf("delivery %d = %+v", i, d)
		}
		if _, ok := b.Endpoints[d.EndpointID]; !ok {
			t.Errorf("delivery %d's endpoint is not in the batch", i)
		}
	}
	// The next batch leaves out the events taken, and a bound below one
	// event's deliveries still takes that event.
	next, err := st.Webhooks().DispatchEvents(ctx, 10, 1, events[:2], now)
	if err != nil {
		t.Fatal(err)
	}
	if len(next.Events) != 1 || next.Events[0].ID != events[2] || len(next.Deliveries) != 2 {
		t.Fatalf("next batch: %+v", next.Deliveries)
	}

	// The first event's deliveries with an attempt each, the second's
	// without (their workflows make it): the first event is marked.
	code := 204
	at := now.Add(time.Second)
	ds := make([]store.DispatchedDelivery, len(b.Deliveries))
	for i, d := range b.Deliveries {
		ds[i].Dispatch = d
	}
	ds[0].Attempt, ds[0].Status = &payment.Attempt{Attempt: 1, At: at, Error: "refused"}, payment.DeliveryPending
	ds[1].Attempt, ds[1].Status = &payment.Attempt{Attempt: 1, At: at, StatusCode: &code, LatencyMS: 3}, payment.DeliveryDelivered
	if err := st.Webhooks().RecordDispatch(ctx, now, ds, events[:1], at); err != nil {
		t.Fatal(err)
	}
	p := payment.Principal{ProjectID: pid}
	for i, want := range []struct {
		status   string
		attempts int
	}{{payment.DeliveryPending, 1}, {payment.DeliveryDelivered, 1}, {payment.DeliveryPending, 0}, {payment.DeliveryPending, 0}} {
		d, err := st.Webhooks().GetDelivery(ctx, p, endpoints[i%2], b.Deliveries[i].DeliveryID)
		if err != nil {
			t.Fatalf("delivery %d: %v", i, err)
		}
		if d.Status != want.status || len(d.Attempts) != want.attempts || (d.DeliveredAt != nil) != (want.status == payment.DeliveryDelivered) ||
			!d.CreatedAt.Equal(now) {
			t.Errorf("delivery %d: %+v", i, d)
		}
	}
	// Taken again (not marked), the second event keeps its deliveries:
	// recorded again with an attempt now, they take it.
	again, err := st.Webhooks().DispatchEvents(ctx, 1, 0, nil, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Events) != 1 || again.Events[0].ID != events[1] {
		t.Fatalf("taken again: %+v", again.Events)
	}
	ds = []store.DispatchedDelivery{{Dispatch: again.Deliveries[0], Attempt: &payment.Attempt{Attempt: 1, At: at, StatusCode: &code},
		Status: payment.DeliveryDelivered}, {Dispatch: again.Deliveries[1]}}
	if err := st.Webhooks().RecordDispatch(ctx, now, ds, events[1:2], at); err != nil {
		t.Fatal(err)
	}
	if ds[0].DeliveryID != b.Deliveries[2].DeliveryID || ds[1].DeliveryID != b.Deliveries[3].DeliveryID {
		t.Fatalf("recorded again as %s and %s, want %s and %s", ds[0].DeliveryID, ds[1].DeliveryID,
			b.Deliveries[2].DeliveryID, b.Deliveries[3].DeliveryID)
	}
	if d, err := st.Webhooks().GetDelivery(ctx, p, endpoints[0], ds[0].DeliveryID); err != nil || d.Status != payment.DeliveryDelivered || len(d.Attempts) != 1 {
		t.Errorf("delivery recorded again: %+v, %v", d, err)
	}
	rest, err := st.Webhooks().DispatchEvents(ctx, 10, 0, nil, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(rest.Events) != 2 || rest.Events[0].ID != events[2] {
		t.Fatalf("after two events were marked, the dispatch took %d events", len(rest.Events))
	}
}

// Attempts made at the same time on one delivery — the dispatch's first
// attempt, a redelivery's and the delivery workflow's — are all recorded,
// numbered by the database one after the other, whatever number the
// attempt was made under.
func TestAttemptsAtOnceAreAllRecorded(t *testing.T) {
	ctx := context.Background()
	st := storetest.NewStore(t)
	now := time.Now().UTC().Truncate(time.Microsecond)
	pid := payment.NewID(payment.PrefixProject, now)
	if err := st.Checkout().CreateProject(ctx, payment.Project{ID: pid, Name: "Hooks", CompleteOn: payment.TxFinalized, CreatedAt: now}, nil); err != nil {
		t.Fatal(err)
	}
	endpoint := payment.NewID(payment.PrefixWebhook, now)
	if err := st.Webhooks().CreateEndpoint(ctx, store.StoredEndpoint{WebhookEndpoint: payment.WebhookEndpoint{ID: endpoint, ProjectID: pid,
		URL: "http://127.0.0.1:1/", EnabledEvents: []string{"*"}, Status: payment.WebhookEnabled, CreatedAt: now}, Secret: "v2:x"}); err != nil {
		t.Fatal(err)
	}
	event := payment.NewID(payment.PrefixEvent, now)
	if _, err := st.Pool().Exec(ctx, `INSERT INTO events (id, project_id, is_live, type, object_id, version, data, created_at)
		VALUES ($1, $2, false, 'transaction.confirmed', $1, 1, '{}', $3)`, event, pid, now); err != nil {
		t.Fatal(err)
	}
	b, err := st.Webhooks().DispatchEvents(ctx, 1, 10, nil, now)
	if err != nil || len(b.Deliveries) != 1 {
		t.Fatalf("dispatch: %+v, %v", b.Deliveries, err)
	}
	// The delivery is recorded without an attempt first, as when its
	// workflow makes the first one.
	if err := st.Webhooks().RecordDispatch(ctx, now, []store.DispatchedDelivery{{Dispatch: b.Deliveries[0]}}, nil, now); err != nil {
		t.Fatal(err)
	}
	id := b.Deliveries[0].DeliveryID
	const each = 8
	errs := make(chan error, 2*each)
	for i := range 2 * each {
		go func() {
			a := payment.Attempt{Attempt: 1, At: now.Add(time.Duration(i) * time.Millisecond), Error: "refused"}
			if i%2 == 0 {
				_, err := st.Webhooks().RecordAttempt(ctx, id, a, payment.DeliveryPending)
				errs <- err
				return
			}
			d := store.DispatchedDelivery{Dispatch: b.Deliveries[0], Attempt: &a, Status: payment.DeliveryPending}
			errs <- st.Webhooks().RecordDispatch(ctx, now, []store.DispatchedDelivery{d}, nil, now)
		}()
	}
	for range 2 * each {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	d, err := st.Webhooks().GetDelivery(ctx, payment.Principal{ProjectID: pid}, endpoint, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Attempts) != 2*each {
		t.Fatalf("%d attempts recorded of the %d made", len(d.Attempts), 2*each)
	}
	seen := map[int]bool{}
	for _, a := range d.Attempts {
		seen[a.Attempt] = true
	}
	for n := 1; n <= 2*each; n++ {
		if !seen[n] {
			t.Fatalf("attempt %d is missing from %+v", n, d.Attempts)
		}
	}
	n, err := st.Webhooks().RecordAttempt(ctx, id, payment.Attempt{At: now}, payment.DeliveryPending)
	if err != nil || n != 2*each+1 {
		t.Fatalf("the next attempt is numbered %d (%v), want %d", n, err, 2*each+1)
	}
}
