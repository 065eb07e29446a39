package attack

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
)

// callFrom posts from a loopback address of its own, as another client.
func callFrom(t *testing.T, ip, path, key, idemKey string, body []byte) (int, map[string]any) {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	c := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
	req, _ := http.NewRequestWithContext(context.Background(), "POST", base+path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", idemKey)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var env struct{ Data map[string]any }
	_ = json.NewDecoder(res.Body).Decode(&env)
	return res.StatusCode, env.Data
}

// An Idempotency-Key replays a response to its caller only: another
// public client, or another project's key, sending the same key and body
// never gets the first caller's answer (a session token, a secret).
func TestIdempotencyReplaysNothingAcrossCallers(t *testing.T) {
	w := setup(t)
	body := []byte(`{"paymentPlanId":"` + w.params["planId"] + `"}`)
	_, first := callFrom(t, "127.0.0.1", "/api/v1/checkout/sessions", "", "order-1", body)
	secrets.add(str(first["token"]))
	for _, c := range []struct {
		who, ip, key string
	}{
		{"another public client", "127.0.0.2", ""},
		{"another project's key", "127.0.0.1", w.attacker.SandboxKey},
		{"the victim's key", "127.0.0.1", w.victim.SandboxKey},
	} {
		code, data := callFrom(t, c.ip, "/api/v1/checkout/sessions", c.key, "order-1", body)
		secrets.add(str(data["token"]))
		if data["token"] == first["token"] || data["id"] == first["id"] {
			t.Errorf("%s got the first caller's session (%d)", c.who, code)
		}
		tally.add("idempotency across callers", "no replay to "+c.who)
	}
	// Webhook secrets: the same key and body from two projects.
	hookBody := []byte(`{"url":"https://hooks.example.test/x","enabledEvents":["*"]}`)
	var got []string
	for _, tnt := range []tenant{w.victim, w.attacker} {
		_, data := callFrom(t, "127.0.0.1", "/api/v1/projects/"+tnt.Project.ID+"/webhooks", tnt.SandboxKey, "hook-1", hookBody)
		secrets.add(str(data["secret"]))
		got = append(got, str(data["secret"]))
	}
	if got[0] == "" || got[0] == got[1] {
		t.Errorf("webhook secrets under one Idempotency-Key: %q", got)
	}
	tally.add("idempotency across callers", "no replay to another project's key (webhook secret)")
}

// Nothing the engine logged holds a key, a session token or a webhook
// secret the suite made. It is the last test of the last file with tests
// (go test runs them in that order), so every class's logs are in.
func TestZZSecretsNeverReachTheLogs(t *testing.T) {
	setup(t)
	out := logs.String()
	if len(out) < 1000 {
		t.Fatalf("only %d bytes of logs were kept: the capture does not work", len(out))
	}
	all := secrets.list()
	if len(all) < 6 {
		t.Fatalf("%d secrets made; want the suite's keys, tokens and secrets", len(all))
	}
	for _, s := range all {
		if strings.Contains(out, s) {
			i := strings.Index(out, s)
			t.Errorf("the logs hold a secret (%.12s…): %.300s", s, out[max(0, i-150):])
		}
		tally.add("secrets in logs", "absent")
	}
}
