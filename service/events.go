package service

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/workflows"
)

func (svc Webhooks) startDelivery(ctx context.Context, d store.Dispatch, first int) error {
	in := workflows.DeliveryInput{DeliveryID: d.DeliveryID, EventID: d.EventID, EndpointID: d.EndpointID, FirstAttempt: first}
	_, err := svc.temporal.ExecuteWorkflow(ctx, workflows.WebhookDeliveryStartOptions(in, d.ProjectID, d.IsLive), workflows.WebhookDelivery, in)
	if err != nil {
		return fmt.Errorf("start delivery: %w", err)
	}
	return nil
}

// ListEvents lists the principal's events; q.Status filters by type.
func (svc Webhooks) ListEvents(ctx context.Context, p payment.Principal, projectID string, q payment.ListQuery) (Page[payment.Event], error) {
	if err := owns(p, projectID); err != nil {
		return Page[payment.Event]{}, err
	}
	items, total, err := svc.store.Webhooks().ListEvents(ctx, p, q)
	return Page[payment.Event]{items, total, q}, err
}

// FeedEvents reads a page of the principal's events as a feed: oldest
// first, each once, from q.Since or from q.After (store.FeedEvents).
func (svc Webhooks) FeedEvents(ctx context.Context, p payment.Principal, projectID string, q payment.FeedQuery) (payment.EventFeedPage, error) {
	if err := owns(p, projectID); err != nil {
		return payment.EventFeedPage{}, err
	}
	return svc.store.Webhooks().FeedEvents(ctx, p, q)
}

// GetEvent returns one of the principal's events.
func (svc Webhooks) GetEvent(ctx context.Context, p payment.Principal, projectID, id string) (payment.Event, error) {
	if err := ownsID(p, projectID, payment.PrefixEvent, id, "Event"); err != nil {
		return payment.Event{}, err
	}
	ev, err := svc.store.Webhooks().GetEvent(ctx, p, id)
	if errors.Is(err, payment.ErrNotFound) {
		return ev, payment.NotFound("Event")
	}
	return ev, err
}

// ListDeliveries lists an endpoint's deliveries with their attempts;
// q.Status filters by delivery status.
func (svc Webhooks) ListDeliveries(ctx context.Context, p payment.Principal, projectID, id string, q payment.ListQuery) (Page[payment.Delivery], error) {
	if _, err := svc.endpoint(ctx, p, projectID, id); err != nil {
		return Page[payment.Delivery]{}, err
	}
	items, total, err := svc.store.Webhooks().ListDeliveries(ctx, p, id, q)
	return Page[payment.Delivery]{items, total, q}, err
}

// ListEventDeliveries lists an event's deliveries to every endpoint of
// the project, with their attempts.
func (svc Webhooks) ListEventDeliveries(ctx context.Context, p payment.Principal, projectID, eventID string, q payment.ListQuery) (Page[payment.Delivery], error) {
	if _, err := svc.GetEvent(ctx, p, projectID, eventID); err != nil {
		return Page[payment.Delivery]{}, err
	}
	items, total, err := svc.store.Webhooks().ListEventDeliveries(ctx, p, eventID, q)
	return Page[payment.Delivery]{items, total, q}, err
}

// Redeliver delivers an event to an endpoint again, now, with the same
// webhook-id: a delivery still in its retry schedule makes its next attempt
// at once (the schedule goes on if it fails), an ended one starts again
// with a fresh schedule. It waits for that attempt's outcome.
func (svc Webhooks) Redeliver(ctx context.Context, p payment.Principal, projectID, endpointID, deliveryID string) (Redelivery, error) {
	if _, err := svc.endpoint(ctx, p, projectID, endpointID); err != nil {
		return Redelivery{}, err
	}
	d, err := svc.store.Webhooks().GetDelivery(ctx, p, endpointID, deliveryID)
	if errors.Is(err, payment.ErrNotFound) {
		return Redelivery{}, payment.NotFound("Delivery")
	}
	if err != nil {
		return Redelivery{}, err
	}
	if err := svc.audited(ctx, p.ProjectID, p.IsLive, payment.AuditDeliveryRedelivered, "webhook_delivery", d.ID,
		map[string]any{"webhookId": endpointID, "eventId": d.EventID}, func(ctx context.Context) error {
			return svc.store.Webhooks().SetDeliveryStatus(ctx, d.ID, payment.DeliveryPending, svc.now())
		}); err != nil {
		return Redelivery{}, err
	}
	in := workflows.DeliveryInput{DeliveryID: d.ID, EventID: d.EventID, EndpointID: d.EndpointID, FirstAttempt: len(d.Attempts) + 1}
	start := svc.temporal.NewWithStartWorkflowOperation(workflows.WebhookDeliveryStartOptions(in, p.ProjectID, p.IsLive), workflows.WebhookDelivery, in)
	h, err := svc.temporal.UpdateWithStartWorkflow(ctx, workflows.AttemptNowOptions(start))
	if err != nil {
		var app *temporal.ApplicationError
		if !errors.As(err, &app) {
			return Redelivery{}, fmt.Errorf("redeliver: %w", err)
		}
		// A delivery started before redeliveries were made at once: its
		// next attempt comes on its schedule.
		d.Status = payment.DeliveryPending
		return Redelivery{Delivery: d}, nil
	}
	wait, cancel := context.WithTimeout(ctx, RedeliveryWait)
	defer cancel()
	var out workflows.AttemptNowResult
	if err := h.Get(wait, &out); err != nil {
		d.Status = payment.DeliveryPending
		return Redelivery{Delivery: d}, nil // under way; its attempt will be in the list
	}
	if d, err = svc.store.Webhooks().GetDelivery(ctx, p, endpointID, deliveryID); err != nil {
		return Redelivery{}, err
	}
	return Redelivery{Delivery: d, Attempt: &out}, nil
}

// Redelivery is a redelivery's answer: the delivery as it stands after the
// attempt, and the attempt's outcome (nil when it was not waited for).
type Redelivery struct {
	Delivery payment.Delivery
	Attempt  *workflows.AttemptNowResult
}
