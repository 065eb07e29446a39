package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"golang.org/x/sync/errgroup"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/views"
	"github.com/paymentsd/paymentsd/webhook"
	"github.com/paymentsd/paymentsd/workflows"
)

// Webhooks holds what webhook delivery needs besides the store.
type Webhooks struct {
	Temporal client.Client
	Sealer   *webhook.Sealer
	Client   *http.Client
	// DisableAfter disables an endpoint that has failed every delivery
	// for this long (default 5 days).
	DisableAfter time.Duration
}

// dispatchWait is how long one dispatch waits for new events.
const dispatchWait = 5 * time.Second

// DispatchEvents waits for recorded events not dispatched yet and starts a
// delivery workflow for each endpoint that wants one, then marks them
// dispatched. Starting is idempotent (the workflow ID names the event and
// the endpoint), so a retry after a crash starts nothing twice.
func (a *Activities) DispatchEvents(ctx context.Context) error {
	deadline := time.Now().Add(dispatchWait)
	for {
		events, dispatches, err := a.Store.DispatchEvents(ctx, dispatchBatch, time.Now())
		if err != nil {
			return err
		}
		if err := a.startAll(ctx, dispatches); err != nil {
			return err
		}
		if len(events) > 0 {
			return a.Store.MarkDispatched(ctx, events, time.Now())
		}
		if time.Now().After(deadline) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// dispatchBatch bounds the events one dispatch takes, so that starting
// their deliveries fits well within the activity's timeout.
const dispatchBatch = 25

// startAll starts deliveries a few at a time.
func (a *Activities) startAll(ctx context.Context, ds []store.Dispatch) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for _, d := range ds {
		g.Go(func() error { return a.StartDelivery(ctx, d, 1) })
	}
	return g.Wait()
}

// StartDelivery starts a delivery's workflow unless it runs already.
func (a *Activities) StartDelivery(ctx context.Context, d store.Dispatch, firstAttempt int) error {
	in := workflows.DeliveryInput{DeliveryID: d.DeliveryID, EventID: d.EventID, EndpointID: d.EndpointID, FirstAttempt: firstAttempt}
	_, err := a.Webhooks.Temporal.ExecuteWorkflow(ctx, workflows.WebhookDeliveryStartOptions(in, d.ProjectID, d.IsLive),
		workflows.WebhookDelivery, in)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		return nil
	}
	return err
}

// excerptBytes bounds the part of a receiver's answer kept with an attempt.
const excerptBytes = 1024

// DeliverWebhook makes one attempt: it signs the event with the endpoint's
// secrets (both, during a rotation), POSTs it, and records the attempt.
// What the receiver answers is a result, not an error; errors are for the
// engine's own failures, which the activity retries.
func (a *Activities) DeliverWebhook(ctx context.Context, in workflows.DeliverInput) (workflows.DeliverResult, error) {
	ep, err := a.Store.EndpointByID(ctx, in.EndpointID)
	if errors.Is(err, payment.ErrNotFound) || err == nil && ep.Status != payment.WebhookEnabled {
		_ = a.Store.SetDeliveryStatus(ctx, in.DeliveryID, payment.DeliveryFailed, time.Now())
		return workflows.DeliverResult{Stop: true}, nil
	}
	if err != nil {
		return workflows.DeliverResult{}, err
	}
	ev, err := a.Store.EventByID(ctx, in.EventID)
	if err != nil {
		return workflows.DeliverResult{}, classify(err)
	}
	body, _ := json.Marshal(views.EventOf(ev.ID, ev.Type, ev.ProjectID, ev.IsLive, ev.Data, ev.CreatedAt))
	now := in.At
	if now.IsZero() {
		now = time.Now()
	}
	// Signatures carry the moment of sending: receivers check it against
	// their clock, whenever the attempt was scheduled.
	secrets, err := a.secrets(ep, time.Now())
	if err != nil {
		return workflows.DeliverResult{}, temporal.NewNonRetryableApplicationError("open endpoint secret: "+err.Error(), "secret", err)
	}
	headers, err := webhook.Sign(ev.ID, time.Now(), body, secrets...)
	if err != nil {
		return workflows.DeliverResult{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.URL, bytes.NewReader(body))
	if err != nil {
		return workflows.DeliverResult{}, temporal.NewNonRetryableApplicationError("bad endpoint url", "url", err)
	}
	for k, v := range headers {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "paymentsd-webhooks/1")

	attempt := store.Attempt{Attempt: in.Attempt, At: now}
	sent := time.Now()
	res, err := a.Webhooks.Client.Do(req)
	attempt.LatencyMS = int(time.Since(sent).Milliseconds())
	var result workflows.DeliverResult
	if err != nil {
		attempt.Error = err.Error()
		if errors.Is(err, webhook.ErrForbiddenDestination) {
			attempt.Error = "destination refused: private or loopback address"
		}
	} else {
		excerpt, _ := io.ReadAll(io.LimitReader(res.Body, excerptBytes))
		res.Body.Close()
		code := res.StatusCode
		attempt.StatusCode, attempt.ResponseExcerpt = &code, string(excerpt)
		result.StatusCode = code
		switch {
		case code >= 200 && code < 300:
			result.Delivered = true
		case code == http.StatusGone:
			result.Stop = true
		case code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable:
			result.RetryAfter = retryAfter(res.Header.Get("Retry-After"), now)
		}
	}
	status := payment.DeliveryPending
	switch {
	case result.Delivered:
		status = payment.DeliveryDelivered
	case result.Stop:
		status = payment.DeliveryFailed
	}
	if err := a.Store.RecordAttempt(ctx, in.DeliveryID, attempt, status); err != nil {
		return result, err
	}
	return result, a.endpointHealth(ctx, ep.ID, result, now)
}

// endpointHealth keeps track of failing endpoints: a 410 disables one at
// once; failing every delivery for DisableAfter disables it too; a success
// clears the record.
func (a *Activities) endpointHealth(ctx context.Context, id string, r workflows.DeliverResult, now time.Time) error {
	disableAfter := a.Webhooks.DisableAfter
	if disableAfter <= 0 {
		disableAfter = 5 * 24 * time.Hour
	}
	_, err := a.Store.UpdateEndpoint(ctx, id, now, func(e *store.StoredEndpoint) error {
		// The row is written anyway: secrets sealed before they were bound
		// to their endpoint are bound now.
		e.Secret, e.PreviousSecret = a.Webhooks.Sealer.Reseal(e.ID, e.Secret), a.Webhooks.Sealer.Reseal(e.ID, e.PreviousSecret)
		switch {
		case r.Delivered:
			e.FailingSince = nil
		case r.Stop:
			e.Status, e.DisabledReason = payment.WebhookDisabled, "the endpoint answered 410 Gone"
		default:
			if e.FailingSince == nil {
				e.FailingSince = &now
			} else if now.Sub(*e.FailingSince) >= disableAfter {
				e.Status = payment.WebhookDisabled
				e.DisabledReason = fmt.Sprintf("every delivery failed since %s", e.FailingSince.UTC().Format(time.RFC3339))
			}
		}
		return nil
	})
	if errors.Is(err, payment.ErrNotFound) {
		return nil
	}
	return err
}

func (a *Activities) secrets(ep store.StoredEndpoint, now time.Time) ([]string, error) {
	current, err := a.Webhooks.Sealer.Open(ep.ID, ep.Secret)
	if err != nil {
		return nil, err
	}
	out := []string{current}
	if ep.PreviousSecret != "" && ep.PreviousSecretUntil != nil && now.Before(*ep.PreviousSecretUntil) {
		prev, err := a.Webhooks.Sealer.Open(ep.ID, ep.PreviousSecret)
		if err != nil {
			return nil, err
		}
		out = append(out, prev)
	}
	return out, nil
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

// FinishDelivery records a delivery's final status.
func (a *Activities) FinishDelivery(ctx context.Context, in workflows.FinishInput) error {
	return a.Store.SetDeliveryStatus(ctx, in.DeliveryID, in.Status, time.Now())
}
