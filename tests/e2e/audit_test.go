package e2e

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// Every management change through the API is in the project's audit log:
// who (the API key), from where (address and user agent), what (the action
// and its target); never a secret; readable by the project's key of that
// environment only.
func TestAuditLogRecordsManagementChanges(t *testing.T) {
	ts, e := newAPI(t, apiOptions{})
	p, other := newProject(t, e), newProject(t, e)
	key, err := e.Checkout().Authenticate(context.Background(), p.SandboxKey)
	if err != nil {
		t.Fatal(err)
	}
	ua := map[string]string{"User-Agent": "shop-admin/1.0"}
	call := func(method, path string, body any) response {
		return do(t, ts.URL, request{method: method, path: path, key: p.SandboxKey, body: body, headers: ua})
	}
	base := "/api/v1/projects/" + p.Project.ID
	plan := call("POST", base+"/payment-plans", map[string]any{"title": "Audited", "amountUsd": "5"})
	mustStatus(t, plan, http.StatusCreated)
	planID := str(plan.data()["id"])
	mustStatus(t, call("PATCH", base+"/payment-plans/"+planID, map[string]any{"title": "Audited twice"}), http.StatusOK)
	session := post(t, ts.URL, "/api/v1/checkout/sessions", "", map[string]any{"paymentPlanId": planID})
	mustStatus(t, session, http.StatusCreated)
	mustStatus(t, call("POST", base+"/checkout-sessions/"+str(session.data()["id"])+"/cancel", map[string]any{}), http.StatusOK)
	mustStatus(t, call("POST", base+"/payment-plans/"+planID+"/archive", map[string]any{}), http.StatusOK)
	rcv := newReceiver(t)
	hook := call("POST", base+"/webhooks", map[string]any{"url": rcv.URL, "enabledEvents": []string{"*"}})
	mustStatus(t, hook, http.StatusCreated)
	hookID := str(hook.data()["id"])
	mustStatus(t, call("PATCH", base+"/webhooks/"+hookID, map[string]any{"description": "orders"}), http.StatusOK)
	rotated := call("POST", base+"/webhooks/"+hookID+"/rotate-secret", map[string]any{})
	mustStatus(t, rotated, http.StatusOK)
	mustStatus(t, call("DELETE", base+"/webhooks/"+hookID, nil), http.StatusOK)

	log := get(t, ts.URL, base+"/audit-log?limit=100", p.SandboxKey)
	mustStatus(t, log, http.StatusOK)
	want := []string{"webhook_endpoint.deleted", "webhook_endpoint.secret_rotated", "webhook_endpoint.updated", "webhook_endpoint.created",
		"payment_plan.archived", "checkout_session.canceled", "payment_plan.updated", "payment_plan.created", "deposit_key.set"}
	var got []string
	for _, item := range log.list() {
		a := item.(map[string]any)
		got = append(got, str(a["action"]))
		if a["action"] == "deposit_key.set" {
			continue // made by the test's set-up, not through the API
		}
		actor, target := a["actor"].(map[string]any), a["target"].(map[string]any)
		if actor["type"] != "api_key" || actor["id"] != key.KeyID || actor["ip"] != "127.0.0.1" || actor["userAgent"] != "shop-admin/1.0" ||
			str(target["id"]) == "" || a["isLive"] != false || str(a["occurredAt"]) == "" {
			t.Fatalf("entry = %v", a)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("actions, newest first = %v; want %v", got, want)
	}
	for _, secret := range []string{str(hook.data()["secret"]), str(rotated.data()["secret"]), p.SandboxKey} {
		if secret == "" || strings.Contains(string(log.Raw), secret) {
			t.Fatalf("the audit log holds a secret (%q): %s", secret, log.Raw)
		}
	}
	archived := get(t, ts.URL, base+"/audit-log?action=payment_plan.archived", p.SandboxKey)
	if len(archived.list()) != 1 || archived.list()[0].(map[string]any)["target"].(map[string]any)["id"] != planID {
		t.Fatalf("filtered by action = %s", archived.Raw)
	}
	mustStatus(t, get(t, ts.URL, base+"/audit-log?action=plan.deleted", p.SandboxKey), http.StatusUnprocessableEntity)
	mustStatus(t, get(t, ts.URL, base+"/audit-log", other.SandboxKey), http.StatusNotFound)
	mustStatus(t, get(t, ts.URL, base+"/audit-log", ""), http.StatusUnauthorized)
	live := get(t, ts.URL, base+"/audit-log", p.LiveKey)
	if mustStatus(t, live, http.StatusOK); len(live.list()) != 1 || live.list()[0].(map[string]any)["action"] != "deposit_key.set" {
		t.Fatalf("the live key's log = %s; want only the live deposit key", live.Raw)
	}
}
