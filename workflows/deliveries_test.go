package workflows_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/paymentsd/paymentsd/activities"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/store/storetest"
	"github.com/paymentsd/paymentsd/webhook"
	"github.com/paymentsd/paymentsd/workflows"
)

// scripted is a receiver that answers each delivery with the next step.
type scripted struct {
	mu    sync.Mutex
	steps []func(http.ResponseWriter, *http.Request)
	hits  int
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	step := s.steps[min(s.hits, len(s.steps)-1)]
	s.hits++
	s.mu.Unlock()
	step(w, r)
}

func status(code int, header ...string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.WriteHeader(code)
		_, _ = w.Write([]byte("answer " + http.StatusText(code)))
	}
}

func TestWebhookDeliveryRetries(t *testing.T) {
	// A receiver that never answers in time: it holds the request until the
	// client gives up (its 300 ms timeout), which the server notices once
	// the body is read.
	slow := func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}
	cases := []struct {
		name         string
		steps        []func(http.ResponseWriter, *http.Request)
		disableAfter time.Duration
		attempts     int
		delivered    bool
		disabled     bool
		// waits between attempts, in workflow time, each within 10%
		waits []time.Duration
		// takeOver starts the workflow as the dispatcher does after a
		// failed first attempt: attempt 2 after a wait, the schedule going
		// on from its second wait.
		takeOver bool
	}{
		{"500, 500, then 200", []func(http.ResponseWriter, *http.Request){status(500), status(500), status(200)}, 0, 3, true, false,
			[]time.Duration{5 * time.Second, 5 * time.Minute}, false},
		{"429 with Retry-After", []func(http.ResponseWriter, *http.Request){status(429, "Retry-After", "120"), status(200)}, 0, 2, true, false,
			[]time.Duration{120 * time.Second}, false},
		{"410 disables the endpoint", []func(http.ResponseWriter, *http.Request){status(410)}, 0, 1, false, true, nil, false},
		{"a timeout is a failure", []func(http.ResponseWriter, *http.Request){slow, status(200)}, 0, 2, true, false, []time.Duration{5 * time.Second}, false},
		{"a redirect is a failure", []func(http.ResponseWriter, *http.Request){status(302, "Location", "http://127.0.0.1:1/"), status(204)}, 0, 2, true, false,
			[]time.Duration{5 * time.Second}, false},
		// Failing since the first attempt, the endpoint is disabled at the
		// third (5 minutes later): the fourth attempt finds it disabled and
		// sends nothing.
		{"failing for DisableAfter disables", []func(http.ResponseWriter, *http.Request){status(500)}, time.Minute, 4, false, true,
			[]time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute}, false},
		{"after the dispatcher's first attempt", []func(http.ResponseWriter, *http.Request){status(500), status(500), status(200)}, 0, 3, true, false,
			[]time.Duration{5 * time.Minute, 30 * time.Minute}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			st := storetest.NewStore(t)
			rcv := &scripted{steps: c.steps}
			srv := httptest.NewServer(rcv)
			defer srv.Close()
			sealer, _ := webhook.NewSealer(make([]byte, webhook.KeySize))
			d, endpointID := deliveryFixture(t, st, sealer, srv.URL)

			var suite testsuite.WorkflowTestSuite
			env := suite.NewTestWorkflowEnvironment()
			env.RegisterWorkflow(workflows.WebhookDelivery)
			acts := &activities.Activities{Store: st, Webhooks: activities.Webhooks{Sealer: sealer,
				Client: webhook.NewClient(webhook.ClientOptions{AllowPrivate: true, Timeout: 300 * time.Millisecond}), DisableAfter: c.disableAfter}}
			acts.Register(env)
			var at []time.Time
			env.SetOnLocalActivityStartedListener(func(info *activity.Info, _ context.Context, _ []any) {
				if info.ActivityType.Name == workflows.ActivityDeliverWebhook {
					at = append(at, env.Now())
				}
			})
			in := workflows.DeliveryInput{DeliveryID: d.DeliveryID, EventID: d.EventID, EndpointID: endpointID}
			start := env.Now()
			recorded := 0
			if c.takeOver {
				// The dispatch made and recorded the first attempt.
				if _, err := st.Webhooks().RecordAttempt(ctx, d.DeliveryID, payment.Attempt{At: start, Error: "refused"}, payment.DeliveryPending); err != nil {
					t.Fatal(err)
				}
				in.FirstAttempt, in.Retried, in.Wait, recorded = 2, 1, 5*time.Second, 1
			}
			env.ExecuteWorkflow(workflows.WebhookDelivery, in)
			if err := env.GetWorkflowError(); err != nil {
				t.Fatal(err)
			}
			sent := c.attempts
			if c.disableAfter > 0 {
				sent-- // the last attempt found the endpoint disabled
			}
			if len(at) != c.attempts || rcv.hits != sent {
				t.Fatalf("attempts = %d (receiver saw %d), want %d (%d)", len(at), rcv.hits, c.attempts, sent)
			}
			if first := at[0].Sub(start); c.takeOver && (first < 5*time.Second || first > 6*time.Second) {
				t.Errorf("the workflow's first attempt came %v after its start, want the 5 s it was given", first)
			}
			for i, want := range c.waits {
				got := at[i+1].Sub(at[i])
				if got < want*9/10 || got > want*11/10+time.Second {
					t.Errorf("wait before attempt %d = %v, want %v ± 10%%", i+2, got, want)
				}
			}
			del, err := st.Webhooks().GetDelivery(ctx, payment.Principal{ProjectID: d.ProjectID}, endpointID, d.DeliveryID)
			if err != nil {
				t.Fatal(err)
			}
			if (del.Status == "delivered") != c.delivered || len(del.Attempts) != recorded+sent {
				t.Fatalf("delivery = %s with %d attempts", del.Status, len(del.Attempts))
			}
			if c.takeOver && del.Attempts[1].Attempt != 2 {
				t.Errorf("the workflow's first attempt is numbered %d, want 2", del.Attempts[1].Attempt)
			}
			if c.name == "a timeout is a failure" && (del.Attempts[0].StatusCode != nil || !strings.Contains(del.Attempts[0].Error, "Timeout")) {
				t.Fatalf("timed-out attempt = %+v", del.Attempts[0])
			}
			ep, err := st.Webhooks().EndpointByID(ctx, endpointID)
			if err != nil {
				t.Fatal(err)
			}
			if (ep.Status == payment.WebhookDisabled) != c.disabled {
				t.Fatalf("endpoint status = %s (%s)", ep.Status, ep.DisabledReason)
			}
			checkDisabledEvent(t, st, ep, c.disabled)
		})
	}
}

// checkDisabledEvent checks that an endpoint the delivery path disabled
// has one webhook_endpoint.disabled event, recorded with the change, and
// its audit entry (none when it was not disabled), and that the event
// goes to the project's other endpoints that want it, not to the disabled
// one.
func checkDisabledEvent(t *testing.T, st *store.Store, ep store.StoredEndpoint, disabled bool) {
	t.Helper()
	ctx := context.Background()
	p := payment.Principal{ProjectID: ep.ProjectID}
	q := payment.ListQuery{Page: 1, Limit: 10, Status: string(payment.EventWebhookDisabled)}
	events, _, err := st.Webhooks().ListEvents(ctx, p, q)
	if err != nil {
		t.Fatal(err)
	}
	audit, _, err := st.Access().ListAudit(ctx, p, payment.ListQuery{Page: 1, Limit: 10, Status: payment.AuditWebhookDisabled})
	if err != nil {
		t.Fatal(err)
	}
	if !disabled {
		if len(events) != 0 || len(audit) != 0 {
			t.Fatalf("an endpoint still enabled has %d disabled events and %d audit entries", len(events), len(audit))
		}
		return
	}
	if len(events) != 1 || len(audit) != 1 {
		t.Fatalf("%d disabled events and %d audit entries, want one each", len(events), len(audit))
	}
	var data struct {
		ID, Status, DisabledReason, DisabledAt string
		Version                                int
	}
	if err := json.Unmarshal(events[0].Data, &data); err != nil {
		t.Fatal(err)
	}
	if events[0].ObjectID != ep.ID || data.ID != ep.ID || data.Status != payment.WebhookDisabled ||
		data.DisabledReason != ep.DisabledReason || data.DisabledReason == "" || data.Version != 1 ||
		data.DisabledAt != ep.UpdatedAt.Format(time.RFC3339Nano) {
		t.Errorf("event data = %s; endpoint %s disabled at %s (%s)", events[0].Data, ep.ID, ep.UpdatedAt, ep.DisabledReason)
	}
	if a := audit[0]; a.TargetID != ep.ID || a.ActorKind != payment.AuditActorInternal || !strings.Contains(string(a.Details), "reason") {
		t.Errorf("audit entry = %+v %s", a, a.Details)
	}
	// Another endpoint of the project, enabled, gets the event; the
	// disabled one does not.
	now := time.Now().UTC()
	other := store.StoredEndpoint{WebhookEndpoint: payment.WebhookEndpoint{ID: payment.NewID(payment.PrefixWebhook, now),
		ProjectID: ep.ProjectID, URL: "http://127.0.0.1:1/", EnabledEvents: []string{"*"}, Status: payment.WebhookEnabled,
		CreatedAt: now}, Secret: "v2:unused"}
	if err := st.Webhooks().CreateEndpoint(ctx, other); err != nil {
		t.Fatal(err)
	}
	b, err := st.Webhooks().DispatchEvents(ctx, 10, 0, nil, now)
	if err != nil {
		t.Fatal(err)
	}
	if ds := b.Deliveries; len(ds) != 1 || ds[0].EventID != events[0].ID || ds[0].EndpointID != other.ID {
		t.Errorf("dispatches = %+v; want the event to the other endpoint only", b.Deliveries)
	}
}

type fixtureDelivery struct {
	store.Dispatch
	ProjectID string
}

// deliveryFixture records a project, an endpoint at url and a test event
// with its delivery.
func deliveryFixture(t *testing.T, st *store.Store, sealer *webhook.Sealer, url string) (fixtureDelivery, string) {
	ctx := context.Background()
	now := time.Now().UTC()
	pid := payment.NewID(payment.PrefixProject, now)
	if err := st.Checkout().CreateProject(ctx, payment.Project{ID: pid, Name: "Hooks", CompleteOn: payment.TxFinalized, CreatedAt: now}, nil); err != nil {
		t.Fatal(err)
	}
	id := payment.NewID(payment.PrefixWebhook, now)
	sealed, _ := sealer.Seal(id, webhook.NewSecret())
	ep := store.StoredEndpoint{WebhookEndpoint: payment.WebhookEndpoint{ID: id, ProjectID: pid,
		URL: url, EnabledEvents: []string{"*"}, Status: payment.WebhookEnabled, CreatedAt: now}, Secret: sealed}
	if err := st.Webhooks().CreateEndpoint(ctx, ep); err != nil {
		t.Fatal(err)
	}
	ev := payment.Event{ID: payment.NewID(payment.PrefixEvent, now), ProjectID: pid, Type: payment.EventWebhookTest,
		ObjectID: "test_1", Version: 1, Data: []byte(`{"message":"hello"}`), CreatedAt: now}
	if err := st.Webhooks().InsertTestEvent(ctx, ev); err != nil {
		t.Fatal(err)
	}
	d, err := st.Webhooks().CreateDelivery(ctx, ev, ep.ID, now)
	if err != nil {
		t.Fatal(err)
	}
	return fixtureDelivery{d, pid}, ep.ID
}
