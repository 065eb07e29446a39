package webhooks

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service/internal/core"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/workflows"
)

func (svc Service) startDelivery(ctx context.Context, d store.Dispatch, first int) error {
	in := workflows.DeliveryInput{DeliveryID: d.DeliveryID, EventID: d.EventID, EndpointID: d.EndpointID, FirstAttempt: first}
	_, err := svc.Temporal.ExecuteWorkflow(ctx, workflows.WebhookDeliveryStartOptions(in, d.ProjectID, d.IsLive), workflows.WebhookDelivery, in)
	if err != nil {
		return fmt.Errorf("start delivery: %w", err)
	}
	return nil
}

// ListEvents lists the principal's events; q.Status filters by type.
func (svc Service) ListEvents(ctx context.Context, p payment.Principal, projectID string, q payment.ListQuery) (core.Page[payment.Event], error) {
	if err := core.Owns(p, projectID); err != nil {
		return core.Page[payment.Event]{}, err
	}
	items, total, err := svc.Store.Webhooks().ListEvents(ctx, p, q)
	return core.Page[payment.Event]{Items: items, Total: total, Query: q}, err
}

// FeedEvents reads a page of the principal's events as a feed: oldest
// first, each once, from q.Since or from q.After (store.FeedEvents).
func (svc Service) FeedEvents(ctx context.Context, p payment.Principal, projectID string, q payment.FeedQuery) (payment.EventFeedPage, error) {
	if err := core.Owns(p, projectID); err != nil {
		return payment.EventFeedPage{}, err
	}
	return svc.Store.Webhooks().FeedEvents(ctx, p, q)
}

// GetEvent returns one of the principal's events.
func (svc Service) GetEvent(ctx context.Context, p payment.Principal, projectID, id string) (payment.Event, error) {
	if err := core.OwnsID(p, projectID, payment.PrefixEvent, id, "Event"); err != nil {
		return payment.Event{}, err
	}
	ev, err := svc.Store.Webhooks().GetEvent(ctx, p, id)
	if errors.Is(err, payment.ErrNotFound) {
		return ev, payment.NotFound("Event")
	}
	return ev, err
}

// ListDeliveries lists an endpoint's deliveries with their attempts;
// q.Status filters by delivery status.
func (svc Service) ListDeliveries(ctx context.Context, p payment.Principal, projectID, id string, q payment.ListQuery) (core.Page[payment.Delivery], error) {
	if _, err := svc.endpoint(ctx, p, projectID, id); err != nil {
		return core.Page[payment.Delivery]{}, err
	}
	items, total, err := svc.Store.Webhooks().ListDeliveries(ctx, p, id, q)
	return core.Page[payment.Delivery]{Items: items, Total: total, Query: q}, err
}

// ListEventDeliveries lists an event's deliveries to every endpoint of
// the project, with their attempts.
func (svc Service) ListEventDeliveries(ctx context.Context, p payment.Principal, projectID, eventID string, q payment.ListQuery) (core.Page[payment.Delivery], error) {
	if _, err := svc.GetEvent(ctx, p, projectID, eventID); err != nil {
		return core.Page[payment.Delivery]{}, err
	}
	items, total, err := svc.Store.Webhooks().ListEventDeliveries(ctx, p, eventID, q)
	return core.Page[payment.Delivery]{Items: items, Total: total, Query: q}, err
}

// Redeliver delivers an event to an endpoint again, now, with the same
// webhook-id: a delivery still in its retry schedule makes its next attempt
// at once (the schedule goes on if it fails), an ended one starts again
// with a fresh schedule. It waits for that attempt's outcome.
func (svc Service) Redeliver(ctx context.Context, p payment.Principal, projectID, endpointID, deliveryID string) (Redelivery, error) {
	if _, err := svc.endpoint(ctx, p, projectID, endpointID); err != nil {
		return Redelivery{}, err
	}
	d, err := svc.Store.Webhooks().GetDelivery(ctx, p, endpointID, deliveryID)
	if errors.Is(err, payment.ErrNotFound) {
		return Redelivery{}, payment.NotFound("Delivery")
	}
	if err != nil {
		return Redelivery{}, err
	}
	if err := svc.Audited(ctx, p.ProjectID, p.IsLive, payment.AuditDeliveryRedelivered, "webhook_delivery", d.ID,
		map[string]any{"webhookId": endpointID, "eventId": d.EventID}, func(ctx context.Context) error {
			return svc.Store.Webhooks().SetDeliveryStatus(ctx, d.ID, payment.DeliveryPending, svc.Now())
		}); err != nil {
		return Redelivery{}, err
	}
	in := workflows.DeliveryInput{DeliveryID: d.ID, EventID: d.EventID, EndpointID: d.EndpointID, FirstAttempt: len(d.Attempts) + 1}
	start := svc.Temporal.NewWithStartWorkflowOperation(workflows.WebhookDeliveryStartOptions(in, p.ProjectID, p.IsLive), workflows.WebhookDelivery, in)
	h, err := svc.Temporal.UpdateWithStartWorkflow(ctx, workflows.AttemptNowOptions(start))
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
	if d, err = svc.Store.Webhooks().GetDelivery(ctx, p, endpointID, deliveryID); err != nil {
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
