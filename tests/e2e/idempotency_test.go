package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// clientFrom is an HTTP client whose connections come from a loopback
// address of its own, as a second customer's browser would.
func clientFrom(t *testing.T, ip string) *http.Client {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
}

func postWith(t *testing.T, c *http.Client, url, idemKey string, body any) (int, map[string]any, http.Header) {
	t.Helper()
	raw, _ := json.Marshal(body)
	r, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(raw))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Idempotency-Key", idemKey)
	res, err := c.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	checkOpenAPI(t, r, raw, res, out)
	var env map[string]any
	if err := json.Unmarshal(out, &env); err != nil {
		t.Fatalf("body is not JSON (%d): %s", res.StatusCode, out)
	}
	data, _ := env["data"].(map[string]any)
	return res.StatusCode, data, res.Header
}

// Two customers behind different addresses who send the same
// Idempotency-Key and body each get a session of their own: the second
// never receives the first one's token.
func TestIdempotencyKeyIsScopedToThePublicCaller(t *testing.T) {
	ts, _, p := projectAPI(t, apiOptions{})
	planID := createPlan(t, ts.URL, p, map[string]any{"title": "Shared key", "amountUsd": "12"})
	url := ts.URL + "/api/v1/checkout/sessions"
	body := map[string]any{"paymentPlanId": planID}
	alice, bob := clientFrom(t, "127.0.0.1"), clientFrom(t, "127.0.0.2")

	code, first, _ := postWith(t, alice, url, "checkout-1", body)
	if code != http.StatusCreated {
		t.Fatalf("first caller: %d %v", code, first)
	}
	code, again, h := postWith(t, alice, url, "checkout-1", body)
	if code != http.StatusCreated || again["token"] != first["token"] || h.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("the first caller's retry = %d %v (replayed %q); want its own session again", code, again, h.Get("Idempotent-Replayed"))
	}
	code, other, h := postWith(t, bob, url, "checkout-1", body)
	if code != http.StatusCreated || h.Get("Idempotent-Replayed") != "" {
		t.Fatalf("second caller: %d %v (replayed %q)", code, other, h.Get("Idempotent-Replayed"))
	}
	if other["token"] == first["token"] || other["id"] == first["id"] {
		t.Fatalf("the second caller got the first caller's session: %v", other)
	}
}

// What an Idempotency-Key keeps for its replay holds no secret in
// plaintext: not a webhook endpoint's signing secret, not a session's
// token, not the key itself; and the replay still returns them to their
// caller.
func TestIdempotencyRecordsHoldNoSecret(t *testing.T) {
	ts, _, p := projectAPI(t, apiOptions{})
	rcv := newReceiver(t)
	hookKey, sessionKey := "hook-"+p.Project.ID, "session-"+p.Project.ID
	hook := do(t, ts.URL, request{method: "POST", path: "/api/v1/projects/" + p.Project.ID + "/webhooks", key: p.SandboxKey,
		body: map[string]any{"url": rcv.URL + "/hooks", "enabledEvents": []string{"*"}}, headers: map[string]string{"Idempotency-Key": hookKey}})
	mustStatus(t, hook, http.StatusCreated)
	secret := str(hook.data()["secret"])
	replay := do(t, ts.URL, request{method: "POST", path: "/api/v1/projects/" + p.Project.ID + "/webhooks", key: p.SandboxKey,
		body: map[string]any{"url": rcv.URL + "/hooks", "enabledEvents": []string{"*"}}, headers: map[string]string{"Idempotency-Key": hookKey}})
	if replay.Status != http.StatusCreated || str(replay.data()["secret"]) != secret {
		t.Fatalf("the replay to the same caller = %s; want the same secret", replay.Raw)
	}
	planID := createPlan(t, ts.URL, p, map[string]any{"title": "Sealed", "amountUsd": "3"})
	session := do(t, ts.URL, request{method: "POST", path: "/api/v1/checkout/sessions",
		body: map[string]any{"paymentPlanId": planID}, headers: map[string]string{"Idempotency-Key": sessionKey}})
	mustStatus(t, session, http.StatusCreated)
	token := str(session.data()["token"])
	if secret == "" || token == "" {
		t.Fatalf("secret %q, token %q", secret, token)
	}

	conn, err := pgx.Connect(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(context.Background(), `SELECT row_to_json(r)::text, coalesce(response_sealed, '') FROM idempotency_records r`)
	if err != nil {
		t.Fatal(err)
	}
	records, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (string, error) {
		var text string
		var sealed []byte
		err := row.Scan(&text, &sealed)
		return text + string(sealed), err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(records) < 2 {
		t.Fatalf("%d idempotency records; want at least the two made here", len(records))
	}
	for _, rec := range records {
		for name, s := range map[string]string{"webhook secret": secret, "session token": token, "Idempotency-Key": hookKey, "the other Idempotency-Key": sessionKey} {
			if strings.Contains(rec, s) {
				t.Fatalf("an idempotency record holds the %s in plaintext: %.200s", name, rec)
			}
		}
	}
}
