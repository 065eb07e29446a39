package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"golang.org/x/sync/errgroup"

	"github.com/paymentsd/paymentsd/internal/observability"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/payment/views"
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

// dispatchWait is how long one dispatch goes on: it takes batch after
// batch while events come, and returns once it has events whose
// deliveries' workflows are to start, or after this long.
const dispatchWait = 5 * time.Second

// dispatchPoll is the wait between looks for new events when there are
// none.
const dispatchPoll = 50 * time.Millisecond

// DispatchEvents takes recorded events not dispatched yet, a batch at a
// time, and makes the first attempt of each delivery of an event to an
// endpoint that wants it; then it records the deliveries with their
// attempts and, in the same database transaction, marks dispatched the
// events whose deliveries all ended (delivered, or their endpoint gone).
// Most receivers answer 2xx at once, so most events need nothing more.
// It returns the events left, with their deliveries whose attempt failed:
// the dispatcher's workflow starts a workflow for each (it retries on the
// schedule), then marks those events dispatched (MarkDispatched). A crash
// before an event is marked makes its first attempts again (deliveries are
// at least once; receivers tell repeats by webhook-id).
//
// While there are events it goes on, without going back to the workflow,
// until it has events to return or for dispatchWait; a batch's recording
// runs while the next batch's attempts are made.
func (a *Activities) DispatchEvents(ctx context.Context) (workflows.DispatchOutput, error) {
	deadline := time.Now().Add(dispatchWait)
	var out workflows.DispatchOutput
	var rec *recording // the previous batch's, under way
	finish := func() error {
		if rec == nil {
			return nil
		}
		err := rec.wait()
		if err == nil {
			out.Events, out.Retries = append(out.Events, rec.left...), append(out.Retries, rec.starts...)
		}
		rec = nil
		return err
	}
	for {
		var except []string
		if rec != nil {
			except = rec.events
		}
		b, err := a.Store.Webhooks().DispatchEvents(ctx, dispatchBatch, dispatchDeliveries, except, time.Now())
		if err != nil {
			return workflows.DispatchOutput{}, errors.Join(err, finish())
		}
		var attempts []firstAttempt
		if len(b.Events) > 0 {
			if attempts, err = a.firstAttempts(ctx, b); err != nil {
				return workflows.DispatchOutput{}, errors.Join(err, finish())
			}
		}
		if err := finish(); err != nil {
			return workflows.DispatchOutput{}, err
		}
		if len(b.Events) > 0 {
			rec = a.record(ctx, b, attempts)
		}
		if len(out.Events) > 0 || time.Now().After(deadline) {
			err := finish()
			return out, err
		}
		if len(b.Events) > 0 {
			continue
		}
		select {
		case <-ctx.Done():
			return workflows.DispatchOutput{}, ctx.Err()
		case <-time.After(dispatchPoll):
		}
	}
}

// MarkDispatched records that events' deliveries are made or started.
func (a *Activities) MarkDispatched(ctx context.Context, in workflows.MarkInput) error {
	return a.Store.Webhooks().MarkDispatched(ctx, in.Events, time.Now())
}

// dispatchBatch bounds the events one batch takes, and dispatchDeliveries
// its deliveries (events times the endpoints that want them), so that
// their first attempts fit well within the activity's timeout.
const (
	dispatchBatch      = 500
	dispatchDeliveries = 1000
)

// firstAttemptsAtOnce bounds the first attempts in flight at once: as
// many as the webhook client keeps connections to one receiver.
const firstAttemptsAtOnce = webhook.MaxIdleConnsPerHost

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

// firstAttempt is what became of a delivery's first attempt: the attempt,
// if one was made, and the delivery's workflow's input, if it needs one.
type firstAttempt struct {
	attempt *payment.Attempt
	status  string
	result  workflows.DeliverResult
	retry   *workflows.DeliveryInput
}

// recording is a batch's recording, under way: the batch's events, and
// once it is done, those left for the workflow with the deliveries to
// retry (with their recorded IDs).
type recording struct {
	events []string
	done   chan error
	left   []string
	starts []workflows.DeliveryStart
}

func (r *recording) wait() error { return <-r.done }

// record records a batch's deliveries with their first attempts, marks
// dispatched the events none of whose deliveries has a workflow to start,
// and keeps the endpoints' failure records, in the background.
func (a *Activities) record(ctx context.Context, b store.DispatchBatch, attempts []firstAttempt) *recording {
	r := &recording{done: make(chan error, 1)}
	ds := make([]store.DispatchedDelivery, len(b.Deliveries))
	left := map[string]bool{}
	for i, d := range b.Deliveries {
		ds[i] = store.DispatchedDelivery{Dispatch: d, Attempt: attempts[i].attempt, Status: attempts[i].status}
		if attempts[i].retry != nil {
			left[d.EventID] = true
		}
	}
	var done []string
	for _, ev := range b.Events {
		r.events = append(r.events, ev.ID)
		if left[ev.ID] {
			r.left = append(r.left, ev.ID)
		} else {
			done = append(done, ev.ID)
		}
	}
	go func() {
		if err := a.Store.Webhooks().RecordDispatch(ctx, b.At, ds, done, time.Now()); err != nil {
			r.done <- err
			return
		}
		for i, f := range attempts {
			if f.retry != nil {
				in := *f.retry
				in.DeliveryID = ds[i].DeliveryID // as recorded
				r.starts = append(r.starts, workflows.DeliveryStart{Input: in, ProjectID: ds[i].ProjectID, IsLive: ds[i].IsLive})
			}
		}
		r.done <- a.batchHealth(ctx, b, attempts)
	}()
	return r
}

// firstAttempts makes the first attempt of each delivery of a batch, many
// at a time, with the event and the endpoint as the dispatch read them:
// each event is rendered once and each endpoint's secrets opened once.
// It returns what became of each, in the order of b.Deliveries.
func (a *Activities) firstAttempts(ctx context.Context, b store.DispatchBatch) ([]firstAttempt, error) {
	now := time.Now()
	events := make(map[string]payment.Event, len(b.Events))
	bodies := make(map[string][]byte, len(b.Events))
	for _, ev := range b.Events {
		events[ev.ID] = ev
		bodies[ev.ID], _ = json.Marshal(views.ShapedEventOf(a.Webhooks.Shape, ev))
	}
	secrets := make(map[string][]string, len(b.Endpoints))
	for id, ep := range b.Endpoints {
		// An endpoint whose secret does not open has none here: its
		// deliveries' workflows try, and fail for good.
		secrets[id], _ = a.secrets(ep, now)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(firstAttemptsAtOnce)
	until := now.Add(firstAttemptsFor)
	out := make([]firstAttempt, len(b.Deliveries))
	for i, d := range b.Deliveries {
		g.Go(func() error {
			in := workflows.DeliveryInput{DeliveryID: d.DeliveryID, EventID: d.EventID, EndpointID: d.EndpointID, FirstAttempt: 1}
			keys := secrets[d.EndpointID]
			if keys == nil || time.Now().After(until) {
				out[i].retry = &in // its workflow makes the first attempt at once
				return nil
			}
			sendCtx, cancel := context.WithTimeout(gctx, firstAttemptTimeout)
			o, err := webhook.Send(sendCtx, a.Webhooks.Client, b.Endpoints[d.EndpointID].URL,
				webhook.Message{EventID: d.EventID, Body: bodies[d.EventID], Secrets: keys}, 1, time.Now())
			cancel()
			if gctx.Err() != nil {
				return gctx.Err()
			}
			if err != nil {
				out[i].retry = &in // no attempt could be made: its workflow's fails for good
				return nil
			}
			observe(o, events[d.EventID].CreatedAt)
			r := resultOf(o)
			out[i].attempt, out[i].status, out[i].result = &o.Attempt, o.Status(), r
			if r.Delivered || r.Stop {
				return nil
			}
			// The schedule goes on: its first wait, or longer if the
			// receiver asked for it.
			in.FirstAttempt, in.Retried = 2, 1
			in.Wait = max(jitter(workflows.RetrySchedule[0]), min(r.RetryAfter, workflows.RetrySchedule[len(workflows.RetrySchedule)-1]))
			out[i].retry = &in
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// batchHealth keeps the failure record of each endpoint of a batch, once
// for the batch: an endpoint that answered 410 is disabled; one that took
// any delivery is not failing; one that took none is failing since the
// batch's first attempt to it.
func (a *Activities) batchHealth(ctx context.Context, b store.DispatchBatch, attempts []firstAttempt) error {
	type summary struct {
		result workflows.DeliverResult
		at     time.Time
	}
	per := map[string]*summary{}
	var ids []string
	for i, f := range attempts {
		if f.attempt == nil {
			continue
		}
		id := b.Deliveries[i].EndpointID
		s := per[id]
		if s == nil {
			s = &summary{at: f.attempt.At}
			per[id] = s
			ids = append(ids, id)
		}
		s.result.Stop = s.result.Stop || f.result.Stop
		s.result.Delivered = s.result.Delivered || f.result.Delivered
		if f.attempt.At.Before(s.at) {
			s.at = f.attempt.At
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		s := per[id]
		if err := a.endpointHealth(ctx, b.Endpoints[id], s.result, s.at); err != nil {
			return err
		}
	}
	return nil
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
	ep, err := a.Store.Webhooks().EndpointByID(ctx, in.EndpointID)
	if errors.Is(err, payment.ErrNotFound) || err == nil && ep.Status != payment.WebhookEnabled {
		_ = a.Store.Webhooks().SetDeliveryStatus(ctx, in.DeliveryID, payment.DeliveryFailed, time.Now())
		return workflows.DeliverResult{Stop: true}, nil
	}
	if err != nil {
		return workflows.DeliverResult{}, err
	}
	ev, err := a.Store.Webhooks().EventByID(ctx, in.EventID)
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

	out, err := webhook.Send(ctx, a.Webhooks.Client, ep.URL, webhook.Message{EventID: ev.ID, Body: body, Secrets: secrets}, in.Attempt, at)
	if err != nil {
		return workflows.DeliverResult{}, temporal.NewNonRetryableApplicationError("cannot send: "+err.Error(), "url", err)
	}

	observe(out, ev.CreatedAt)
	result := resultOf(out)
	n, err := a.Store.Webhooks().RecordAttempt(ctx, in.DeliveryID, out.Attempt, out.Status())
	if err != nil {
		return result, err
	}
	result.Recorded = n
	return result, a.endpointHealth(ctx, ep, result, at)
}

// resultOf is an attempt's outcome as the workflows see it.
func resultOf(o webhook.Outcome) workflows.DeliverResult {
	r := workflows.DeliverResult{Delivered: o.Delivered, Stop: o.Stop, RetryAfter: o.RetryAfter}
	if o.Attempt.StatusCode != nil {
		r.StatusCode = *o.Attempt.StatusCode
	}
	return r
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
// clears the record. ep is the endpoint as last read: an outcome that
// changes nothing there (a success to an endpoint not failing, a failure
// of one failing already and not for long enough) writes nothing; any
// other change is made under the row's lock, on the row as it is then.
func (a *Activities) endpointHealth(ctx context.Context, ep store.StoredEndpoint, r workflows.DeliverResult, now time.Time) error {
	disableAfter := a.Webhooks.DisableAfter
	if disableAfter <= 0 {
		disableAfter = 5 * 24 * time.Hour
	}
	change := func(e *store.StoredEndpoint) error {
		// A row written anyway has its secrets sealed before they were
		// bound to their endpoint bound now.
		e.Secret, e.PreviousSecret = a.Webhooks.Sealer.Reseal(e.ID, e.Secret), a.Webhooks.Sealer.Reseal(e.ID, e.PreviousSecret)
		switch {
		case r.Delivered && !r.Stop:
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
	}
	after := ep
	_ = change(&after)
	if sameHealth(ep, after) {
		return nil
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
	_, _, err := a.Store.Webhooks().UpdateEndpointHealth(ctx, ep.ID, now, change, disabling)
	if errors.Is(err, payment.ErrNotFound) {
		return nil
	}
	return err
}

// sameHealth reports whether an endpoint's failure record, status and
// sealed secrets are the same in a and b.
func sameHealth(a, b store.StoredEndpoint) bool {
	return a.Status == b.Status && a.DisabledReason == b.DisabledReason && a.Secret == b.Secret &&
		a.PreviousSecret == b.PreviousSecret && (a.FailingSince == nil) == (b.FailingSince == nil) &&
		(a.FailingSince == nil || a.FailingSince.Equal(*b.FailingSince))
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
	return a.Store.Webhooks().SetDeliveryStatus(ctx, in.DeliveryID, in.Status, time.Now())
}
