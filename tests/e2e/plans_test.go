package e2e

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestPaymentPlanCreateGetList(t *testing.T) {
	ts, _, keys := sandboxAPI(t, apiOptions{})
	base := "/api/v1/projects/" + keys.id + "/payment-plans"

	r := post(t, ts.URL, base, keys.key, map[string]any{
		"title": "Pro plan", "pricingModel": "fixed_usd", "amountUsd": "49.90",
		"acceptedAssetPolicies": []any{map[string]any{"policyType": "asset_definition", "assetDefinitionId": "usdc-devnet", "priority": 1}},
		"redirectUrl":           "https://shop.example/thanks",
		"merchantInfo":          map[string]any{"name": "Example Shop", "email": "billing@shop.example"},
		"expiresAt":             time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339),
	})
	mustStatus(t, r, http.StatusCreated)
	if r.Body["success"] != true || r.Body["statusCode"] != float64(201) || str(r.Body["message"]) == "" {
		t.Fatalf("envelope = %s", r.Raw)
	}
	m := r.meta()
	if m["path"] != base || str(m["requestId"]) == "" || r.Header.Get("X-Request-Id") != m["requestId"] {
		t.Fatalf("meta = %v", m)
	}
	if _, err := time.Parse(time.RFC3339Nano, str(m["timestamp"])); err != nil {
		t.Fatalf("meta.timestamp = %v", m["timestamp"])
	}
	plan := r.data()
	if !strings.HasPrefix(str(plan["id"]), "plan_") || plan["status"] != "active" || plan["isLive"] != false ||
		plan["amountUsd"] != "49.90" || plan["projectId"] != keys.id || plan["title"] != "Pro plan" {
		t.Fatalf("plan = %v", plan)
	}

	got := get(t, ts.URL, base+"/"+str(plan["id"]), keys.key)
	mustStatus(t, got, http.StatusOK)
	if got.data()["id"] != plan["id"] || got.data()["redirectUrl"] != "https://shop.example/thanks" {
		t.Fatalf("get = %s", got.Raw)
	}

	variable := post(t, ts.URL, base, keys.key, map[string]any{"title": "Tip", "pricingModel": "variable_usd", "minAmountUsd": "1", "maxAmountUsd": "500"})
	mustStatus(t, variable, http.StatusCreated)

	list := get(t, ts.URL, base, keys.key)
	mustStatus(t, list, http.StatusOK)
	items := list.list()
	if len(items) != 2 || items[0].(map[string]any)["id"] != variable.data()["id"] {
		t.Fatalf("list (newest first) = %s", list.Raw)
	}
	if pg := list.pagination(); pg["total"] != float64(2) || pg["page"] != float64(1) || pg["limit"] != float64(20) {
		t.Fatalf("pagination = %v", pg)
	}
}

func TestPaymentPlanValidation(t *testing.T) {
	ts, _, keys := sandboxAPI(t, apiOptions{})
	path := "/api/v1/projects/" + keys.id + "/payment-plans"
	cases := []struct {
		name   string
		body   any
		fields []string
	}{
		{"empty object", map[string]any{}, []string{"title", "amountUsd"}},
		{"blank title", map[string]any{"title": "  ", "amountUsd": "5"}, []string{"title"}},
		{"title not a string", map[string]any{"title": 5, "amountUsd": "5"}, []string{"title"}},
		{"amount as number", map[string]any{"title": "A", "amountUsd": 5}, []string{"amountUsd"}},
		{"negative amount", map[string]any{"title": "A", "amountUsd": "-5"}, []string{"amountUsd"}},
		{"too many decimals", map[string]any{"title": "A", "amountUsd": "1.1234567"}, []string{"amountUsd"}},
		{"exponent", map[string]any{"title": "A", "amountUsd": "1e3"}, []string{"amountUsd"}},
		{"zero", map[string]any{"title": "A", "amountUsd": "0"}, []string{"amountUsd"}},
		{"unknown pricing", map[string]any{"title": "A", "pricingModel": "tiered"}, []string{"pricingModel"}},
		{"variable without bounds", map[string]any{"title": "A", "pricingModel": "variable_usd"}, []string{"minAmountUsd", "maxAmountUsd"}},
		{"variable min above max", map[string]any{"title": "A", "pricingModel": "variable_usd", "minAmountUsd": "10", "maxAmountUsd": "5"}, []string{"minAmountUsd"}},
		{"fixed with bounds", map[string]any{"title": "A", "amountUsd": "5", "minAmountUsd": "1"}, []string{"minAmountUsd"}},
		{"unknown field", map[string]any{"title": "A", "amountUsd": "5", "colour": "red"}, []string{"colour"}},
		{"policy without type", map[string]any{"title": "A", "amountUsd": "5", "acceptedAssetPolicies": []any{map[string]any{}}}, []string{"acceptedAssetPolicies[0].policyType"}},
		{"policy without asset", map[string]any{"title": "A", "amountUsd": "5", "acceptedAssetPolicies": []any{map[string]any{"policyType": "any"}, map[string]any{"policyType": "asset_definition"}}}, []string{"acceptedAssetPolicies[1].assetDefinitionId"}},
		{"unknown asset", map[string]any{"title": "A", "amountUsd": "5", "acceptedAssetPolicies": []any{map[string]any{"policyType": "asset_definition", "assetDefinitionId": "doge"}}}, []string{"acceptedAssetPolicies[0].assetDefinitionId"}},
		{"live asset in sandbox", map[string]any{"title": "A", "amountUsd": "5", "acceptedAssetPolicies": []any{map[string]any{"policyType": "asset_definition", "assetDefinitionId": "usdc-base"}}}, []string{"acceptedAssetPolicies[0].assetDefinitionId"}},
		{"bad scopes", map[string]any{"title": "A", "amountUsd": "5", "acceptedAssetPolicies": []any{map[string]any{"policyType": "any", "environmentScope": "prod", "chainScope": []any{"mars"}, "priority": 1.5}}}, []string{"acceptedAssetPolicies[0].environmentScope", "acceptedAssetPolicies[0].chainScope[0]", "acceptedAssetPolicies[0].priority"}},
		{"unknown policy field", map[string]any{"title": "A", "amountUsd": "5", "acceptedAssetPolicies": []any{map[string]any{"policyType": "any", "x": 1}}}, []string{"acceptedAssetPolicies[0].x"}},
		{"policies not an array", map[string]any{"title": "A", "amountUsd": "5", "acceptedAssetPolicies": "any"}, []string{"acceptedAssetPolicies"}},
		{"bad redirect", map[string]any{"title": "A", "amountUsd": "5", "redirectUrl": "javascript:alert(1)"}, []string{"redirectUrl"}},
		{"bad merchant info", map[string]any{"title": "A", "amountUsd": "5", "merchantInfo": map[string]any{"email": "nope", "logoUrl": "http://x.example/l.png", "phone": "1"}}, []string{"merchantInfo.email", "merchantInfo.logoUrl", "merchantInfo.phone"}},
		{"expiry in the past", map[string]any{"title": "A", "amountUsd": "5", "expiresAt": "2001-01-01T00:00:00Z"}, []string{"expiresAt"}},
		{"expiry not a date", map[string]any{"title": "A", "amountUsd": "5", "expiresAt": "tomorrow"}, []string{"expiresAt"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := post(t, ts.URL, path, keys.key, c.body)
			mustStatus(t, r, http.StatusUnprocessableEntity)
			if r.errorCode() != "VALIDATION_ERROR" || r.Body["success"] != false {
				t.Fatalf("error = %s", r.Raw)
			}
			got := r.detailFields()
			slices.Sort(got)
			want := slices.Clone(c.fields)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("detail fields = %v, want %v (%s)", got, want, r.Raw)
			}
		})
	}
	// Nothing was recorded by any refused request.
	list := get(t, ts.URL, path, keys.key)
	if list.pagination()["total"] != float64(0) {
		t.Fatalf("refused plans were recorded: %s", list.Raw)
	}
}

func TestMalformedRequests(t *testing.T) {
	ts, _, keys := sandboxAPI(t, apiOptions{})
	path := "/api/v1/projects/" + keys.id + "/payment-plans"
	cases := []struct {
		name   string
		req    request
		status int
		code   string
	}{
		{"broken JSON", request{method: "POST", path: path, body: `{"title": `}, 400, "BAD_REQUEST"},
		{"array body", request{method: "POST", path: path, body: `[1]`}, 400, "BAD_REQUEST"},
		{"trailing data", request{method: "POST", path: path, body: `{} {}`}, 400, "BAD_REQUEST"},
		{"empty body", request{method: "POST", path: path, body: ``}, 400, "BAD_REQUEST"},
		{"wrong content type", request{method: "POST", path: path, body: `{}`, headers: map[string]string{"Content-Type": "text/plain"}}, 415, "UNSUPPORTED_MEDIA_TYPE"},
		{"oversized body", request{method: "POST", path: path, body: `{"title":"` + strings.Repeat("x", 2<<20) + `"}`}, 413, "PAYLOAD_TOO_LARGE"},
		{"unknown route", request{method: "GET", path: "/api/v1/nothing-here"}, 404, "NOT_FOUND"},
		{"wrong method", request{method: "DELETE", path: path}, 405, "METHOD_NOT_ALLOWED"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.req.key = keys.key
			r := do(t, ts.URL, c.req)
			mustStatus(t, r, c.status)
			if r.errorCode() != c.code || r.Body["success"] != false || r.meta()["path"] != c.req.path {
				t.Fatalf("body = %s", r.Raw)
			}
		})
	}
	r := do(t, ts.URL, request{method: "DELETE", path: path, key: keys.key})
	if r.Header.Get("Allow") != "GET, POST" {
		t.Fatalf("Allow = %q", r.Header.Get("Allow"))
	}
}

func TestAuthAndIsolation(t *testing.T) {
	ts, e := newAPI(t, apiOptions{})
	a, b := newProject(t, e), newProject(t, e)
	plans := func(p string) string { return "/api/v1/projects/" + p + "/payment-plans" }
	created := post(t, ts.URL, plans(a.Project.ID), a.SandboxKey, map[string]any{"title": "A", "amountUsd": "5"})
	mustStatus(t, created, 201)
	planPath := plans(a.Project.ID) + "/" + str(created.data()["id"])

	for name, key := range map[string]string{"no key": "", "unknown key": "svc_test_nope", "not a key": "abc", "revoked prefix": "svc_at_token"} {
		r := get(t, ts.URL, planPath, key)
		if r.Status != 401 || r.errorCode() != "UNAUTHENTICATED" {
			t.Errorf("%s: %d %s", name, r.Status, r.Raw)
		}
	}
	r := do(t, ts.URL, request{method: "GET", path: planPath, headers: map[string]string{"X-API-Key": a.SandboxKey}})
	mustStatus(t, r, 200)

	// Another project's key sees nothing of project A.
	for _, path := range []string{planPath, plans(a.Project.ID), "/api/v1/projects/" + a.Project.ID} {
		if r := get(t, ts.URL, path, b.SandboxKey); r.Status != 404 || r.errorCode() != "NOT_FOUND" {
			t.Errorf("other project %s: %d %s", path, r.Status, r.Raw)
		}
	}
	// The live key of the same project does not see sandbox records.
	if r := get(t, ts.URL, planPath, a.LiveKey); r.Status != 404 {
		t.Errorf("live key read a sandbox plan: %d", r.Status)
	}
	live := get(t, ts.URL, plans(a.Project.ID), a.LiveKey)
	if live.pagination()["total"] != float64(0) {
		t.Errorf("live list shows sandbox plans: %s", live.Raw)
	}
	proj := get(t, ts.URL, "/api/v1/projects/"+a.Project.ID, a.LiveKey)
	mustStatus(t, proj, 200)
	if proj.data()["id"] != a.Project.ID || proj.data()["completeOn"] != "finalized" {
		t.Errorf("project = %s", proj.Raw)
	}
	assets := get(t, ts.URL, "/api/v1/assets", "")
	mustStatus(t, assets, 200)
	if len(assets.list()) != len(catalog.Assets) {
		t.Errorf("assets = %s", assets.Raw)
	}
}
