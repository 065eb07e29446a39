package payment

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Webhook endpoint statuses.
const (
	WebhookEnabled  = "enabled"
	WebhookDisabled = "disabled"
)

// Statuses of an event's delivery to an endpoint: pending while attempts
// go on, delivered once one got a 2xx, failed once the schedule ran out or
// the endpoint is gone.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
)

// DeliveryStatuses are the values the deliveries list filters by.
var DeliveryStatuses = []string{DeliveryPending, DeliveryDelivered, DeliveryFailed}

// WebhookEndpoint is where a project's events are delivered.
type WebhookEndpoint struct {
	ID             string
	ProjectID      string
	IsLive         bool
	URL            string
	Description    string
	EnabledEvents  []string
	Status         string
	DisabledReason string
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// Wants reports whether the endpoint takes events of type typ.
func (w WebhookEndpoint) Wants(typ EventType) bool {
	return w.Status == WebhookEnabled && (slices.Contains(w.EnabledEvents, "*") || slices.Contains(w.EnabledEvents, string(typ)))
}

// WebhookInput is a create or update payload; nil fields are left as
// they are on update.
type WebhookInput struct {
	URL           *string
	Description   *string
	EnabledEvents []string
	Status        *string
	Problems      Problems
}

// ApplyWebhook validates in and applies it to w (a new endpoint when
// creating). A live endpoint needs an https URL.
func ApplyWebhook(w *WebhookEndpoint, in WebhookInput, creating bool) error {
	probs := slices.Clone(in.Problems)
	var mine Problems
	if in.URL == nil && creating {
		mine.Add("url", "is required")
	}
	if in.URL != nil {
		u, err := url.Parse(*in.URL)
		switch {
		case len(*in.URL) > MaxURLLength:
			mine.Addf("url", "must be at most %d characters", MaxURLLength)
		case err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || u.User != nil:
			mine.Add("url", "must be an absolute http(s) URL without credentials")
		case w.IsLive && u.Scheme != "https":
			mine.Add("url", "must be an https URL in live mode")
		default:
			w.URL = *in.URL
		}
	}
	if in.Description != nil {
		if utf8.RuneCountInString(*in.Description) > 500 {
			mine.Add("description", "must be at most 500 characters")
		}
		w.Description = *in.Description
	}
	if in.EnabledEvents != nil || creating {
		events := in.EnabledEvents
		if len(events) == 0 {
			mine.Add("enabledEvents", `must list event types, or ["*"] for every type`)
		}
		for i, e := range events {
			if e != "*" && !slices.Contains(EventTypes, EventType(e)) {
				mine.Add(fmt.Sprintf("enabledEvents[%d]", i), "is not an event type ("+strings.Join(EventTypeNames(), ", ")+")")
			}
		}
		w.EnabledEvents = events
	}
	if in.Status != nil {
		switch *in.Status {
		case WebhookEnabled:
			w.Status, w.DisabledReason = WebhookEnabled, ""
		case WebhookDisabled:
			w.Status, w.DisabledReason = WebhookDisabled, "disabled by the merchant"
		default:
			mine.Add("status", "must be enabled or disabled")
		}
	}
	probs.Merge(mine)
	return probs.Err()
}
