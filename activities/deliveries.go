package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	"go.temporal.io/sdk/temporal"
	"golang.org/x/sync/errgroup"

	"github.com/paymentsd/paymentsd/internal/observability"
	"github.com/paymentsd/paymentsd/internal/views"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/webhook"
	"github.com/paymentsd/paymentsd/workflows"
)

// Webhooks holds what webhook delivery needs besides the store.
type Webhooks struct {
	Sealer *webhook.Sealer
	Client *http.Client
	// DisableAfter disables an endpoint that has failed every delivery
	// for this long (default 5 days).
	DisableAfter time.Duration
	// Shape is the API's shape, which payloads follow (API_SHAPE).
	Shape views.Shape
}

// dispatchWait is how long one dispatch waits for new events.
const dispatchWait = 5 * time.Second

// DispatchEvents waits for recorded events not dispatched yet, records a
// delivery of each to every endpoint that wants it and makes its first
// attempt, and returns the events with the deliveries whose attempt
// failed: the dispatcher's workflow starts a workflow for each (it retries
// on the schedule), then marks the events dispatched (MarkDispatched).
// Most receivers answer 2xx at once, so most deliveries cost no workflow.
// A crash before the events are marked makes their first attempts again
// (deliveries are at least once; receivers tell repeats by webhook-id).
func (a *Activities) DispatchEvents(ctx context.Context) (workflows.DispatchOutput, error) {
	deadline := time.Now().Add(dispatchWait)
	for {
		events, dispatches, err := a.Store.DispatchEvents(ctx, dispatchBatch, time.Now())
		if err != nil {
			return workflows.DispatchOutput{}, err
		}
		retries, err := a.firstAttempts(ctx, dispatches)
		if err != nil {
			return workflows.DispatchOutput{}, err
		}
		if len(events) > 0 || time.Now().After(deadline) {
			return workflows.DispatchOutput{Events: events, Retries: retries}, nil
		}
		select {
		case <-ctx.Done():
			return workflows.DispatchOutput{}, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// MarkDispatched records that events' deliveries are made or started.
func (a *Activities) MarkDispatched(ctx context.Context, in workflows.MarkInput) error {
	return a.Store.MarkDispatched(ctx, in.Events, time.Now())
}

// dispatchBatch bounds the events one dispatch takes, so that their first
// attempts fit well within the activity's timeout.
const dispatchBatch = 25

// firstAttemptTimeout bounds a first attempt made by the dispatcher, so that
// one slow receiver holds the others' deliveries back that long at most; a
// receiver slower than that is retried by its delivery's workflow, which
// waits for webhook.DefaultTimeout.
const firstAttemptTimeout = 5 * time.Second

// firstAttemptsFor bounds the time a batch's first attempts may start in:
// the deliveries left after it (many slow receivers at once) go to their
// workflows without one, so that the dispatch stays well within its
// activity's timeout and the next events are not held back.
const firstAttemptsFor = 10 * time.Second

// firstAttempts makes the first attempt of each delivery, many at a time,
// and returns the deliveries whose workflows are to retry them, in the
// order of ds.
func (a *Activities) firstAttempts(ctx context.Context, ds []store.Dispatch) ([]workflows.DeliveryStart, error) {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(32)
	until := time.Now().Add(firstAttemptsFor)
	retry := make([]*workflows.DeliveryStart, len(ds))
	for i, d := range ds {
		g.Go(func() error {
			in := workflows.DeliveryInput{DeliveryID: d.DeliveryID, EventID: d.EventID, EndpointID: d.EndpointID, FirstAttempt: 1}
			start := func(in workflows.DeliveryInput) error {
				retry[i] = &workflows.DeliveryStart{Input: in, ProjectID: d.ProjectID, IsLive: d.IsLive}
				return nil
			}
			if time.Now().After(until) {
				return start(in) // its workflow makes the first attempt at once
			}
			r, err := a.deliver(ctx, workflows.DeliverInput{DeliveryInput: in, Attempt: 1, At: time.Now()}, firstAttemptTimeout)
			if err == nil && (r.Delivered || r.Stop) {
				return nil
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			// The schedule goes on: its first wait, or longer if the
			// receiver asked for it. An attempt that could not be made
			// (err) is made by the workflow at once.
			in.FirstAttempt, in.Retried = 2, 1
			if err == nil {
				in.Wait = max(jitter(workflows.RetrySchedule[0]), min(r.RetryAfter, workflows.RetrySchedule[len(workflows.RetrySchedule)-1]))
			} else {
				in.FirstAttempt, in.Retried = 1, 0
			}
			return start(in)
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var out []workflows.DeliveryStart
	for _, r := range retry {
		if r != nil {
			out = append(out, *r)
		}
	}
	return out, nil
}

// jitter spreads a wait by up to 10% either way, as the workflow does.
func jitter(d time.Duration) time.Duration {
	return time.Duration(float64(d) * (0.9 + 0.2*rand.Float64()))
}

// DeliverWebhook makes one attempt: load the endpoint and the event,
// deliver (webhook.Send signs with the endpoint's secrets, both during a
// rotation, and POSTs), record the attempt. What the receiver answers is a
// result, not an error; errors are for the engine's own failures, which
// the activity retries.
func (a *Activities) DeliverWebhook(ctx context.Context, in workflows.DeliverInput) (workflows.DeliverResult, error) {
	return a.deliver(ctx, in, 0)
}

// deliver is DeliverWebhook with the HTTP exchange bounded by timeout (0:
// the client's own).
func (a *Activities) deliver(ctx context.Context, in workflows.DeliverInput, timeout time.Duration) (workflows.DeliverResult, error) {
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
	secrets, err := a.secrets(ep, time.Now())
	if err != nil {
		return workflows.DeliverResult{}, temporal.NewNonRetryableApplicationError("open endpoint secret: "+err.Error(), "secret", err)
	}
	body, _ := json.Marshal(views.ShapedEventOf(a.Webhooks.Shape, ev))
	at := in.At
	if at.IsZero() {
		at = time.Now()
	}

	sendCtx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		sendCtx, cancel = context.WithTimeout(ctx, timeout)
	}
	out, err := webhook.Send(sendCtx, a.Webhooks.Client, ep.URL, webhook.Message{EventID: ev.ID, Body: body, Secrets: secrets}, in.Attempt, at)
	cancel()
	if err != nil {
		return workflows.DeliverResult{}, temporal.NewNonRetryableApplicationError("cannot send: "+err.Error(), "url", err)
	}

	observe(out, ev.CreatedAt)
	result := workflows.DeliverResult{Delivered: out.Delivered, Stop: out.Stop, RetryAfter: out.RetryAfter}
	if out.Attempt.StatusCode != nil {
		result.StatusCode = *out.Attempt.StatusCode
	}
	if err := a.Store.RecordAttempt(ctx, in.DeliveryID, out.Attempt, out.Status()); err != nil {
		return result, err
	}
	return result, a.endpointHealth(ctx, ep.ID, result, at)
}

// observe counts an attempt by outcome, and a delivery's delay from its
// event.
func observe(o webhook.Outcome, recorded time.Time) {
	outcome := "rejected"
	switch {
	case o.Delivered:
		outcome = "delivered"
		observability.WebhookDelay.Observe(time.Since(recorded).Seconds())
	case o.Stop:
		outcome = "gone"
	case o.Attempt.StatusCode == nil:
		outcome = "error"
	}
	observability.WebhookAttempts.WithLabelValues(outcome).Inc()
}

// endpointHealth keeps track of failing endpoints: a 410 disables one at
// once; failing every delivery for DisableAfter disables it too; a success
// clears the record.
func (a *Activities) endpointHealth(ctx context.Context, id string, r workflows.DeliverResult, now time.Time) error {
	disableAfter := a.Webhooks.DisableAfter
	if disableAfter <= 0 {
		disableAfter = 5 * 24 * time.Hour
	}
	disabling := store.Disabling{
		Render: func(e store.StoredEndpoint, version int) ([]byte, error) {
			return views.WebhookDisabledEvent(e.WebhookEndpoint, version)
		},
		Audit: func(e store.StoredEndpoint) payment.AuditEntry {
			details, _ := json.Marshal(map[string]any{"reason": e.DisabledReason})
			return payment.AuditEntry{ID: payment.NewID(payment.PrefixAudit, now), ProjectID: e.ProjectID, IsLive: e.IsLive,
				OccurredAt: now, Origin: payment.Origin{ActorKind: payment.AuditActorInternal, ActorID: "webhook-delivery"},
				Action: payment.AuditWebhookDisabled, TargetType: "webhook_endpoint", TargetID: e.ID, Details: details}
		},
	}
	_, _, err := a.Store.UpdateEndpointHealth(ctx, id, now, func(e *store.StoredEndpoint) error {
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
	}, disabling)
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

// FinishDelivery records a delivery's final status.
func (a *Activities) FinishDelivery(ctx context.Context, in workflows.FinishInput) error {
	return a.Store.SetDeliveryStatus(ctx, in.DeliveryID, in.Status, time.Now())
}
