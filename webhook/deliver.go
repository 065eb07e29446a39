package webhook

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/paymentsd/paymentsd/payment"
)

// Message is one event as it is sent: its ID, the body receivers parse and
// the endpoint's secrets that sign it (both during a rotation).
type Message struct {
	EventID string
	Body    []byte
	Secrets []string
}

// Outcome is what one attempt concluded: the attempt as recorded, and what
// the receiver asked for.
type Outcome struct {
	Attempt payment.Attempt
	// Delivered is a 2xx answer.
	Delivered bool
	// Stop is a 410 Gone: the receiver wants no more deliveries.
	Stop bool
	// RetryAfter is the wait a 429 or 503 asked for, if any.
	RetryAfter time.Duration
}

// Status is the delivery's status after the attempt.
func (o Outcome) Status() string { return payment.DeliveryStatusAfter(o.Delivered, o.Stop) }

// excerptBytes bounds the part of a receiver's answer kept with an attempt.
const excerptBytes = 1024

// UserAgent names the engine to receivers.
const UserAgent = "paymentsd-webhooks/1"

// Send makes attempt number n at delivering m to url with c: it signs the
// body at the moment of sending, POSTs it and reads the start of the
// answer. What the receiver answers, or a network failure, is the
// outcome, not an error; the error is for a message that cannot be sent at
// all (a bad URL or secret). at is when the attempt was due.
func Send(ctx context.Context, c *http.Client, url string, m Message, n int, at time.Time) (Outcome, error) {
	// Signatures carry the moment of sending: receivers check it against
	// their clock, whenever the attempt was scheduled.
	headers, err := Sign(m.EventID, time.Now(), m.Body, m.Secrets...)
	if err != nil {
		return Outcome{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(m.Body))
	if err != nil {
		return Outcome{}, err
	}
	for k, v := range headers {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)

	o := Outcome{Attempt: payment.Attempt{Attempt: n, At: at}}
	sent := time.Now()
	res, err := c.Do(req)
	o.Attempt.LatencyMS = int(time.Since(sent).Milliseconds())
	if err != nil {
		o.Attempt.Error = err.Error()
		if errors.Is(err, ErrForbiddenDestination) {
			o.Attempt.Error = "destination refused: private or loopback address"
		}
		return o, nil
	}
	excerpt, _ := io.ReadAll(io.LimitReader(res.Body, excerptBytes))
	res.Body.Close()
	code := res.StatusCode
	o.Attempt.StatusCode, o.Attempt.ResponseExcerpt = &code, string(excerpt)
	switch {
	case code >= 200 && code < 300:
		o.Delivered = true
	case code == http.StatusGone:
		o.Stop = true
	case code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable:
		o.RetryAfter = retryAfter(res.Header.Get("Retry-After"), at)
	}
	return o, nil
}

// retryAfter reads a Retry-After header: seconds, or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
