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
// event goes whatever its endpoints). Taken again before they are marked,
// events keep their deliveries; RecordAttempts records attempts and marks
// events.
func TestDispatchEventsTakesABatch(t *testing.T) {
	ctx := context.Background()
	st := storetest.NewStore(t)
	now := time.Now().UTC().Truncate(time.Microsecond)
	pid := payment.NewID(payment.PrefixProject, now)
	if err := st.CreateProject(ctx, payment.Project{ID: pid, Name: "Hooks", CompleteOn: payment.TxFinalized, CreatedAt: now}, nil); err != nil {
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
		if err := st.CreateEndpoint(ctx, store.StoredEndpoint{WebhookEndpoint: payment.WebhookEndpoint{ID: id, ProjectID: pid,
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
	b, err := st.DispatchEvents(ctx, 10, 5, now)
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
	// Not marked, the first event is taken again with its deliveries: a
	// bound below one event's deliveries still takes that event.
	again, err := st.DispatchEvents(ctx, 10, 1, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Events) != 1 || again.Events[0].ID != events[0] || len(again.Deliveries) != 2 ||
		again.Deliveries[0].DeliveryID != b.Deliveries[0].DeliveryID || again.Deliveries[1].DeliveryID != b.Deliveries[1].DeliveryID {
		t.Fatalf("taken again: %+v, want the first event's deliveries %+v", again.Deliveries, b.Deliveries[:2])
	}

	code := 204
	at := now.Add(time.Second)
	if err := st.RecordAttempts(ctx, []store.AttemptRecord{
		{DeliveryID: b.Deliveries[1].DeliveryID, Attempt: payment.Attempt{Attempt: 1, At: at, StatusCode: &code, LatencyMS: 3}, Status: payment.DeliveryDelivered},
		{DeliveryID: b.Deliveries[0].DeliveryID, Attempt: payment.Attempt{Attempt: 1, At: at, Error: "refused"}, Status: payment.DeliveryPending},
	}, events[:1], at); err != nil {
		t.Fatal(err)
	}
	p := payment.Principal{ProjectID: pid}
	for i, want := range []string{payment.DeliveryPending, payment.DeliveryDelivered} {
		d, err := st.GetDelivery(ctx, p, endpoints[i], b.Deliveries[i].DeliveryID)
		if err != nil {
			t.Fatal(err)
		}
		if d.Status != want || len(d.Attempts) != 1 || (d.DeliveredAt != nil) != (want == payment.DeliveryDelivered) {
			t.Errorf("delivery %d: %+v", i, d)
		}
	}
	next, err := st.DispatchEvents(ctx, 10, 0, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(next.Events) != 3 || next.Events[0].ID != events[1] {
		t.Fatalf("after the first event was marked, the dispatch took %d events", len(next.Events))
	}
}
