package e2e

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/paymentsd/paymentsd/api"
	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service"
	"github.com/paymentsd/paymentsd/workflows"
)

var tokenPattern = regexp.MustCompile(`^[0-9a-f]{64}$`)

func createPlan(t *testing.T, base string, p service.CreatedProject, body map[string]any) string {
	t.Helper()
	r := post(t, base, "/api/v1/projects/"+p.Project.ID+"/payment-plans", p.SandboxKey, body)
	mustStatus(t, r, http.StatusCreated)
	return str(r.data()["id"])
}

func TestCheckoutSessionLifecycle(t *testing.T) {
	ts, _, p := projectAPI(t, apiOptions{})
	planID := createPlan(t, ts.URL, p, map[string]any{"title": "Pro", "amountUsd": "12.345678",
		"acceptedAssetPolicies": []any{
			map[string]any{"policyType": "asset_definition", "assetDefinitionId": "usdt-devnet", "priority": 2},
			map[string]any{"policyType": "asset_definition", "assetDefinitionId": "usdc-devnet", "priority": 1},
		}})

	r := post(t, ts.URL, "/api/v1/checkout/sessions", "", map[string]any{
		"paymentPlanId": planID, "email": "buyer@example.com", "metadata": map[string]any{"orderId": "A-1"}})
	mustStatus(t, r, http.StatusCreated)
	cs := r.data()
	token := str(cs["token"])
	if !tokenPattern.MatchString(token) || len(token) != payment.SessionTokenLength {
		t.Fatalf("token = %q", token)
	}
	if cs["url"] != "https://pay.example.test/checkout/"+token || cs["status"] != "open" || cs["amountUsd"] != "12.345678" ||
		cs["amountPaidUsd"] != "0.00" || cs["projectId"] != p.Project.ID || cs["isLive"] != false || cs["email"] != "buyer@example.com" {
		t.Fatalf("session = %s", r.Raw)
	}
	options := cs["paymentOptions"].([]any)
	if len(options) != 2 {
		t.Fatalf("payment options = %v", options)
	}
	first := options[0].(map[string]any)
	if first["assetDefinitionId"] != "usdc-devnet" || first["amount"] != "12.345678" || first["amountBaseUnits"] != "12345678" {
		t.Fatalf("first option (lowest priority first) = %v", first)
	}
	expires, _ := time.Parse(time.RFC3339Nano, str(cs["expiresAt"]))
	if d := time.Until(expires); d < 29*time.Minute || d > 31*time.Minute {
		t.Fatalf("expiresAt %v is not 30 minutes out", expires)
	}

	// The public lookup by token and the merchant's lookup by ID show the same session.
	byToken := get(t, ts.URL, "/api/v1/checkout/sessions/"+token, "")
	mustStatus(t, byToken, http.StatusOK)
	if byToken.data()["id"] != cs["id"] || byToken.data()["status"] != "open" {
		t.Fatalf("by token = %s", byToken.Raw)
	}
	merchant := get(t, ts.URL, "/api/v1/projects/"+p.Project.ID+"/checkout-sessions/"+str(cs["id"]), p.SandboxKey)
	mustStatus(t, merchant, http.StatusOK)
	if merchant.data()["id"] != cs["id"] || merchant.data()["token"] != nil {
		t.Fatalf("merchant view = %s", merchant.Raw)
	}
	list := get(t, ts.URL, "/api/v1/projects/"+p.Project.ID+"/checkout-sessions?status=open", p.SandboxKey)
	if list.pagination()["total"] != float64(1) {
		t.Fatalf("list = %s", list.Raw)
	}
	if r := get(t, ts.URL, "/api/v1/projects/"+p.Project.ID+"/checkout-sessions/"+str(cs["id"]), p.LiveKey); r.Status != 404 {
		t.Fatalf("live key read a sandbox session: %d", r.Status)
	}

	// Temporal owns the session: its workflow runs under a readable ID,
	// started in the background right after the answer.
	waitStarted(t, str(cs["id"]))
	desc, err := temporal.DescribeWorkflowExecution(context.Background(), workflows.CheckoutSessionWorkflowID(str(cs["id"])), "")
	if err != nil {
		t.Fatal(err)
	}
	if desc.WorkflowExecutionInfo.Status != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		t.Fatalf("workflow status = %v", desc.WorkflowExecutionInfo.Status)
	}

	for _, bad := range []string{strings.Repeat("0", 64), "short", strings.Repeat("Z", 64)} {
		if r := get(t, ts.URL, "/api/v1/checkout/sessions/"+bad, ""); r.Status != 404 || r.errorCode() != "NOT_FOUND" {
			t.Errorf("token %q: %d", bad, r.Status)
		}
	}
}

func TestCheckoutSessionValidation(t *testing.T) {
	ts, _, p := projectAPI(t, apiOptions{})
	fixed := createPlan(t, ts.URL, p, map[string]any{"title": "Fixed", "amountUsd": "10"})
	variable := createPlan(t, ts.URL, p, map[string]any{"title": "Tip", "pricingModel": "variable_usd", "minAmountUsd": "1", "maxAmountUsd": "100"})
	expiring := createPlan(t, ts.URL, p, map[string]any{"title": "Soon", "amountUsd": "10", "expiresAt": time.Now().Add(1500 * time.Millisecond).UTC().Format(time.RFC3339Nano)})
	bigMeta := map[string]any{}
	for i := range 51 {
		bigMeta[strings.Repeat("k", 1+i%30)+string(rune('a'+i%26))+string(rune('a'+i/26))] = "v"
	}
	cases := []struct {
		name   string
		body   map[string]any
		fields []string
	}{
		{"no plan", map[string]any{}, []string{"paymentPlanId"}},
		{"malformed plan id", map[string]any{"paymentPlanId": "nope"}, []string{"paymentPlanId"}},
		{"unknown plan", map[string]any{"paymentPlanId": payment.NewID(payment.PrefixPlan, time.Now())}, []string{"paymentPlanId"}},
		{"bad email", map[string]any{"paymentPlanId": fixed, "email": "not-an-email"}, []string{"email"}},
		{"metadata not an object", map[string]any{"paymentPlanId": fixed, "metadata": []any{1}}, []string{"metadata"}},
		{"metadata too deep", map[string]any{"paymentPlanId": fixed, "metadata": map[string]any{"a": map[string]any{"b": map[string]any{"c": map[string]any{"d": map[string]any{"e": map[string]any{}}}}}}}, []string{"metadata.a.b.c.d.e"}},
		{"metadata too large", map[string]any{"paymentPlanId": fixed, "metadata": map[string]any{"a": bigList(40), "b": bigList(40)}}, []string{"metadata"}},
		{"nested metadata value too long", map[string]any{"paymentPlanId": fixed, "metadata": map[string]any{"a": []any{1, strings.Repeat("x", 501)}}}, []string{"metadata.a[1]"}},
		{"metadata value too long", map[string]any{"paymentPlanId": fixed, "metadata": map[string]any{"n": strings.Repeat("x", 501)}}, []string{"metadata.n"}},
		{"metadata key too long", map[string]any{"paymentPlanId": fixed, "metadata": map[string]any{strings.Repeat("k", 41): "v"}}, []string{"metadata." + strings.Repeat("k", 41)}},
		{"too many metadata keys", map[string]any{"paymentPlanId": fixed, "metadata": bigMeta}, []string{"metadata"}},
		{"amount on a fixed plan", map[string]any{"paymentPlanId": fixed, "amountUsd": "5"}, []string{"amountUsd"}},
		{"variable without amount", map[string]any{"paymentPlanId": variable}, []string{"amountUsd"}},
		{"variable out of range", map[string]any{"paymentPlanId": variable, "amountUsd": "100.01"}, []string{"amountUsd"}},
		{"unknown field", map[string]any{"paymentPlanId": fixed, "coupon": "X"}, []string{"coupon"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := post(t, ts.URL, "/api/v1/checkout/sessions", "", c.body)
			mustStatus(t, r, http.StatusUnprocessableEntity)
			if f := r.detailFields(); strings.Join(f, ",") != strings.Join(c.fields, ",") {
				t.Fatalf("fields = %v, want %v: %s", f, c.fields, r.Raw)
			}
		})
	}
	ok := post(t, ts.URL, "/api/v1/checkout/sessions", "", map[string]any{"paymentPlanId": variable, "amountUsd": "42.5"})
	mustStatus(t, ok, http.StatusCreated)
	if ok.data()["amountUsd"] != "42.50" {
		t.Fatalf("variable amount = %v", ok.data()["amountUsd"])
	}
	testwait.Until(t, 10*time.Second, func() (bool, string) {
		plan := get(t, ts.URL, "/api/v1/projects/"+p.Project.ID+"/payment-plans/"+expiring, p.SandboxKey).data()
		return plan["status"] == "expired", fmt.Sprintf("the plan past its expiresAt is %v", plan["status"])
	})
	r := post(t, ts.URL, "/api/v1/checkout/sessions", "", map[string]any{"paymentPlanId": expiring})
	if r.Status != 422 || r.detailFields()[0] != "paymentPlanId" {
		t.Fatalf("expired plan: %s", r.Raw)
	}
	if plan := get(t, ts.URL, "/api/v1/projects/"+p.Project.ID+"/payment-plans/"+expiring, p.SandboxKey); plan.data()["status"] != "expired" {
		t.Fatalf("plan status = %v", plan.data()["status"])
	}
}

// A session expires at expiresAt: its workflow's durable timer fires and
// records it.
func TestCheckoutSessionExpires(t *testing.T) {
	ts, _, p := projectAPI(t, apiOptions{lifetime: 2 * time.Second})
	planID := createPlan(t, ts.URL, p, map[string]any{"title": "Quick", "amountUsd": "1"})
	r := post(t, ts.URL, "/api/v1/checkout/sessions", "", map[string]any{"paymentPlanId": planID})
	mustStatus(t, r, http.StatusCreated)
	token := str(r.data()["token"])
	testwait.Until(t, 15*time.Second, func() (bool, string) {
		got := get(t, ts.URL, "/api/v1/checkout/sessions/"+token, "")
		return got.data()["status"] == "expired", fmt.Sprintf("session did not expire: %s", got.Raw)
	})
	expired := get(t, ts.URL, "/api/v1/projects/"+p.Project.ID+"/checkout-sessions?status=expired", p.SandboxKey)
	if expired.pagination()["total"] != float64(1) {
		t.Fatalf("expired list = %s", expired.Raw)
	}
}

// Opening a session again (a retry after a lost answer) makes neither a
// second workflow nor a second row.
func TestSessionOpenRetriedIsOneSession(t *testing.T) {
	ts, e, p := projectAPI(t, apiOptions{})
	planID := createPlan(t, ts.URL, p, map[string]any{"title": "Once", "amountUsd": "3"})
	r := post(t, ts.URL, "/api/v1/checkout/sessions", "", map[string]any{"paymentPlanId": planID})
	mustStatus(t, r, http.StatusCreated)
	ctx := context.Background()
	s, err := st.Checkout().SessionByID(ctx, str(r.data()["id"]))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := e.Checkout().OpenSession(ctx, s, "Retry", workflows.SessionSettings{CompleteOn: payment.TxFinalized}); err != nil {
			t.Fatal(err)
		}
	}
	waitStarted(t, s.ID)
	list := get(t, ts.URL, "/api/v1/projects/"+p.Project.ID+"/checkout-sessions", p.SandboxKey)
	if list.pagination()["total"] != float64(1) {
		t.Fatalf("sessions = %s", list.Raw)
	}
	runs, err := temporal.ListWorkflow(ctx, listRequest(workflows.CheckoutSessionWorkflowID(s.ID)))
	if err != nil {
		t.Fatal(err)
	}
	if len(runs.Executions) != 1 {
		t.Fatalf("workflow runs = %d, want 1", len(runs.Executions))
	}
}

// waitStarted waits until a session's workflow runs and its pending start
// is gone.
func waitStarted(t *testing.T, sessionID string) {
	t.Helper()
	ctx := context.Background()
	testwait.Until(t, 30*time.Second, func() (bool, string) {
		pending, err := st.Checkout().PendingSessionStarts(ctx, []string{sessionID})
		if err != nil {
			t.Fatal(err)
		}
		_, err = temporal.DescribeWorkflowExecution(ctx, workflows.CheckoutSessionWorkflowID(sessionID), "")
		return err == nil && len(pending) == 0,
			fmt.Sprintf("session %s: workflow not started (pending starts %d, describe: %v)", sessionID, len(pending), err)
	})
}

// unreachableTemporal is a Temporal client whose every call fails: an API
// process cut off from the cluster.
func unreachableTemporal(t *testing.T) client.Client {
	t.Helper()
	c, err := client.NewLazyClient(client.Options{HostPort: "127.0.0.1:1", Logger: quietLogger{},
		ConnectionOptions: client.ConnectionOptions{GetSystemInfoTimeout: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// An API that cannot reach Temporal still opens sessions: each is recorded
// with its workflow's pending start, readable at once, and a worker's sweep
// starts its workflow.
func TestSessionOpenedWithoutTemporalIsStartedBySweep(t *testing.T) {
	ts, _, p := projectAPI(t, apiOptions{temporal: unreachableTemporal(t)})
	planID := createPlan(t, ts.URL, p, map[string]any{"title": "Swept", "amountUsd": "4"})
	r := post(t, ts.URL, "/api/v1/checkout/sessions", "", map[string]any{"paymentPlanId": planID})
	mustStatus(t, r, http.StatusCreated)
	id := str(r.data()["id"])
	got := get(t, ts.URL, "/api/v1/checkout/sessions/"+str(r.data()["token"]), "")
	mustStatus(t, got, http.StatusOK)
	if got.data()["status"] != "open" {
		t.Fatalf("session = %s", got.Raw)
	}
	pending, err := st.Checkout().PendingSessionStarts(context.Background(), []string{id})
	if err != nil || len(pending) != 1 {
		t.Fatalf("pending starts = %v, %v; want the session's", pending, err)
	}
	started := time.Now()
	waitStarted(t, id)
	t.Logf("started by a sweep %s after the API answered", time.Since(started).Round(time.Millisecond))
}

// A payment to a session whose workflow's start is still pending (its API
// process died, no sweep has come yet) starts the workflow by the scan's
// signal-with-start, which hands it the payment: the session is paid,
// once, and its pending start is done.
func TestPaymentToASessionNotStartedYet(t *testing.T) {
	ts, _, keys := sandboxAPI(t, apiOptions{temporal: unreachableTemporal(t)})
	cs := openSession(t, ts.URL, keys, "7.25", "usdc-devnet")
	ctx := context.Background()
	// No sweep takes it for an hour.
	if _, err := st.Pool().Exec(ctx, `UPDATE session_starts SET due_at = now() + interval '1 hour' WHERE session_id = $1`,
		cs["id"]); err != nil {
		t.Fatal(err)
	}
	payToken(t, 0, str(cs["depositAddress"]), units("7250000"))
	done := waitSession(t, ts.URL, str(cs["token"]), "completed", func(s map[string]any) bool { return s["status"] == "completed" })
	if done["amountPaidUsd"] != "7.25" || done["exception"] != nil || len(done["transactions"].([]any)) != 1 {
		t.Fatalf("session = %v", done)
	}
	waitStarted(t, str(cs["id"]))
}

// A session whose workflow has ended is never run again by a late
// transfer, even with its pending start still recorded (a start whose
// deletion was lost): the scan's signal-with-start is refused, the pending
// start is done, and the transaction's workflow records the transfer as
// unexpected.
func TestALateTransferDoesNotRestartAnEndedSession(t *testing.T) {
	ts, _, keys := sandboxAPI(t, apiOptions{temporal: unreachableTemporal(t), lifetime: 2 * time.Second})
	shortLateWindow(t, keys.id)
	cs := openSession(t, ts.URL, keys, "3", "usdc-devnet")
	id := str(cs["id"])
	ctx := context.Background()
	var title, input string
	var created time.Time
	if err := st.Pool().QueryRow(ctx, `SELECT plan_title, input::text, created_at FROM session_starts WHERE session_id = $1`, id).
		Scan(&title, &input, &created); err != nil {
		t.Fatal(err)
	}
	waitWorkflowEnded(t, id) // started by a sweep, then expired past its late window
	if _, err := st.Pool().Exec(ctx, `INSERT INTO session_starts (session_id, plan_title, input, created_at, due_at)
		VALUES ($1, $2, $3, $4, now() + interval '1 hour')`, id, title, input, created); err != nil {
		t.Fatal(err)
	}
	hash := payToken(t, 1, str(cs["depositAddress"]), units("3000000"))
	tx := waitTx(t, ts.URL, keys, hash, "finalized")
	if tx["unexpected"] != true || tx["checkoutSessionId"] != id {
		t.Fatalf("the late transfer to the ended session = %v", tx)
	}
	runs, err := temporal.ListWorkflow(ctx, listRequest(workflows.CheckoutSessionWorkflowID(id)))
	if err != nil {
		t.Fatal(err)
	}
	if len(runs.Executions) != 1 {
		t.Fatalf("the ended session's workflow ran %d times, want once", len(runs.Executions))
	}
	if pending, err := st.Checkout().PendingSessionStarts(ctx, []string{id}); err != nil || len(pending) != 0 {
		t.Fatalf("pending starts = %v, %v; want none", pending, err)
	}
	if s := get(t, ts.URL, "/api/v1/checkout/sessions/"+str(cs["token"]), "").data(); s["status"] != "expired" || s["amountPaidUsd"] != "0.00" {
		t.Fatalf("the ended session counted the late transfer: %v", s)
	}
}

// A merchant cancels a session whose workflow's start is still pending:
// the workflow is started first and takes the cancel.
func TestCancelASessionNotStartedYet(t *testing.T) {
	down, e := newAPI(t, apiOptions{temporal: unreachableTemporal(t)})
	p := newProject(t, e)
	planID := createPlan(t, down.URL, p, map[string]any{"title": "Canceled early", "amountUsd": "2"})
	r := post(t, down.URL, "/api/v1/checkout/sessions", "", map[string]any{"paymentPlanId": planID})
	mustStatus(t, r, http.StatusCreated)
	id := str(r.data()["id"])
	ctx := context.Background()
	if _, err := st.Pool().Exec(ctx, `UPDATE session_starts SET due_at = now() + interval '1 hour' WHERE session_id = $1`, id); err != nil {
		t.Fatal(err)
	}
	ts, _ := newAPI(t, apiOptions{})
	c := do(t, ts.URL, request{method: "POST", path: "/api/v1/projects/" + p.Project.ID + "/checkout-sessions/" + id + "/cancel",
		key: p.SandboxKey})
	mustStatus(t, c, http.StatusOK)
	if c.data()["status"] != "canceled" {
		t.Fatalf("canceled = %s", c.Raw)
	}
	waitStarted(t, id)
}

func TestRateLimit(t *testing.T) {
	ts, e, p := projectAPI(t, apiOptions{limits: map[api.Tier]uint64{api.Strict: 2, api.Relaxed: 3, api.SemiRelaxed: 100, api.Standard: 100, api.Moderate: 100}})
	planID := createPlan(t, ts.URL, p, map[string]any{"title": "Limited", "amountUsd": "1"})
	for i := range 2 {
		r := post(t, ts.URL, "/api/v1/checkout/sessions", "", map[string]any{"paymentPlanId": planID})
		mustStatus(t, r, http.StatusCreated)
		if r.Header.Get("RateLimit-Limit") != "2" || r.Header.Get("RateLimit-Remaining") != string(rune('1'-i)) || r.Header.Get("X-RateLimit-Limit") != "2" {
			t.Fatalf("headers = %v", r.Header)
		}
	}
	r := post(t, ts.URL, "/api/v1/checkout/sessions", "", map[string]any{"paymentPlanId": planID})
	mustStatus(t, r, http.StatusTooManyRequests)
	if r.errorCode() != "RATE_LIMITED" || !regexp.MustCompile(`^[1-9][0-9]*$`).MatchString(r.Header.Get("Retry-After")) {
		t.Fatalf("429 = %s, Retry-After %q", r.Raw, r.Header.Get("Retry-After"))
	}
	// Limits count per API key: one key's exhaustion leaves another's alone.
	other := newProject(t, e)
	for range 3 {
		mustStatus(t, get(t, ts.URL, "/api/v1/projects/"+p.Project.ID+"/payment-plans", p.SandboxKey), 200)
	}
	mustStatus(t, get(t, ts.URL, "/api/v1/projects/"+p.Project.ID+"/payment-plans", p.SandboxKey), 429)
	mustStatus(t, get(t, ts.URL, "/api/v1/projects/"+other.Project.ID+"/payment-plans", other.SandboxKey), 200)
}

func TestIdempotencyKey(t *testing.T) {
	ts, _, keys := sandboxAPI(t, apiOptions{})
	path := "/api/v1/projects/" + keys.id + "/payment-plans"
	body := map[string]any{"title": "Once", "amountUsd": "7"}
	hdr := map[string]string{"Idempotency-Key": "order-42"}
	first := do(t, ts.URL, request{method: "POST", path: path, key: keys.key, body: body, headers: hdr})
	mustStatus(t, first, 201)
	again := do(t, ts.URL, request{method: "POST", path: path, key: keys.key, body: body, headers: hdr})
	mustStatus(t, again, 201)
	if again.data()["id"] != first.data()["id"] || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay = %s", again.Raw)
	}
	conflict := do(t, ts.URL, request{method: "POST", path: path, key: keys.key, body: map[string]any{"title": "Other", "amountUsd": "7"}, headers: hdr})
	mustStatus(t, conflict, 409)
	if conflict.errorCode() != "CONFLICT" {
		t.Fatalf("conflict = %s", conflict.Raw)
	}
	list := get(t, ts.URL, path, keys.key)
	if list.pagination()["total"] != float64(1) {
		t.Fatalf("plans = %s", list.Raw)
	}
	// A validation failure is replayed as well: the key is spent on it.
	bad := map[string]string{"Idempotency-Key": "bad-1"}
	mustStatus(t, do(t, ts.URL, request{method: "POST", path: path, key: keys.key, body: map[string]any{}, headers: bad}), 422)
	mustStatus(t, do(t, ts.URL, request{method: "POST", path: path, key: keys.key, body: map[string]any{}, headers: bad}), 422)

	// Public session creation: the same key returns the same session.
	planID := str(first.data()["id"])
	s1 := do(t, ts.URL, request{method: "POST", path: "/api/v1/checkout/sessions", body: map[string]any{"paymentPlanId": planID}, headers: map[string]string{"Idempotency-Key": "cs-" + planID}})
	s2 := do(t, ts.URL, request{method: "POST", path: "/api/v1/checkout/sessions", body: map[string]any{"paymentPlanId": planID}, headers: map[string]string{"Idempotency-Key": "cs-" + planID}})
	mustStatus(t, s1, 201)
	if s1.data()["id"] != s2.data()["id"] || s1.data()["token"] != s2.data()["token"] {
		t.Fatalf("session replay differs: %s vs %s", s1.Raw, s2.Raw)
	}
}
