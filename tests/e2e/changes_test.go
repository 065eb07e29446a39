package e2e

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
)

func eventTypes(t *testing.T, objectID string) []string {
	t.Helper()
	rows, err := st.Pool().Query(context.Background(), `SELECT type FROM events WHERE object_id = $1 ORDER BY version`, objectID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		_ = rows.Scan(&s)
		out = append(out, s)
	}
	return out
}

func TestPlanUpdateAndArchive(t *testing.T) {
	ts, _, p := projectAPI(t, apiOptions{})
	base := "/api/v1/projects/" + p.Project.ID + "/payment-plans"
	id := createPlan(t, ts.URL, p, map[string]any{"title": "Old", "amountUsd": "5"})
	upd := do(t, ts.URL, request{method: "PATCH", path: base + "/" + id, key: p.SandboxKey,
		body: map[string]any{"title": "New", "redirectUrl": "https://shop.example/done"}})
	mustStatus(t, upd, http.StatusOK)
	if upd.data()["title"] != "New" || upd.data()["amountUsd"] != "5.00" {
		t.Fatalf("updated = %s", upd.Raw)
	}
	refused := do(t, ts.URL, request{method: "PATCH", path: base + "/" + id, key: p.SandboxKey, body: map[string]any{"amountUsd": "1"}})
	if refused.Status != 422 || refused.detailFields()[0] != "amountUsd" {
		t.Fatalf("price change = %s", refused.Raw)
	}
	arch := do(t, ts.URL, request{method: "POST", path: base + "/" + id + "/archive", key: p.SandboxKey})
	mustStatus(t, arch, http.StatusOK)
	if arch.data()["status"] != "archived" {
		t.Fatalf("archived = %s", arch.Raw)
	}
	if r := post(t, ts.URL, "/api/v1/checkout/sessions", "", map[string]any{"paymentPlanId": id}); r.Status != 422 {
		t.Fatalf("an archived plan opened a session: %s", r.Raw)
	}
	if got := strings.Join(eventTypes(t, id), ","); got != "payment_plan.created,payment_plan.updated,payment_plan.archived" {
		t.Fatalf("plan events = %s", got)
	}
}

// An update is checked as creation is, field by field: what creation
// refuses, an update refuses with the same details, and the plan is left
// as it was.
func TestPlanUpdateIsValidatedAsCreation(t *testing.T) {
	ts, _, p := projectAPI(t, apiOptions{})
	base := "/api/v1/projects/" + p.Project.ID + "/payment-plans"
	id := createPlan(t, ts.URL, p, map[string]any{"title": "Kept", "amountUsd": "5",
		"merchantInfo": map[string]any{"name": "Shop", "website": "https://shop.example"}})
	cases := []struct {
		name   string
		body   map[string]any
		fields []string
	}{
		{"javascript website", map[string]any{"merchantInfo": map[string]any{"website": "javascript:alert(document.cookie)"}}, []string{"merchantInfo.website"}},
		{"data website", map[string]any{"merchantInfo": map[string]any{"website": "data:text/html,<script>alert(1)</script>"}}, []string{"merchantInfo.website"}},
		{"long merchant name", map[string]any{"merchantInfo": map[string]any{"name": strings.Repeat("n", 201)}}, []string{"merchantInfo.name"}},
		{"bad email and logo", map[string]any{"merchantInfo": map[string]any{"email": "nope", "logoUrl": "http://x.example/l.png"}}, []string{"merchantInfo.email", "merchantInfo.logoUrl"}},
		{"unknown merchant field", map[string]any{"merchantInfo": map[string]any{"phone": "1"}}, []string{"merchantInfo.phone"}},
		{"javascript redirect", map[string]any{"redirectUrl": "javascript:alert(1)"}, []string{"redirectUrl"}},
		{"blank title", map[string]any{"title": " "}, []string{"title"}},
		{"past expiry", map[string]any{"expiresAt": "2001-01-01T00:00:00Z"}, []string{"expiresAt"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			create := map[string]any{"title": "New", "amountUsd": "5"}
			for k, v := range c.body {
				create[k] = v
			}
			created := post(t, ts.URL, base, p.SandboxKey, create)
			updated := do(t, ts.URL, request{method: "PATCH", path: base + "/" + id, key: p.SandboxKey, body: c.body})
			for what, r := range map[string]response{"create": created, "update": updated} {
				if r.Status != http.StatusUnprocessableEntity || strings.Join(r.detailFields(), ",") != strings.Join(c.fields, ",") {
					t.Errorf("%s: %d %s, want 422 on %v", what, r.Status, r.Raw, c.fields)
				}
			}
			if !reflect.DeepEqual(created.Body["error"], updated.Body["error"]) {
				t.Errorf("create and update refuse differently:\n%s\n%s", created.Raw, updated.Raw)
			}
		})
	}
	got := get(t, ts.URL, base+"/"+id, p.SandboxKey).data()
	if got["title"] != "Kept" || got["merchantInfo"].(map[string]any)["website"] != "https://shop.example" {
		t.Fatalf("a refused update changed the plan: %v", got)
	}
}

func TestCancelOpenSession(t *testing.T) {
	ts, _, keys := sandboxAPI(t, apiOptions{})
	cs := openSession(t, ts.URL, keys, "3", "usdc-devnet")
	path := "/api/v1/projects/" + keys.id + "/checkout-sessions/" + str(cs["id"]) + "/cancel"
	r := do(t, ts.URL, request{method: "POST", path: path, key: keys.key})
	mustStatus(t, r, http.StatusOK)
	if r.data()["status"] != "canceled" {
		t.Fatalf("canceled = %s", r.Raw)
	}
	again := do(t, ts.URL, request{method: "POST", path: path, key: keys.key})
	if again.Status != http.StatusConflict {
		t.Fatalf("second cancel = %s", again.Raw)
	}
	testwait.Until(t, 10*time.Second, func() (bool, string) {
		types := eventTypes(t, str(cs["id"]))
		return strings.Join(types, ",") == "checkout.session.created,checkout.session.canceled", fmt.Sprintf("session events = %v", types)
	})
}
