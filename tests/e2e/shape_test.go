package e2e

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/activities"
	"github.com/paymentsd/paymentsd/api"
	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
	"github.com/paymentsd/paymentsd/payment/views"
	"github.com/paymentsd/paymentsd/webhook"
	"github.com/paymentsd/paymentsd/workflows"
)

// The REST contract in both shapes (spec section 9), one table: each case
// runs against a first-shape and a second-shape deployment of the same
// engine and database, over one project with a finalized payment, and
// says what each shape answers. Cases: transaction statuses and filters,
// a session read by its ID, the session token as a bearer token, and
// login's answer.
func TestTheRESTContractInBothShapes(t *testing.T) {
	first, _ := newAPI(t, apiOptions{})
	second, _ := newAPI(t, apiOptions{shape: api.ShapeSecond})
	base := first.URL
	owner, keys := ownedProject(t, base, "Two shapes")
	_, other := ownedProject(t, base, "Another shop")
	stranger := signup(t, base)
	// A merchant's webhook endpoint, a real receiver: the shared worker
	// delivers in the first shape.
	rcv := newReceiver(t)
	hook := post(t, base, "/api/v1/projects/"+keys.id+"/webhooks", keys.key, map[string]any{"url": rcv.URL + "/hooks", "enabledEvents": []string{"*"}})
	mustStatus(t, hook, http.StatusCreated)
	rcv.setSecrets(str(hook.data()["secret"]))
	cs := openSession(t, base, keys, "3.00", "usdc-devnet")
	tx := waitTx(t, base, keys, payToken(t, 0, str(cs["depositAddress"]), units("3000000")), "finalized")
	waitSession(t, base, str(cs["token"]), "completed", func(s map[string]any) bool { return s["status"] == "completed" })
	checkShapedWebhooks(t, base, keys, str(hook.data()["id"]), rcv, str(tx["id"]))

	// Session tokens of the owner and a stranger, as a non-browser
	// client gets them from login.
	bearerOf := func(a account) string {
		r := do(t, second.URL, request{method: http.MethodPost, path: "/api/v1/auth/login",
			body: map[string]any{"email": a.email, "password": a.password}})
		mustStatus(t, r, http.StatusOK)
		token := str(r.data()["token"])
		if !strings.HasPrefix(token, "svc_st_") || r.data()["user"].(map[string]any)["email"] != a.email {
			t.Fatalf("second-shape login: %s", r.Raw)
		}
		return token
	}
	ownerToken, strangerToken := bearerOf(owner), bearerOf(stranger)
	if r := do(t, base, request{method: http.MethodPost, path: "/api/v1/auth/login",
		body: map[string]any{"email": owner.email, "password": owner.password}}); r.data()["token"] != nil || r.data()["email"] != owner.email {
		t.Errorf("first-shape login answers the user only: %s", r.Raw)
	}

	txs := "/api/v1/projects/" + keys.id + "/transactions"
	type want struct {
		status int
		check  func(response) string // "" when the answer is right
	}
	firstStatus := func(w string) func(response) string {
		return func(r response) string {
			for _, it := range r.list() {
				if got := it.(map[string]any)["status"]; got != w {
					return "status " + str(got) + ", want " + w
				}
			}
			if len(r.list()) == 0 {
				return "no transaction listed"
			}
			return ""
		}
	}
	names := func(field string) func(response) string {
		return func(r response) string {
			if !slices.Contains(r.detailFields(), field) {
				return "details do not name " + field
			}
			return ""
		}
	}
	// history: a transaction's statusHistory, as the shape names it.
	history := func(w ...string) func(map[string]any) string {
		return func(tx map[string]any) string {
			h, _ := tx["statusHistory"].([]any)
			var got []string
			for _, e := range h {
				got = append(got, str(e.(map[string]any)["status"]))
				if str(e.(map[string]any)["at"]) == "" {
					return "a statusHistory entry without its time"
				}
			}
			if !slices.Equal(got, w) {
				return "statusHistory " + strings.Join(got, ", ") + ", want " + strings.Join(w, ", ")
			}
			return ""
		}
	}
	firstHistory, secondHistory := history("pending", "confirmed", "finalized"), history("pending", "completed")
	if !slices.Contains([]string{"pending", ""}, str(tx["statusHistory"].([]any)[0].(map[string]any)["status"])) {
		firstHistory = history("confirmed", "finalized") // first seen confirmed
		secondHistory = history("completed")
	}
	txIs := func(status string, h func(map[string]any) string) func(response) string {
		return func(r response) string {
			if r.data()["status"] != status {
				return "status " + str(r.data()["status"]) + ", want " + status
			}
			return h(r.data())
		}
	}
	// eventStatuses: the finalized transaction's event names its status,
	// and its status history, as the shape does.
	eventStatuses := func(w string, h func(map[string]any) string) func(response) string {
		return func(r response) string {
			seen := 0
			for _, it := range r.list() {
				ev := it.(map[string]any)
				data := ev["data"].(map[string]any)
				switch ev["type"] {
				case "transaction.finalized":
					seen++
					if data["status"] != w {
						return "transaction.finalized data.status " + str(data["status"])
					}
					if msg := h(data); msg != "" {
						return "transaction.finalized data: " + msg
					}
				}
			}
			if seen != 1 {
				return "no transaction.finalized event listed"
			}
			return ""
		}
	}
	apiShape := func(w string) func(response) string {
		return func(r response) string {
			if r.data()["apiShape"] != w {
				return "apiShape " + str(r.data()["apiShape"])
			}
			return ""
		}
	}
	isSession := func(r response) string {
		if r.data()["id"] != cs["id"] || r.data()["status"] != "completed" {
			return "not the session"
		}
		for _, tx := range r.data()["transactions"].([]any) {
			if st := tx.(map[string]any)["status"]; st != "completed" {
				return "its transaction is " + str(st) + ", want completed"
			}
		}
		return ""
	}
	cases := []struct {
		name          string
		req           request
		first, second want
	}{
		{"list", request{method: "GET", path: txs, key: keys.key},
			want{200, firstStatus("finalized")}, want{200, firstStatus("completed")}},
		{"status=finalized", request{method: "GET", path: txs + "?status=finalized", key: keys.key},
			want{200, firstStatus("finalized")}, want{422, names("status")}},
		{"status=completed", request{method: "GET", path: txs + "?status=completed", key: keys.key},
			want{422, names("status")}, want{200, firstStatus("completed")}},
		{"status=pending", request{method: "GET", path: txs + "?status=pending", key: keys.key},
			want{200, nil}, want{200, nil}},
		{"network=devnet", request{method: "GET", path: txs + "?network=devnet&status=failed", key: keys.key},
			want{200, nil}, want{200, nil}},
		{"from", request{method: "GET", path: txs + "?from=2026-01-01", key: keys.key},
			want{200, firstStatus("finalized")}, want{422, names("from")}},
		{"to", request{method: "GET", path: txs + "?to=2099-01-01", key: keys.key},
			want{200, nil}, want{422, names("to")}},
		{"isLive", request{method: "GET", path: txs + "?isLive=false", key: keys.key},
			want{200, nil}, want{422, names("isLive")}},
		{"one transaction", request{method: "GET", path: txs + "/" + str(tx["id"]), key: keys.key},
			want{200, txIs("finalized", firstHistory)}, want{200, txIs("completed", secondHistory)}},
		{"session by ID, API key", request{method: "GET", path: "/api/v1/checkout/sessions/" + str(cs["id"]), headers: map[string]string{"X-API-Key": keys.key}},
			want{404, nil}, want{200, isSession}},
		{"session by ID, session token", request{method: "GET", path: "/api/v1/checkout/sessions/" + str(cs["id"]), key: ownerToken},
			want{404, nil}, want{200, isSession}},
		{"session by ID, no credentials", request{method: "GET", path: "/api/v1/checkout/sessions/" + str(cs["id"])},
			want{404, nil}, want{401, nil}},
		{"session by ID, another project's key", request{method: "GET", path: "/api/v1/checkout/sessions/" + str(cs["id"]), key: other.key},
			want{404, nil}, want{404, nil}},
		{"session by ID, a non-member's session token", request{method: "GET", path: "/api/v1/checkout/sessions/" + str(cs["id"]), key: strangerToken},
			want{404, nil}, want{404, nil}},
		{"session by token", request{method: "GET", path: "/api/v1/checkout/sessions/" + str(cs["token"])},
			want{200, nil}, want{200, nil}},
		{"events", request{method: "GET", path: "/api/v1/projects/" + keys.id + "/events?limit=100", key: keys.key},
			want{200, eventStatuses("finalized", firstHistory)}, want{200, eventStatuses("completed", secondHistory)}},
		{"me", request{method: "GET", path: "/api/v1/auth/me", headers: map[string]string{"Cookie": api.SessionCookie + "=" + owner.cookie}},
			want{200, apiShape("first")}, want{200, apiShape("second")}},
		{"plans with a session token", request{method: "GET", path: "/api/v1/projects/" + keys.id + "/payment-plans", key: ownerToken},
			want{401, nil}, want{200, nil}},
		{"plans with X-API-Key", request{method: "GET", path: "/api/v1/projects/" + keys.id + "/payment-plans", headers: map[string]string{"X-API-Key": keys.key}},
			want{200, nil}, want{200, nil}},
	}
	// The CSV export's status column, in each shape.
	for shape, want := range map[string]string{first.URL: "finalized", second.URL: "completed"} {
		_, rows := csvExport(t, shape, txs, keys.key)
		if len(rows) != 2 || column(rows, 1, "status") != want {
			t.Errorf("CSV export from %s: %v; want one row, status %s", shape, rows, want)
		}
	}
	_, rows := csvExport(t, second.URL, txs+"?status=completed", keys.key)
	if len(rows) != 2 {
		t.Errorf("CSV export of the completed transactions: %v", rows)
	}
	for _, c := range cases {
		for _, shape := range []struct {
			name string
			url  string
			want want
		}{{"first", first.URL, c.first}, {"second", second.URL, c.second}} {
			r := do(t, shape.url, c.req)
			if r.Status != shape.want.status {
				t.Errorf("%s, %s shape: %d %.300s; want %d", c.name, shape.name, r.Status, r.Raw, shape.want.status)
				continue
			}
			if shape.want.check != nil {
				if msg := shape.want.check(r); msg != "" {
					t.Errorf("%s, %s shape: %s: %.300s", c.name, shape.name, msg, r.Raw)
				}
			}
		}
	}
}

// checkShapedWebhooks: the first shape's worker delivered the finalized
// transaction's event with the record's statuses; a second-shape worker's
// delivery of the same event (the activity the worker runs, API_SHAPE=
// second) reaches the same receiver with the second shape's status and
// status history.
func checkShapedWebhooks(t *testing.T, base string, keys projectKeys, hookID string, rcv *receiver, txID string) {
	t.Helper()
	ev := rcv.waitFor(t, "transaction.finalized", txID)
	statuses := func(ev map[string]any) []string {
		var out []string
		for _, e := range ev["data"].(map[string]any)["statusHistory"].([]any) {
			out = append(out, str(e.(map[string]any)["status"]))
		}
		return out
	}
	if got := statuses(ev); ev["data"].(map[string]any)["status"] != "finalized" || !slices.Contains(got, "confirmed") || got[len(got)-1] != "finalized" {
		t.Errorf("first-shape webhook: %v", ev["data"])
	}
	// The event's delivery to the endpoint, listed; a poll that found the
	// key's rate limit spent (the waits above poll) is tried again.
	var deliveryID string
	testwait.Until(t, 90*time.Second, func() (bool, string) {
		r := get(t, base, "/api/v1/projects/"+keys.id+"/events/"+str(ev["id"])+"/deliveries", keys.key)
		for _, d := range r.list() {
			if d.(map[string]any)["webhookId"] == hookID {
				deliveryID = str(d.(map[string]any)["id"])
			}
		}
		return deliveryID != "", fmt.Sprintf("no delivery of the event to the endpoint listed: %d %s", r.Status, r.Raw)
	})
	rcv.mu.Lock()
	before := len(rcv.events)
	rcv.mu.Unlock()
	worker := activities.Activities{Store: st, Chains: chains, Webhooks: activities.Webhooks{Sealer: sealer,
		Client: webhook.NewClient(webhook.ClientOptions{AllowPrivate: true}), Shape: views.ShapeSecond}}
	res, err := worker.DeliverWebhook(context.Background(), workflows.DeliverInput{DeliveryInput: workflows.DeliveryInput{
		DeliveryID: deliveryID, EventID: str(ev["id"]), EndpointID: hookID}, Attempt: 2, At: time.Now()})
	if err != nil || !res.Delivered {
		t.Fatalf("second-shape delivery: %+v %v", res, err)
	}
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	if len(rcv.events) != before+1 || rcv.rejected != 0 {
		t.Fatalf("the receiver got %d events, rejected %d", len(rcv.events)-before, rcv.rejected)
	}
	second := rcv.events[before]
	got := statuses(second)
	if second["id"] != ev["id"] || second["data"].(map[string]any)["status"] != "completed" || got[len(got)-1] != "completed" {
		t.Errorf("second-shape webhook: %v", second["data"])
	}
	for i, status := range got {
		if !slices.Contains([]string{"pending", "completed", "failed"}, status) || i > 0 && got[i-1] == status {
			t.Errorf("second-shape webhook statusHistory %v", got)
		}
	}
}
