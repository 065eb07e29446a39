package webhook_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/webhook"
)

// A receiver's answers become outcomes: what was delivered, what asks to
// stop or to wait, and what is kept of the answer.
func TestSendReportsTheReceiversAnswer(t *testing.T) {
	secret := webhook.NewSecret()
	at := time.Now().Truncate(time.Second)
	cases := []struct {
		name    string
		handler http.HandlerFunc
		want    webhook.Outcome
		status  string
	}{
		{"2xx delivers", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) },
			webhook.Outcome{Delivered: true}, payment.DeliveryDelivered},
		{"410 stops", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusGone) },
			webhook.Outcome{Stop: true}, payment.DeliveryFailed},
		{"429 waits the seconds asked", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Retry-After", "120")
			w.WriteHeader(http.StatusTooManyRequests)
		}, webhook.Outcome{RetryAfter: 2 * time.Minute}, payment.DeliveryPending},
		{"503 waits until the date asked", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Retry-After", at.Add(90*time.Second).UTC().Format(http.TimeFormat))
			w.WriteHeader(http.StatusServiceUnavailable)
		}, webhook.Outcome{RetryAfter: 90 * time.Second}, payment.DeliveryPending},
		{"500 is pending with no wait", func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusInternalServerError)
		}, webhook.Outcome{}, payment.DeliveryPending},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var verified error
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				verified = webhook.Verify(r.Header, body, secret, 5*time.Minute, time.Now())
				c.handler(w, r)
			}))
			defer srv.Close()
			o, err := webhook.Send(context.Background(), srv.Client(), srv.URL,
				webhook.Message{EventID: "evt_1", Body: []byte(`{"id":"evt_1"}`), Secrets: []string{secret}}, 3, at)
			if err != nil {
				t.Fatal(err)
			}
			if verified != nil {
				t.Fatalf("the receiver could not verify the signature: %v", verified)
			}
			if o.Delivered != c.want.Delivered || o.Stop != c.want.Stop || o.RetryAfter != c.want.RetryAfter {
				t.Fatalf("outcome = %+v, want %+v", o, c.want)
			}
			if o.Status() != c.status || o.Attempt.Attempt != 3 || !o.Attempt.At.Equal(at) || o.Attempt.StatusCode == nil {
				t.Fatalf("attempt = %+v, status %s; want attempt 3 at %s, status %s", o.Attempt, o.Status(), at, c.status)
			}
		})
	}
}

// Only the start of a long answer is kept, and a receiver that cannot be
// reached is an attempt with its error, not a failure to send.
func TestSendKeepsAnExcerptAndRecordsUnreachableReceivers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, strings.Repeat("x", 5000))
	}))
	m := webhook.Message{EventID: "evt_1", Body: []byte(`{}`), Secrets: []string{webhook.NewSecret()}}
	o, err := webhook.Send(context.Background(), srv.Client(), srv.URL, m, 1, time.Now())
	if err != nil || !o.Delivered || len(o.Attempt.ResponseExcerpt) != 1024 {
		t.Fatalf("outcome = %+v (excerpt %d bytes), %v; want delivered with a 1024-byte excerpt", o, len(o.Attempt.ResponseExcerpt), err)
	}
	url := srv.URL
	srv.Close()
	o, err = webhook.Send(context.Background(), http.DefaultClient, url, m, 2, time.Now())
	if err != nil || o.Delivered || o.Attempt.StatusCode != nil || o.Attempt.Error == "" || o.Status() != payment.DeliveryPending {
		t.Fatalf("outcome = %+v, %v; want a pending attempt with its error", o, err)
	}
	guarded := webhook.NewClient(webhook.ClientOptions{})
	o, _ = webhook.Send(context.Background(), guarded, url, m, 3, time.Now())
	if !strings.Contains(o.Attempt.Error, "destination refused") {
		t.Fatalf("attempt to loopback = %+v; want the destination refused", o.Attempt)
	}
	if _, err := webhook.Send(context.Background(), http.DefaultClient, "http://a b", m, 4, time.Now()); err == nil {
		t.Fatal("a bad URL was sent")
	}
}
