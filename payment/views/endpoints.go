package views

import (
	"encoding/json"

	"github.com/paymentsd/paymentsd/payment"
)

// Webhook is a webhook endpoint as the API returns it; Secret only right
// after creation or rotation.
type Webhook struct {
	ID             string   `json:"id"`
	ProjectID      string   `json:"projectId"`
	IsLive         bool     `json:"isLive"`
	URL            string   `json:"url"`
	Description    string   `json:"description"`
	EnabledEvents  []string `json:"enabledEvents"`
	Status         string   `json:"status"`
	DisabledReason *string  `json:"disabledReason"`
	Secret         *string  `json:"secret,omitempty"`
	CreatedAt      string   `json:"createdAt"`
	UpdatedAt      string   `json:"updatedAt"`
}

// WebhookOf renders an endpoint.
func WebhookOf(w payment.WebhookEndpoint, secret string) Webhook {
	v := Webhook{ID: w.ID, ProjectID: w.ProjectID, IsLive: w.IsLive, URL: w.URL, Description: w.Description,
		EnabledEvents: w.EnabledEvents, Status: w.Status, DisabledReason: nonEmpty(w.DisabledReason),
		CreatedAt: Time(w.CreatedAt), UpdatedAt: Time(w.UpdatedAt)}
	if secret != "" {
		v.Secret = &secret
	}
	return v
}

// WebhookDisabled is the data of a webhook_endpoint.disabled event: the
// endpoint as the API returns it, disabled, and when it was.
type WebhookDisabled struct {
	Webhook
	DisabledAt string `json:"disabledAt"`
}

// WebhookDisabledEvent renders an endpoint the engine disabled at its
// updatedAt as the data of its event with version.
func WebhookDisabledEvent(w payment.WebhookEndpoint, version int) ([]byte, error) {
	return Versioned(WebhookDisabled{Webhook: WebhookOf(w, ""), DisabledAt: Time(w.UpdatedAt)}, version)
}

// Event is an event as the API returns it (and as webhooks deliver it).
type Event struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	Timestamp string          `json:"timestamp"`
	ProjectID string          `json:"projectId"`
	IsLive    bool            `json:"isLive"`
	Data      json.RawMessage `json:"data"`
}

// EventOf renders an event.
func EventOf(ev payment.Event) Event {
	return Event{ID: ev.ID, Type: string(ev.Type), Timestamp: Time(ev.CreatedAt), ProjectID: ev.ProjectID, IsLive: ev.IsLive, Data: ev.Data}
}
