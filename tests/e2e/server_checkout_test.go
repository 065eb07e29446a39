package e2e

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"connectrpc.com/connect"

	"github.com/paymentsd/paymentsd/api"
	v1 "github.com/paymentsd/paymentsd/api/gen/paymentsd/v1"
	"github.com/paymentsd/paymentsd/api/gen/paymentsd/v1/paymentsdv1connect"
)

// A merchant's server creates checkout sessions with its API key: counted
// per key in a tier of its own (not the customers' per-IP budget), and only
// for its own project's plans in the key's environment.
func TestServerSideCheckoutCreation(t *testing.T) {
	limits := map[api.Tier]uint64{api.Relaxed: 1000, api.SemiRelaxed: 1000, api.Standard: 1000, api.Moderate: 1000,
		api.Strict: 2, api.StrictAPIKey: 3}
	ts, e := newAPI(t, apiOptions{limits: limits})
	p, other := newProject(t, e), newProject(t, e)
	planID := createPlan(t, ts.URL, p, map[string]any{"title": "Server side", "amountUsd": "9"})
	create := func(key string) response {
		return post(t, ts.URL, "/api/v1/checkout/sessions", key, map[string]any{"paymentPlanId": planID})
	}

	for i := range 3 {
		r := create(p.SandboxKey)
		mustStatus(t, r, http.StatusCreated)
		if r.Header.Get("X-RateLimit-Limit") != "3" || str(r.data()["token"]) == "" || str(r.data()["url"]) == "" {
			t.Fatalf("keyed creation %d: limit %q, %s", i, r.Header.Get("X-RateLimit-Limit"), r.Raw)
		}
	}
	mustStatus(t, create(p.SandboxKey), http.StatusTooManyRequests)
	// The customers' budget is apart: the key spent none of it.
	for range 2 {
		r := create("")
		mustStatus(t, r, http.StatusCreated)
		if r.Header.Get("X-RateLimit-Limit") != "2" {
			t.Fatalf("anonymous creation: limit %q", r.Header.Get("X-RateLimit-Limit"))
		}
	}
	mustStatus(t, create(""), http.StatusTooManyRequests)

	// Another project's key, and the other environment's key, cannot use
	// the plan: the same 422 as an unknown plan.
	for name, key := range map[string]string{"another project's key": other.SandboxKey, "the live key": p.LiveKey} {
		r := create(key)
		mustStatus(t, r, http.StatusUnprocessableEntity)
		if !slices.Contains(r.detailFields(), "paymentPlanId") {
			t.Fatalf("%s: %s", name, r.Raw)
		}
	}
	// A bad key is refused, never taken as anonymous.
	r := create("svc_test_0000000000000000000000000000000000000000")
	mustStatus(t, r, http.StatusUnauthorized)

	// Connect: the same rules.
	cc := paymentsdv1connect.NewCheckoutServiceClient(http.DefaultClient, ts.URL)
	ctx := context.Background()
	otherPlan := createPlan(t, ts.URL, other, map[string]any{"title": "Other's", "amountUsd": "4"})
	res, err := cc.CreateCheckoutSession(ctx, authed(&v1.CreateCheckoutSessionRequest{PaymentPlanId: &otherPlan}, other.SandboxKey))
	if err != nil || res.Msg.CheckoutSession.GetToken() == "" {
		t.Fatalf("Connect keyed creation: %v", err)
	}
	if _, err := cc.CreateCheckoutSession(ctx, authed(&v1.CreateCheckoutSessionRequest{PaymentPlanId: &otherPlan}, other.LiveKey)); connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Fatalf("Connect with the other environment's key: %v; want invalid_argument", err)
	}
	if _, err := cc.CreateCheckoutSession(ctx, authed(&v1.CreateCheckoutSessionRequest{PaymentPlanId: &otherPlan}, "svc_test_nope")); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Fatalf("Connect with a bad key: %v; want unauthenticated", err)
	}
}
