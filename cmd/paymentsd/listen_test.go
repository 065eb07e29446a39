package main

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// What `paymentsd dev listen` receives reaches the application unchanged:
// the signature made for the registered endpoint still verifies there, and
// the application's answer goes back, a refusal included (so paymentsd
// retries it).
func TestDevListenForwardsUnchanged(t *testing.T) {
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	body := []byte(`{"id":"evt_1","type":"webhook.test","data":{}}`)
	var got struct {
		verified bool
		method   string
		path     string
		body     []byte
	}
	answer := http.StatusAccepted
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.body, _ = io.ReadAll(r.Body)
		wh, _ := standardwebhooks.NewWebhook(secret)
		got.verified = wh.Verify(got.body, r.Header) == nil
		got.method, got.path = r.Method, r.URL.Path
		if answer == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", "120")
		}
		w.WriteHeader(answer)
	}))
	defer app.Close()
	h, err := forwarder(app.URL + "/webhooks")
	if err != nil {
		t.Fatal(err)
	}
	listen := httptest.NewServer(h)
	defer listen.Close()

	send := func() *http.Response {
		t.Helper()
		wh, _ := standardwebhooks.NewWebhook(secret)
		now := time.Now()
		sig, err := wh.Sign("evt_1", now, body)
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest(http.MethodPost, listen.URL+"/", bytes.NewReader(body))
		req.Header.Set("webhook-id", "evt_1")
		req.Header.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
		req.Header.Set("webhook-signature", sig)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	if res := send(); res.StatusCode != http.StatusAccepted || !got.verified || got.method != http.MethodPost ||
		got.path != "/webhooks" || !bytes.Equal(got.body, body) {
		t.Fatalf("status %d, the application got %+v; want the application's 202 and the request unchanged", res.StatusCode, got)
	}
	answer = http.StatusServiceUnavailable
	if res := send(); res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") != "120" {
		t.Fatalf("status %d, Retry-After %q; want the application's 503 and its Retry-After", res.StatusCode, res.Header.Get("Retry-After"))
	}
	app.Close()
	if res := send(); res.StatusCode != http.StatusBadGateway {
		t.Fatalf("the application down: %d, want 502", res.StatusCode)
	}

	if _, err := forwarder("localhost:3000"); err == nil {
		t.Fatal("a URL without a scheme must be refused")
	}
	for addr, want := range map[string]string{"[::]:8098": "http://127.0.0.1:8098/", "0.0.0.0:8098": "http://127.0.0.1:8098/",
		"127.0.0.1:8098": "http://127.0.0.1:8098/", "[::1]:8098": "http://[::1]:8098/"} {
		a, _ := net.ResolveTCPAddr("tcp", addr)
		if got := endpointURL(a); got != want {
			t.Errorf("endpointURL(%s) = %s, want %s", addr, got, want)
		}
	}
}
