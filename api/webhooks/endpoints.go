package webhooks

import (
	"fmt"
	"net/http"

	"github.com/paymentsd/paymentsd/api/internal/rest"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/payment/views"
	"github.com/paymentsd/paymentsd/service"
)

func webhookView(e service.Endpoint) views.Webhook {
	return views.WebhookOf(e.WebhookEndpoint, e.Secret)
}

func (s Handlers) CreateWebhook(w http.ResponseWriter, r *http.Request) error {
	in, err := rest.BodyOf(r, decodeWebhookInput)
	if err != nil {
		return err
	}
	return rest.Respond(w, r, http.StatusCreated, "Webhook endpoint created; store its secret now, it is shown once", webhookView)(s.Svc.Webhooks().CreateWebhook(r.Context(), rest.Principal(r), r.PathValue("projectId"), in))
}

func (s Handlers) ListWebhooks(w http.ResponseWriter, r *http.Request) error {
	q, err := rest.ParseListQuery(r.URL.Query(), []string{payment.WebhookEnabled, payment.WebhookDisabled})
	if err != nil {
		return err
	}
	return rest.RespondPage(w, r, "Webhook endpoints retrieved", q, webhookView)(s.Svc.Webhooks().ListWebhooks(r.Context(), rest.Principal(r), r.PathValue("projectId"), q))
}

func (s Handlers) GetWebhook(w http.ResponseWriter, r *http.Request) error {
	return rest.Respond(w, r, http.StatusOK, "Webhook endpoint retrieved", webhookView)(s.Svc.Webhooks().GetWebhook(r.Context(), rest.Principal(r), r.PathValue("projectId"), r.PathValue("webhookId")))
}

func (s Handlers) UpdateWebhook(w http.ResponseWriter, r *http.Request) error {
	in, err := rest.BodyOf(r, decodeWebhookInput)
	if err != nil {
		return err
	}
	return rest.Respond(w, r, http.StatusOK, "Webhook endpoint updated", webhookView)(s.Svc.Webhooks().UpdateWebhook(r.Context(), rest.Principal(r), r.PathValue("projectId"), r.PathValue("webhookId"), in))
}

func (s Handlers) DeleteWebhook(w http.ResponseWriter, r *http.Request) error {
	if err := s.Svc.Webhooks().DeleteWebhook(r.Context(), rest.Principal(r), r.PathValue("projectId"), r.PathValue("webhookId")); err != nil {
		return err
	}
	rest.OK(w, r, http.StatusOK, "Webhook endpoint deleted", map[string]string{"id": r.PathValue("webhookId")})
	return nil
}

func (s Handlers) RotateWebhookSecret(w http.ResponseWriter, r *http.Request) error {
	ep, err := s.Svc.Webhooks().RotateWebhookSecret(r.Context(), rest.Principal(r), r.PathValue("projectId"), r.PathValue("webhookId"))
	if err != nil {
		return err
	}
	rest.OK(w, r, http.StatusOK, fmt.Sprintf("Secret rotated; the previous secret keeps signing for %s", service.SecretOverlap), webhookView(ep))
	return nil
}

func (s Handlers) eventView(ev payment.Event) views.Event {
	return views.ShapedEventOf(s.Shape, ev)
}

func (s Handlers) SendTestEvent(w http.ResponseWriter, r *http.Request) error {
	return rest.Respond(w, r, http.StatusAccepted, "Test event sent", s.eventView)(s.Svc.Webhooks().SendTestEvent(r.Context(), rest.Principal(r), r.PathValue("projectId"), r.PathValue("webhookId")))
}

// ListEvents lists events newest first by page, or, with since or after,
// reads them as a feed: oldest first, by cursor (meta.nextCursor).
func (s Handlers) ListEvents(w http.ResponseWriter, r *http.Request) error {
	q, feed, err := rest.ParseEventsQuery(r.URL.Query(), append(payment.EventTypeNames(), string(payment.EventWebhookTest)))
	if err != nil {
		return err
	}
	if feed {
		page, err := s.Svc.Webhooks().FeedEvents(r.Context(), rest.Principal(r), r.PathValue("projectId"), q)
		if err != nil {
			return err
		}
		rest.OKFeed(w, r, "Events retrieved", rest.MapSlice(page.Events, s.eventView), q, page)
		return nil
	}
	return rest.RespondPage(w, r, "Events retrieved", q.ListQuery, s.eventView)(s.Svc.Webhooks().ListEvents(r.Context(), rest.Principal(r), r.PathValue("projectId"), q.ListQuery))
}

func (s Handlers) GetEvent(w http.ResponseWriter, r *http.Request) error {
	return rest.Respond(w, r, http.StatusOK, "Event retrieved", s.eventView)(s.Svc.Webhooks().GetEvent(r.Context(), rest.Principal(r), r.PathValue("projectId"), r.PathValue("eventId")))
}

type deliveryView struct {
	ID          string            `json:"id"`
	EventID     string            `json:"eventId"`
	EventType   string            `json:"eventType"`
	WebhookID   string            `json:"webhookId"`
	Status      string            `json:"status"`
	Attempts    []payment.Attempt `json:"attempts"`
	DeliveredAt *string           `json:"deliveredAt"`
	CreatedAt   string            `json:"createdAt"`
	UpdatedAt   string            `json:"updatedAt"`
}

// answer names a receiver's answer to an attempt.
func answer(status int) string {
	if status == 0 {
		return "no answer"
	}
	return fmt.Sprintf("HTTP %d", status)
}

func viewDelivery(d payment.Delivery) deliveryView {
	v := deliveryView{ID: d.ID, EventID: d.EventID, EventType: string(d.EventType), WebhookID: d.EndpointID, Status: d.Status,
		Attempts: d.Attempts, CreatedAt: views.Time(d.CreatedAt), UpdatedAt: views.Time(d.UpdatedAt)}
	if d.DeliveredAt != nil {
		t := views.Time(*d.DeliveredAt)
		v.DeliveredAt = &t
	}
	if v.Attempts == nil {
		v.Attempts = []payment.Attempt{}
	}
	return v
}

func (s Handlers) ListDeliveries(w http.ResponseWriter, r *http.Request) error {
	q, err := rest.ParseListQuery(r.URL.Query(), payment.DeliveryStatuses)
	if err != nil {
		return err
	}
	return rest.RespondPage(w, r, "Deliveries retrieved", q, viewDelivery)(s.Svc.Webhooks().ListDeliveries(r.Context(), rest.Principal(r), r.PathValue("projectId"), r.PathValue("webhookId"), q))
}

// ListEventDeliveries lists an event's deliveries to every endpoint.
func (s Handlers) ListEventDeliveries(w http.ResponseWriter, r *http.Request) error {
	q, err := rest.ParseListQuery(r.URL.Query(), payment.DeliveryStatuses)
	if err != nil {
		return err
	}
	return rest.RespondPage(w, r, "Deliveries retrieved", q, viewDelivery)(s.Svc.Webhooks().ListEventDeliveries(r.Context(), rest.Principal(r), r.PathValue("projectId"), r.PathValue("eventId"), q))
}

func (s Handlers) Redeliver(w http.ResponseWriter, r *http.Request) error {
	rd, err := s.Svc.Webhooks().Redeliver(r.Context(), rest.Principal(r), r.PathValue("projectId"), r.PathValue("webhookId"), r.PathValue("deliveryId"))
	if err != nil {
		return err
	}
	a := rd.Attempt
	switch {
	case a == nil:
		rest.OK(w, r, http.StatusAccepted, "Redelivery started; its attempt is under way or due on the delivery's schedule", viewDelivery(rd.Delivery))
	case a.Delivered:
		rest.OK(w, r, http.StatusOK, fmt.Sprintf("Delivered now (attempt %d)", a.Attempt), viewDelivery(rd.Delivery))
	case a.Stop:
		rest.OK(w, r, http.StatusOK, fmt.Sprintf("Not delivered (attempt %d): the endpoint is disabled, deleted or answered 410", a.Attempt), viewDelivery(rd.Delivery))
	case a.NextAttempt != nil:
		rest.OK(w, r, http.StatusOK, fmt.Sprintf("Attempt %d failed (%s); the next attempt is at %s", a.Attempt, answer(a.StatusCode), views.Time(*a.NextAttempt)), viewDelivery(rd.Delivery))
	default:
		rest.OK(w, r, http.StatusOK, fmt.Sprintf("Attempt %d failed (%s); it was the last of the schedule", a.Attempt, answer(a.StatusCode)), viewDelivery(rd.Delivery))
	}
	return nil
}
