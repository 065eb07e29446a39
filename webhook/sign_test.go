package webhook_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/paymentsd/paymentsd/webhook"
)

func TestNewSecret(t *testing.T) {
	a, b := webhook.NewSecret(), webhook.NewSecret()
	if a == b {
		t.Fatal("two secrets are equal")
	}
	if !strings.HasPrefix(a, "whsec_") {
		t.Fatalf("secret %q lacks the whsec_ prefix", a)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(a, "whsec_"))
	if err != nil || len(raw) != 32 {
		t.Fatalf("secret body: %d bytes, err %v; want 32 bytes of std base64", len(raw), err)
	}
	key, err := webhook.ParseSecret(a)
	if err != nil || !bytes.Equal(key, raw) {
		t.Fatalf("ParseSecret = %x, %v; want %x", key, err, raw)
	}
}

func TestParseSecretRejects(t *testing.T) {
	for _, s := range []string{
		"",
		"whsec_",
		"whsec_not*base64",
		"whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 16)), // too short
		"whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 65)), // too long
	} {
		if _, err := webhook.ParseSecret(s); err == nil {
			t.Errorf("ParseSecret(%q) succeeded", s)
		}
	}
}

// The Standard Webhooks reference vector, also used by the reference library
// tests: it pins the signed-content format and the encoding.
func TestSignKnownVector(t *testing.T) {
	h, err := webhook.Sign("msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0),
		[]byte(`{"test": 2432232314}`), "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		t.Fatal(err)
	}
	want := http.Header{
		"Webhook-Id":        {"msg_p5jXN8AQM9LWM0D4loKWxJek"},
		"Webhook-Timestamp": {"1614265330"},
		"Webhook-Signature": {"v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="},
	}
	for k, v := range want {
		if got := h.Values(k); len(got) != 1 || got[0] != v[0] {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
}

func TestSignRefuses(t *testing.T) {
	ts := time.Now()
	if _, err := webhook.Sign("msg_1", ts, nil); err == nil {
		t.Error("Sign without secrets succeeded")
	}
	if _, err := webhook.Sign("", ts, nil, webhook.NewSecret()); err == nil {
		t.Error("Sign with empty id succeeded")
	}
	if _, err := webhook.Sign("msg 1\r\nX-Evil: 1", ts, nil, webhook.NewSecret()); err == nil {
		t.Error("Sign with a header-breaking id succeeded")
	}
	if _, err := webhook.Sign("msg_1", ts, nil, "whsec_short"); err == nil {
		t.Error("Sign with a bad secret succeeded")
	}
}

func TestSignVerifyRoundTripAndTolerance(t *testing.T) {
	secret := webhook.NewSecret()
	body := []byte(`{"type":"payment.confirmed","data":{"id":"pay_1"}}`)
	ts := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	h, err := webhook.Sign("msg_1", ts, body, secret)
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Get("webhook-timestamp"); got != strconv.FormatInt(ts.Unix(), 10) {
		t.Fatalf("timestamp header %q", got)
	}
	const tol = 5 * time.Minute

	for _, now := range []time.Time{ts, ts.Add(tol), ts.Add(-tol), ts.Add(tol - time.Second)} {
		if err := webhook.Verify(h, body, secret, tol, now); err != nil {
			t.Errorf("now=%s: %v", now.Sub(ts), err)
		}
	}
	for _, now := range []time.Time{ts.Add(tol + time.Second), ts.Add(-tol - time.Second), ts.Add(24 * time.Hour)} {
		if err := webhook.Verify(h, body, secret, tol, now); !errors.Is(err, webhook.ErrTimestampOutOfTolerance) {
			t.Errorf("now=%s: err %v, want ErrTimestampOutOfTolerance", now.Sub(ts), err)
		}
	}
	// A non-positive tolerance means the default, not "no check".
	if err := webhook.Verify(h, body, secret, 0, ts.Add(time.Hour)); !errors.Is(err, webhook.ErrTimestampOutOfTolerance) {
		t.Errorf("zero tolerance: %v", err)
	}

	if err := webhook.Verify(h, []byte(`{"type":"payment.confirmed","data":{"id":"pay_2"}}`), secret, tol, ts); !errors.Is(err, webhook.ErrNoMatchingSignature) {
		t.Errorf("tampered body: %v", err)
	}
	if err := webhook.Verify(h, body, webhook.NewSecret(), tol, ts); !errors.Is(err, webhook.ErrNoMatchingSignature) {
		t.Errorf("other secret: %v", err)
	}
	moved := h.Clone()
	moved.Set("webhook-timestamp", strconv.FormatInt(ts.Unix()+1, 10))
	if err := webhook.Verify(moved, body, secret, tol, ts); !errors.Is(err, webhook.ErrNoMatchingSignature) {
		t.Errorf("tampered timestamp: %v", err)
	}
	renamed := h.Clone()
	renamed.Set("webhook-id", "msg_2")
	if err := webhook.Verify(renamed, body, secret, tol, ts); !errors.Is(err, webhook.ErrNoMatchingSignature) {
		t.Errorf("tampered id: %v", err)
	}
	bad := h.Clone()
	bad.Set("webhook-timestamp", "yesterday")
	if err := webhook.Verify(bad, body, secret, tol, ts); !errors.Is(err, webhook.ErrInvalidTimestamp) {
		t.Errorf("bad timestamp: %v", err)
	}
	for _, name := range []string{"webhook-id", "webhook-timestamp", "webhook-signature"} {
		missing := h.Clone()
		missing.Del(name)
		if err := webhook.Verify(missing, body, secret, tol, ts); !errors.Is(err, webhook.ErrMissingHeaders) {
			t.Errorf("without %s: %v", name, err)
		}
	}
}

func TestVerifyRotationAndUnknownVersions(t *testing.T) {
	oldS, newS := webhook.NewSecret(), webhook.NewSecret()
	body := []byte(`{}`)
	ts := time.Now()
	h, err := webhook.Sign("msg_rot", ts, body, oldS, newS)
	if err != nil {
		t.Fatal(err)
	}
	entries := strings.Split(h.Get("webhook-signature"), " ")
	if len(entries) != 2 || !strings.HasPrefix(entries[0], "v1,") || !strings.HasPrefix(entries[1], "v1,") {
		t.Fatalf("signature header %q, want two v1 entries", h.Get("webhook-signature"))
	}
	for _, s := range []string{oldS, newS} {
		if err := webhook.Verify(h, body, s, time.Minute, ts); err != nil {
			t.Error(err)
		}
	}
	// Entries of other versions are skipped, not fatal.
	h.Set("webhook-signature", "v1a,AAAA v2,garbage "+entries[1])
	if err := webhook.Verify(h, body, newS, time.Minute, ts); err != nil {
		t.Error(err)
	}
}

// receiver is a merchant endpoint that verifies deliveries with the Standard
// Webhooks reference library with the one secret it holds.
type receiver struct {
	srv  *httptest.Server
	errs chan error
}

func newReceiver(t *testing.T, secret string) *receiver {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	r := &receiver{errs: make(chan error, 1)}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err == nil {
			err = wh.Verify(body, req.Header)
		}
		r.errs <- err
		if err != nil {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// deliver POSTs body with headers over the webhook client and returns the
// status and the receiver library's verdict.
func (r *receiver) deliver(t *testing.T, h http.Header, body []byte) (int, error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, r.srv.URL, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h.Clone()
	req.Header.Set("Content-Type", "application/json")
	resp, err := webhook.NewClient(webhook.ClientOptions{AllowPrivate: true, Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, <-r.errs
}

func TestDeliveryVerifiedByStandardWebhooksLibrary(t *testing.T) {
	secret := webhook.NewSecret()
	rcv := newReceiver(t, secret)
	body := []byte(`{"type":"payment.confirmed","data":{"id":"pay_1","amount":"12.50"}}`)
	ts := time.Now() // the library checks against its own clock
	h, err := webhook.Sign("msg_2fX9", ts, body, secret)
	if err != nil {
		t.Fatal(err)
	}

	if code, err := rcv.deliver(t, h, body); err != nil || code != http.StatusNoContent {
		t.Fatalf("genuine delivery: status %d, library: %v", code, err)
	}

	tampered := bytes.Replace(body, []byte("12.50"), []byte("1250"), 1)
	if code, err := rcv.deliver(t, h, tampered); !errors.Is(err, standardwebhooks.ErrNoMatchingSignature) || code != http.StatusUnauthorized {
		t.Errorf("tampered body: status %d, library: %v", code, err)
	}

	moved := h.Clone()
	moved.Set("webhook-timestamp", strconv.FormatInt(ts.Unix()+1, 10))
	if code, err := rcv.deliver(t, moved, body); !errors.Is(err, standardwebhooks.ErrNoMatchingSignature) || code != http.StatusUnauthorized {
		t.Errorf("tampered timestamp: status %d, library: %v", code, err)
	}

	// A replay: honestly signed, but an hour ago.
	old, err := webhook.Sign("msg_2fX9", ts.Add(-time.Hour), body, secret)
	if err != nil {
		t.Fatal(err)
	}
	if code, err := rcv.deliver(t, old, body); !errors.Is(err, standardwebhooks.ErrMessageTooOld) || code != http.StatusUnauthorized {
		t.Errorf("stale timestamp: status %d, library: %v", code, err)
	}
}

func TestRotationVerifiedByStandardWebhooksLibrary(t *testing.T) {
	oldS, newS := webhook.NewSecret(), webhook.NewSecret()
	body := []byte(`{"type":"payment.expired"}`)
	h, err := webhook.Sign("msg_rot", time.Now(), body, oldS, newS)
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]string{"old": oldS, "new": newS} {
		if code, err := newReceiver(t, s).deliver(t, h, body); err != nil || code != http.StatusNoContent {
			t.Errorf("receiver with the %s secret: status %d, library: %v", name, code, err)
		}
	}
	if code, err := newReceiver(t, webhook.NewSecret()).deliver(t, h, body); err == nil || code != http.StatusUnauthorized {
		t.Errorf("receiver with an unrelated secret: status %d, library: %v", code, err)
	}
}

// The reverse direction: our Verify accepts what the reference library signs.
func TestVerifyAcceptsLibrarySignature(t *testing.T) {
	secret := webhook.NewSecret()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	ts := time.Unix(1_700_000_000, 0)
	body := []byte(`{"a":1}`)
	sig, err := wh.Sign("msg_lib", ts, body)
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	h.Set(standardwebhooks.HeaderWebhookID, "msg_lib")
	h.Set(standardwebhooks.HeaderWebhookTimestamp, strconv.FormatInt(ts.Unix(), 10))
	h.Set(standardwebhooks.HeaderWebhookSignature, sig)
	if err := webhook.Verify(h, body, secret, time.Minute, ts); err != nil {
		t.Fatal(err)
	}
}
