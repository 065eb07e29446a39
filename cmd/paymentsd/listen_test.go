package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// What `paymentsd dev listen` receives reaches the application unchanged:
// the signature made for the registered endpoint still verifies there, and
// the application's answer goes back.
func TestDevListenForwardsUnchanged(t *testing.T) {
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	var verified bool
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		wh, _ := standardwebhooks.NewWebhook(secret)
		verified = wh.Verify(body, r.Header) == nil && r.URL.Path == "/webhooks"
		w.WriteHeader(http.StatusAccepted)
	}))
	defer app.Close()
	h, err := forwarder(app.URL + "/webhooks")
	if err != nil {
		t.Fatal(err)
	}
	listen := httptest.NewServer(h)
	defer listen.Close()

	body := []byte(`{"id":"evt_1","type":"webhook.test","data":{}}`)
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
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusAccepted || !verified {
		t.Fatalf("status %d, verified %v; want the application's 202 and a valid signature", res.StatusCode, verified)
	}
	if _, err := forwarder("localhost:3000"); err == nil {
		t.Fatal("a URL without a scheme must be refused")
	}
}
