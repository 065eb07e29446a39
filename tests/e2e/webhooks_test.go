package e2e

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/webhook"
	"github.com/paymentsd/paymentsd/workflows"
)

// receiver is a merchant's webhook endpoint: a real HTTP server that
// verifies every delivery with the Standard Webhooks library, and keeps
// the verified events.
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	secrets  []string // a delivery must verify with each
	events   []map[string]any
	ids      map[string]int // webhook-id -> deliveries seen
	rejected int
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{ids: map[string]int{}}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, s := range r.secrets {
			wh, err := standardwebhooks.NewWebhook(s)
			if err != nil || wh.Verify(body, req.Header) != nil {
				r.rejected++
				http.Error(w, "bad signature", http.StatusBadRequest)
				return
			}
		}
		var ev map[string]any
		_ = json.Unmarshal(body, &ev)
		if ev["id"] != req.Header.Get("webhook-id") {
			r.rejected++
			http.Error(w, "webhook-id differs from the event id", http.StatusBadRequest)
			return
		}
		r.ids[req.Header.Get("webhook-id")]++
		r.events = append(r.events, ev)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) setSecrets(s ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secrets = s
}

// waitFor waits until the receiver has an event of type typ for object id.
func (r *receiver) waitFor(t *testing.T, typ, objectID string) map[string]any {
	t.Helper()
	var found map[string]any
	testwait.Until(t, 60*time.Second, func() (bool, string) {
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, ev := range r.events {
			data, _ := ev["data"].(map[string]any)
			if ev["type"] == typ && (objectID == "" || data["id"] == objectID) {
				found = ev
				return true, ""
			}
		}
		return false, fmt.Sprintf("no %s event for %s among %d received", typ, objectID, len(r.events))
	})
	return found
}

func TestWebhooksDeliverAPaymentsEvents(t *testing.T) {
	ts, _, keys := sandboxAPI(t, apiOptions{})
	rcv := newReceiver(t)
	created := post(t, ts.URL, "/api/v1/projects/"+keys.id+"/webhooks", keys.key, map[string]any{
		"url": rcv.URL + "/hooks", "enabledEvents": []string{"*"}, "description": "shop backend"})
	mustStatus(t, created, http.StatusCreated)
	secret := str(created.data()["secret"])
	if !strings.HasPrefix(secret, "whsec_") || created.data()["status"] != "enabled" {
		t.Fatalf("created endpoint = %s", created.Raw)
	}
	if again := get(t, ts.URL, "/api/v1/projects/"+keys.id+"/webhooks/"+str(created.data()["id"]), keys.key); again.data()["secret"] != nil {
		t.Fatal("the secret is shown again after creation")
	}
	rcv.setSecrets(secret)

	cs := openSession(t, ts.URL, keys, "4", "usdc-devnet")
	hash := payToken(t, 3, str(cs["depositAddress"]), units("4000000"))
	completed := rcv.waitFor(t, "checkout.session.completed", str(cs["id"]))
	processing := rcv.waitFor(t, "checkout.session.processing", str(cs["id"]))
	tx := waitTx(t, ts.URL, keys, hash, "finalized")
	confirmed := rcv.waitFor(t, "transaction.confirmed", str(tx["id"]))
	finalized := rcv.waitFor(t, "transaction.finalized", str(tx["id"]))

	version := func(ev map[string]any) float64 { return ev["data"].(map[string]any)["version"].(float64) }
	if !(version(processing) < version(completed) && version(confirmed) < version(finalized)) {
		t.Fatalf("versions: processing %v completed %v confirmed %v finalized %v", version(processing), version(completed), version(confirmed), version(finalized))
	}
	if completed["data"].(map[string]any)["status"] != "completed" || finalized["data"].(map[string]any)["status"] != "finalized" ||
		completed["projectId"] != keys.id || completed["isLive"] != false {
		t.Fatalf("event bodies: %v / %v", completed, finalized)
	}
	rcv.mu.Lock()
	rejected := rcv.rejected
	rcv.mu.Unlock()
	if rejected != 0 {
		t.Fatalf("%d deliveries failed verification", rejected)
	}

	// The events are listed, and one reads back as it was delivered.
	evs := get(t, ts.URL, "/api/v1/projects/"+keys.id+"/events?type=transaction.finalized", keys.key)
	if evs.pagination()["total"] != float64(1) {
		t.Fatalf("events = %s", evs.Raw)
	}
	one := get(t, ts.URL, "/api/v1/projects/"+keys.id+"/events/"+str(finalized["id"]), keys.key)
	if one.data()["type"] != "transaction.finalized" {
		t.Fatalf("event = %s", one.Raw)
	}
	deliveries := get(t, ts.URL, "/api/v1/projects/"+keys.id+"/webhooks/"+str(created.data()["id"])+"/deliveries", keys.key)
	mustStatus(t, deliveries, http.StatusOK)
	first := deliveries.list()[0].(map[string]any)
	attempts := first["attempts"].([]any)
	if first["status"] != "delivered" || len(attempts) != 1 || attempts[0].(map[string]any)["statusCode"] != float64(204) {
		t.Fatalf("delivery = %v", first)
	}
	// Delivered at the first attempt, by the dispatcher: no workflow.
	if _, err := temporal.DescribeWorkflowExecution(context.Background(),
		workflows.WebhookDeliveryWorkflowID(str(finalized["id"]), str(created.data()["id"])), ""); err == nil {
		t.Error("a delivery answered 2xx at once has a workflow; the dispatcher's first attempt should have done")
	}
	recordHistory(t, workflows.WebhookDispatcherWorkflowID, "webhook_dispatcher")
	recordHistory(t, workflows.ChainwatchWorkflowID("devnet"), "chainwatch_devnet")
}

func TestWebhookSecretRotationSignsWithBoth(t *testing.T) {
	ts, _, keys := sandboxAPI(t, apiOptions{})
	rcv := newReceiver(t)
	base := "/api/v1/projects/" + keys.id + "/webhooks"
	created := post(t, ts.URL, base, keys.key, map[string]any{"url": rcv.URL, "enabledEvents": []string{"transaction.finalized"}})
	mustStatus(t, created, http.StatusCreated)
	id := str(created.data()["id"])
	old := str(created.data()["secret"])
	rotated := post(t, ts.URL, base+"/"+id+"/rotate-secret", keys.key, map[string]any{})
	mustStatus(t, rotated, http.StatusOK)
	fresh := str(rotated.data()["secret"])
	if fresh == old || !strings.HasPrefix(fresh, "whsec_") {
		t.Fatalf("rotated secret = %q", fresh)
	}
	// During the overlap a receiver holding either secret verifies.
	rcv.setSecrets(old, fresh)
	test := post(t, ts.URL, base+"/"+id+"/test", keys.key, map[string]any{})
	mustStatus(t, test, http.StatusAccepted)
	got := rcv.waitFor(t, "webhook.test", "")
	if got["id"] != test.data()["id"] {
		t.Fatalf("test event = %v", got)
	}
}

func TestWebhookEndpointValidationAndUpdates(t *testing.T) {
	ts, _, p := projectAPI(t, apiOptions{})
	base := "/api/v1/projects/" + p.Project.ID + "/webhooks"
	bad := []struct {
		key    string
		body   map[string]any
		fields string
	}{
		{p.SandboxKey, map[string]any{}, "url,enabledEvents"},
		{p.SandboxKey, map[string]any{"url": "ftp://x.example", "enabledEvents": []string{"*"}}, "url"},
		{p.SandboxKey, map[string]any{"url": "https://x.example", "enabledEvents": []string{"transaction.mined"}}, "enabledEvents[0]"},
		{p.LiveKey, map[string]any{"url": "http://x.example", "enabledEvents": []string{"*"}}, "url"},
		{p.SandboxKey, map[string]any{"url": "https://x.example", "enabledEvents": []string{"*"}, "secret": "mine"}, "secret"},
	}
	for _, b := range bad {
		r := post(t, ts.URL, base, b.key, b.body)
		if r.Status != 422 || strings.Join(r.detailFields(), ",") != b.fields {
			t.Errorf("%v: %d %s", b.body, r.Status, r.Raw)
		}
	}
	created := post(t, ts.URL, base, p.SandboxKey, map[string]any{"url": "https://x.example/h", "enabledEvents": []string{"*"}})
	mustStatus(t, created, 201)
	id := str(created.data()["id"])
	upd := do(t, ts.URL, request{method: "PATCH", path: base + "/" + id, key: p.SandboxKey, body: map[string]any{"status": "disabled", "description": "paused"}})
	mustStatus(t, upd, 200)
	if upd.data()["status"] != "disabled" || upd.data()["description"] != "paused" || upd.data()["url"] != "https://x.example/h" {
		t.Fatalf("updated = %s", upd.Raw)
	}
	if r := get(t, ts.URL, base+"/"+id, p.LiveKey); r.Status != 404 {
		t.Fatalf("live key read a sandbox endpoint: %d", r.Status)
	}
	if r := do(t, ts.URL, request{method: "DELETE", path: base + "/" + id, key: p.SandboxKey}); r.Status != 200 {
		t.Fatalf("delete: %s", r.Raw)
	}
	if r := get(t, ts.URL, base+"/"+id, p.SandboxKey); r.Status != 404 {
		t.Fatalf("deleted endpoint still readable: %d", r.Status)
	}
}

// A delivery can be sent again: same event, same webhook-id, so the
// receiver can tell it is the same.
func TestRedeliverSendsTheSameEvent(t *testing.T) {
	ts, _, keys := sandboxAPI(t, apiOptions{})
	rcv := newReceiver(t)
	base := "/api/v1/projects/" + keys.id + "/webhooks"
	created := post(t, ts.URL, base, keys.key, map[string]any{"url": rcv.URL, "enabledEvents": []string{"*"}})
	mustStatus(t, created, http.StatusCreated)
	rcv.setSecrets(str(created.data()["secret"]))
	id := str(created.data()["id"])
	test := post(t, ts.URL, base+"/"+id+"/test", keys.key, map[string]any{})
	mustStatus(t, test, http.StatusAccepted)
	rcv.waitFor(t, "webhook.test", "")
	// The receiver answers before the engine records the attempt: the
	// redelivery comes once the delivery has ended (a redelivery while its
	// attempt is under way answers with that attempt).
	wait, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := temporal.GetWorkflow(wait, workflows.WebhookDeliveryWorkflowID(str(test.data()["id"]), id), "").Get(wait, nil); err != nil {
		t.Fatal(err)
	}
	deliveries := get(t, ts.URL, base+"/"+id+"/deliveries", keys.key)
	deliveryID := str(deliveries.list()[0].(map[string]any)["id"])
	re := post(t, ts.URL, base+"/"+id+"/deliveries/"+deliveryID+"/redeliver", keys.key, map[string]any{})
	mustStatus(t, re, http.StatusOK)
	if re.data()["status"] != "delivered" || len(re.data()["attempts"].([]any)) != 2 || !strings.HasPrefix(str(re.Body["message"]), "Delivered now (attempt 2)") {
		t.Fatalf("redelivery answered %s", re.Raw)
	}
	testwait.Until(t, 30*time.Second, func() (bool, string) {
		rcv.mu.Lock()
		defer rcv.mu.Unlock()
		n := rcv.ids[str(test.data()["id"])]
		return n == 2, fmt.Sprintf("the event arrived %d times, want 2", n)
	})
	// The receiver answers before the engine records the attempt.
	testwait.Until(t, 10*time.Second, func() (bool, string) {
		d := get(t, ts.URL, base+"/"+id+"/deliveries", keys.key).list()[0].(map[string]any)
		return d["status"] == "delivered" && len(d["attempts"].([]any)) == 2, fmt.Sprintf("delivery after redelivery = %v", d)
	})
}

// legacySeal seals a secret the way it was sealed before secrets were bound
// to their endpoint ("v1:", no associated data), under the stack's key (all
// zeros).
func legacySeal(t *testing.T, plain string) string {
	t.Helper()
	block, _ := aes.NewCipher(make([]byte, webhook.KeySize))
	gcm, _ := cipher.NewGCM(block)
	nonce := make([]byte, gcm.NonceSize())
	_, _ = rand.Read(nonce)
	return "v1:" + base64.StdEncoding.EncodeToString(gcm.Seal(nonce, nonce, []byte(plain), nil))
}

// A sealed secret is bound to its endpoint: copied into another endpoint's
// row it does not open, and that endpoint's deliveries are not signed with
// it. A secret sealed before the binding still signs, and is bound when
// its row is next written.
func TestWebhookSecretsAreBoundToTheirEndpoint(t *testing.T) {
	ts, _, keys := sandboxAPI(t, apiOptions{})
	ctx := context.Background()
	base := "/api/v1/projects/" + keys.id + "/webhooks"
	rcvA, rcvB := newReceiver(t), newReceiver(t)
	a := post(t, ts.URL, base, keys.key, map[string]any{"url": rcvA.URL, "enabledEvents": []string{"transaction.finalized"}})
	b := post(t, ts.URL, base, keys.key, map[string]any{"url": rcvB.URL, "enabledEvents": []string{"transaction.finalized"}})
	mustStatus(t, a, http.StatusCreated)
	mustStatus(t, b, http.StatusCreated)
	idA, idB, secretA := str(a.data()["id"]), str(b.data()["id"]), str(a.data()["secret"])
	rcvA.setSecrets(secretA)
	rcvB.setSecrets(secretA) // were A's secret moved to B, B's receiver would take its deliveries

	// A's sealed secret, copied into B's row, does not open there.
	if _, err := st.Pool().Exec(ctx, `UPDATE webhook_endpoints SET secret = (SELECT secret FROM webhook_endpoints WHERE id = $1)
		WHERE id = $2`, idA, idB); err != nil {
		t.Fatal(err)
	}
	rowA, err := st.Webhooks().EndpointByID(ctx, idA)
	if err != nil {
		t.Fatal(err)
	}
	rowB, err := st.Webhooks().EndpointByID(ctx, idB)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := sealer.Open(idA, rowA.Secret); err != nil || got != secretA {
		t.Fatalf("A's secret in A's row: %q, %v", got, err)
	}
	if got, err := sealer.Open(idB, rowB.Secret); err == nil {
		t.Fatalf("A's secret opened in B's row: %q", got)
	}
	test := post(t, ts.URL, base+"/"+idB+"/test", keys.key, map[string]any{})
	mustStatus(t, test, http.StatusAccepted)
	run := temporal.GetWorkflow(ctx, workflows.WebhookDeliveryWorkflowID(str(test.data()["id"]), idB), "")
	if err := run.Get(ctx, nil); err == nil || !strings.Contains(err.Error(), "open endpoint secret") {
		t.Fatalf("B's delivery with A's secret in its row: %v", err)
	}
	rcvB.mu.Lock()
	got := len(rcvB.events) + rcvB.rejected
	rcvB.mu.Unlock()
	if got != 0 {
		t.Fatalf("B's receiver got %d deliveries", got)
	}

	// A secret sealed the old way still signs, and the delivery's write
	// binds it to its endpoint.
	if _, err := st.Pool().Exec(ctx, `UPDATE webhook_endpoints SET secret = $2 WHERE id = $1`, idA, legacySeal(t, secretA)); err != nil {
		t.Fatal(err)
	}
	test = post(t, ts.URL, base+"/"+idA+"/test", keys.key, map[string]any{})
	mustStatus(t, test, http.StatusAccepted)
	if ev := rcvA.waitFor(t, "webhook.test", ""); ev["id"] != test.data()["id"] {
		t.Fatalf("delivered %v", ev)
	}
	var sealed string
	testwait.Until(t, 10*time.Second, func() (bool, string) {
		row, err := st.Webhooks().EndpointByID(ctx, idA)
		if err != nil {
			t.Fatal(err)
		}
		sealed = row.Secret
		return strings.HasPrefix(sealed, "v2:"), fmt.Sprintf("the legacy secret was not bound after a delivery: %.3s…", sealed)
	})
	if got, err := sealer.Open(idA, sealed); err != nil || got != secretA {
		t.Fatalf("resealed secret: %q, %v", got, err)
	}
}

// The deliveries list applies every filter it takes (status, from, to,
// isLive, page and limit) and refuses the rest.
func TestDeliveriesListFilters(t *testing.T) {
	ts, _, keys := sandboxAPI(t, apiOptions{})
	ctx := context.Background()
	base := "/api/v1/projects/" + keys.id + "/webhooks"
	var ids []string
	for range 2 {
		r := post(t, ts.URL, base, keys.key, map[string]any{"url": "https://hooks.example/in", "enabledEvents": []string{"transaction.finalized"}})
		mustStatus(t, r, http.StatusCreated)
		ids = append(ids, str(r.data()["id"]))
	}
	// Deliveries recorded straight in the store, on five days at noon, with
	// no workflow to move them on.
	day := func(d int) time.Time { return time.Date(2026, 1, d, 12, 0, 0, 0, time.UTC) }
	deliveries := map[string]string{} // id -> status
	for i, status := range []string{"delivered", "failed", "pending", "delivered", "failed"} {
		at := day(i + 1)
		ev := payment.Event{ID: payment.NewID(payment.PrefixEvent, at), ProjectID: keys.id, Type: payment.EventWebhookTest,
			ObjectID: payment.NewID("test_", at), Version: 1, Data: []byte(`{}`), CreatedAt: at}
		if err := st.Webhooks().InsertTestEvent(ctx, ev); err != nil {
			t.Fatal(err)
		}
		d, err := st.Webhooks().CreateDelivery(ctx, ev, ids[0], at)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Webhooks().SetDeliveryStatus(ctx, d.DeliveryID, status, at); err != nil {
			t.Fatal(err)
		}
		deliveries[d.DeliveryID] = status
		if i == 0 { // the other endpoint's delivery is never listed here
			if _, err := st.Webhooks().CreateDelivery(ctx, ev, ids[1], at); err != nil {
				t.Fatal(err)
			}
		}
	}
	list := base + "/" + ids[0] + "/deliveries"
	cases := []struct {
		query string
		days  []int // of the deliveries listed, newest first
		total int
	}{
		{"", []int{5, 4, 3, 2, 1}, 5},
		{"?status=delivered", []int{4, 1}, 2},
		{"?status=failed", []int{5, 2}, 2},
		{"?status=pending", []int{3}, 1},
		{"?from=2026-01-03", []int{5, 4, 3}, 3},
		{"?from=2026-01-03T12:00:00.000001Z", []int{5, 4}, 2},
		{"?to=2026-01-02", []int{2, 1}, 2},
		{"?to=2026-01-02T12:00:00Z", []int{2, 1}, 2},
		{"?to=2026-01-02T11:59:59Z", []int{1}, 1},
		{"?from=2026-01-02&to=2026-01-04&status=delivered", []int{4}, 1},
		{"?isLive=false", []int{5, 4, 3, 2, 1}, 5},
		{"?isLive=true", nil, 0},
		{"?limit=2&page=2", []int{3, 2}, 5},
		{"?limit=2&page=3", []int{1}, 5},
	}
	for _, c := range cases {
		r := get(t, ts.URL, list+c.query, keys.key)
		if r.Status != http.StatusOK {
			t.Errorf("%q: %d %s", c.query, r.Status, r.Raw)
			continue
		}
		var got []int
		for _, it := range r.list() {
			d := it.(map[string]any)
			created, _ := time.Parse(time.RFC3339Nano, str(d["createdAt"]))
			got = append(got, created.Day())
			if d["webhookId"] != ids[0] || d["status"] != deliveries[str(d["id"])] {
				t.Errorf("%s: delivery %v", c.query, d)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(c.days) || r.pagination()["total"] != float64(c.total) {
			t.Errorf("%q: days %v total %v, want %v total %d", c.query, got, r.pagination()["total"], c.days, c.total)
		}
	}
	for query, field := range map[string]string{"?status=sent": "status", "?eventType=webhook.test": "eventType",
		"?from=2026-01-04&to=2026-01-02": "from", "?isLive=yes": "isLive", "?limit=0": "limit", "?from=soon": "from"} {
		r := get(t, ts.URL, list+query, keys.key)
		if r.Status != http.StatusUnprocessableEntity || strings.Join(r.detailFields(), ",") != field {
			t.Errorf("%s: %d %s, want 422 on %s", query, r.Status, r.Raw, field)
		}
	}
}

// A merchant who fixed their endpoint presses redeliver on a delivery in
// its retry schedule: the attempt is made now, not at the next scheduled
// time (minutes or hours away), and the answer is its outcome. One that
// fails leaves the schedule going on.
// A delivery whose first attempt (the dispatcher's) fails is taken over by
// its workflow, which waits the schedule's first wait and delivers at
// attempt 2.
func TestAFailedFirstAttemptIsRetriedByItsWorkflow(t *testing.T) {
	ts, _, p := projectAPI(t, apiOptions{})
	var mu sync.Mutex
	var at []time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		at = append(at, time.Now())
		if len(at) == 1 {
			http.Error(w, "busy", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	base := "/api/v1/projects/" + p.Project.ID + "/webhooks"
	created := post(t, ts.URL, base, p.SandboxKey, map[string]any{"url": srv.URL, "enabledEvents": []string{"payment_plan.created"}})
	mustStatus(t, created, http.StatusCreated)
	id := str(created.data()["id"])
	createPlan(t, ts.URL, p, map[string]any{"title": "Hooked", "amountUsd": "3"})

	var d map[string]any
	testwait.Until(t, 30*time.Second, func() (bool, string) {
		list := get(t, ts.URL, base+"/"+id+"/deliveries", p.SandboxKey).list()
		if len(list) == 1 && list[0].(map[string]any)["status"] == "delivered" {
			d = list[0].(map[string]any)
			return true, ""
		}
		return false, fmt.Sprintf("deliveries = %v; want one delivered at the second attempt", list)
	})
	attempts := d["attempts"].([]any)
	mu.Lock()
	defer mu.Unlock()
	if len(attempts) != 2 || len(at) != 2 || attempts[0].(map[string]any)["statusCode"] != float64(500) ||
		attempts[1].(map[string]any)["attempt"] != float64(2) {
		t.Fatalf("attempts = %v (receiver called %d times); want a 500 then attempt 2 delivered", attempts, len(at))
	}
	if wait := at[1].Sub(at[0]); wait < 4*time.Second || wait > 10*time.Second {
		t.Fatalf("attempt 2 came %v after the first; want the schedule's 5 s (±10%%)", wait)
	}
	recordClosedHistory(t, workflows.WebhookDeliveryWorkflowID(str(d["eventId"]), id), "webhook_delivery_retried")
	// The dispatcher started that delivery's workflow.
	recordHistory(t, workflows.WebhookDispatcherWorkflowID, "webhook_dispatcher_retry_started")
}

func TestRedeliverAttemptsNow(t *testing.T) {
	ts, _, keys := sandboxAPI(t, apiOptions{})
	var mu sync.Mutex
	failing, hits := true, 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		hits++
		if failing {
			http.Error(w, "down for maintenance", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	base := "/api/v1/projects/" + keys.id + "/webhooks"
	created := post(t, ts.URL, base, keys.key, map[string]any{"url": srv.URL, "enabledEvents": []string{"*"}})
	mustStatus(t, created, http.StatusCreated)
	id := str(created.data()["id"])
	mustStatus(t, post(t, ts.URL, base+"/"+id+"/test", keys.key, map[string]any{}), http.StatusAccepted)
	// Attempts 1 (at once) and 2 (about 5 s later) fail; the next is
	// minutes away.
	var deliveryID string
	testwait.Until(t, 30*time.Second, func() (bool, string) {
		list := get(t, ts.URL, base+"/"+id+"/deliveries", keys.key).list()
		if len(list) == 1 && len(list[0].(map[string]any)["attempts"].([]any)) == 2 {
			deliveryID = str(list[0].(map[string]any)["id"])
			return true, ""
		}
		return false, fmt.Sprintf("deliveries = %v; want one with two failed attempts", list)
	})
	path := base + "/" + id + "/deliveries/" + deliveryID + "/redeliver"

	// Still failing: attempt 3 is made now and fails; the schedule goes on.
	re := post(t, ts.URL, path, keys.key, map[string]any{})
	mustStatus(t, re, http.StatusOK)
	if msg := str(re.Body["message"]); !strings.HasPrefix(msg, "Attempt 3 failed (HTTP 500); the next attempt is at ") ||
		re.data()["status"] != "pending" || len(re.data()["attempts"].([]any)) != 3 {
		t.Fatalf("redelivery to a failing endpoint answered %s", re.Raw)
	}

	// Fixed: attempt 4 is made now and delivers.
	mu.Lock()
	failing = false
	mu.Unlock()
	started := time.Now()
	re = post(t, ts.URL, path, keys.key, map[string]any{})
	mustStatus(t, re, http.StatusOK)
	if msg := str(re.Body["message"]); msg != "Delivered now (attempt 4)" || re.data()["status"] != "delivered" || len(re.data()["attempts"].([]any)) != 4 {
		t.Fatalf("redelivery to the fixed endpoint answered %s", re.Raw)
	}
	if took := time.Since(started); took > 10*time.Second {
		t.Fatalf("the redelivery took %v; want the attempt made at once", took)
	}
	mu.Lock()
	defer mu.Unlock()
	if hits != 4 {
		t.Fatalf("the endpoint was called %d times; want 4", hits)
	}
}

// Many receivers slower than the dispatcher's first-attempt timeout at once
// do not stall the dispatch: their deliveries go to workflows (after a
// timed-out attempt, or without one once the batch's time is up), and every
// one arrives.
func TestSlowReceiversDoNotStallTheDispatcher(t *testing.T) {
	ts, _, p := projectAPI(t, apiOptions{})
	var mu sync.Mutex
	seen := map[string]int{} // webhook-id + endpoint path -> requests
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("webhook-id") + r.URL.Path
		mu.Lock()
		seen[key]++
		first := seen[key] == 1
		mu.Unlock()
		if first {
			// Slower than the dispatcher's 5 s: the first attempt is held
			// until the dispatcher gives up on it (noticed once the body is
			// read).
			_, _ = io.Copy(io.Discard, r.Body)
			<-r.Context().Done()
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	const endpoints, plans = 8, 8
	for i := range endpoints {
		mustStatus(t, post(t, ts.URL, "/api/v1/projects/"+p.Project.ID+"/webhooks", p.SandboxKey, map[string]any{
			"url": fmt.Sprintf("%s/ep%d", srv.URL, i), "enabledEvents": []string{"payment_plan.created"}}), http.StatusCreated)
	}
	start := time.Now()
	for i := range plans {
		createPlan(t, ts.URL, p, map[string]any{"title": fmt.Sprintf("Slow %d", i), "amountUsd": "3"})
	}
	testwait.Until(t, 60*time.Second, func() (bool, string) {
		var delivered int
		if err := st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM webhook_deliveries
			WHERE project_id = $1 AND status = 'delivered'`, p.Project.ID).Scan(&delivered); err != nil {
			t.Fatal(err)
		}
		return delivered == endpoints*plans, fmt.Sprintf("%d of %d deliveries delivered", delivered, endpoints*plans)
	})
	t.Logf("%d deliveries to slow receivers delivered in %v", endpoints*plans, time.Since(start).Round(time.Millisecond))
}
