package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service/internal/core"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/webhook"
)

// SecretOverlap is how long a rotated-out secret keeps signing beside the
// new one, so receivers can switch without missing a delivery.
const SecretOverlap = 24 * time.Hour

// Endpoint is a webhook endpoint as the API shows it; Secret is set only
// when it was just created or rotated.
type Endpoint struct {
	payment.WebhookEndpoint
	Secret string
}

func (svc Service) openSealer() (*webhook.Sealer, error) {
	if svc.Sealer == nil {
		return nil, &payment.Error{Kind: payment.KindUnavailable, Message: "Webhooks are not configured on this deployment (WEBHOOK_SECRET_KEY)"}
	}
	return svc.Sealer, nil
}

func (svc Service) endpoint(ctx context.Context, p payment.Principal, projectID, id string) (store.StoredEndpoint, error) {
	if err := core.OwnsID(p, projectID, payment.PrefixWebhook, id, "Webhook endpoint"); err != nil {
		return store.StoredEndpoint{}, err
	}
	ep, err := svc.Store.Webhooks().GetEndpoint(ctx, p, id)
	if errors.Is(err, payment.ErrNotFound) {
		return ep, payment.NotFound("Webhook endpoint")
	}
	return ep, err
}

// CreateWebhook creates an endpoint with a new secret, shown this once.
func (svc Service) CreateWebhook(ctx context.Context, p payment.Principal, projectID string, in payment.WebhookInput) (Endpoint, error) {
	if err := core.Owns(p, projectID); err != nil {
		return Endpoint{}, err
	}
	now := svc.Now()
	w := payment.WebhookEndpoint{ID: payment.NewID(payment.PrefixWebhook, now), ProjectID: p.ProjectID, IsLive: p.IsLive,
		Status: payment.WebhookEnabled, CreatedAt: now, UpdatedAt: now}
	if err := payment.ApplyWebhook(&w, in, true); err != nil {
		return Endpoint{}, err
	}
	s, err := svc.openSealer()
	if err != nil {
		return Endpoint{}, err
	}
	secret := webhook.NewSecret()
	sealed, err := s.Seal(w.ID, secret)
	if err != nil {
		return Endpoint{}, err
	}
	if err := svc.Audited(ctx, p.ProjectID, p.IsLive, payment.AuditWebhookCreated, "webhook_endpoint", w.ID,
		map[string]any{"url": w.URL, "enabledEvents": w.EnabledEvents}, func(ctx context.Context) error {
			return svc.Store.Webhooks().CreateEndpoint(ctx, store.StoredEndpoint{WebhookEndpoint: w, Secret: sealed})
		}); err != nil {
		return Endpoint{}, fmt.Errorf("create webhook: %w", err)
	}
	return Endpoint{WebhookEndpoint: w, Secret: secret}, nil
}

// GetWebhook returns one of the principal's endpoints.
func (svc Service) GetWebhook(ctx context.Context, p payment.Principal, projectID, id string) (Endpoint, error) {
	ep, err := svc.endpoint(ctx, p, projectID, id)
	return Endpoint{WebhookEndpoint: ep.WebhookEndpoint}, err
}

// ListWebhooks lists the principal's endpoints.
func (svc Service) ListWebhooks(ctx context.Context, p payment.Principal, projectID string, q payment.ListQuery) (core.Page[Endpoint], error) {
	if err := core.Owns(p, projectID); err != nil {
		return core.Page[Endpoint]{}, err
	}
	items, total, err := svc.Store.Webhooks().ListEndpoints(ctx, p, q)
	out := make([]Endpoint, len(items))
	for i, it := range items {
		out[i] = Endpoint{WebhookEndpoint: it.WebhookEndpoint}
	}
	return core.Page[Endpoint]{Items: out, Total: total, Query: q}, err
}

// UpdateWebhook changes an endpoint's url, description, events or status;
// re-enabling clears the failure record.
func (svc Service) UpdateWebhook(ctx context.Context, p payment.Principal, projectID, id string, in payment.WebhookInput) (Endpoint, error) {
	if _, err := svc.endpoint(ctx, p, projectID, id); err != nil {
		return Endpoint{}, err
	}
	var ep store.StoredEndpoint
	err := svc.Store.InTx(ctx, func(ctx context.Context) (err error) {
		ep, err = svc.Store.Webhooks().UpdateEndpoint(ctx, id, svc.Now(), func(s *store.StoredEndpoint) error {
			if err := payment.ApplyWebhook(&s.WebhookEndpoint, in, false); err != nil {
				return err
			}
			if s.Status == payment.WebhookEnabled {
				s.FailingSince = nil
			}
			svc.resealSecrets(s)
			return nil
		})
		if err != nil {
			return err
		}
		return svc.AuditIn(ctx, p.ProjectID, p.IsLive, payment.AuditWebhookUpdated, "webhook_endpoint", id,
			map[string]any{"url": ep.URL, "enabledEvents": ep.EnabledEvents, "status": ep.Status})
	})
	return Endpoint{WebhookEndpoint: ep.WebhookEndpoint}, err
}

// resealSecrets binds an endpoint's secrets sealed before secrets were
// bound to their endpoint, as the endpoint is written anyway.
func (svc Service) resealSecrets(ep *store.StoredEndpoint) {
	if svc.Sealer != nil {
		ep.Secret, ep.PreviousSecret = svc.Sealer.Reseal(ep.ID, ep.Secret), svc.Sealer.Reseal(ep.ID, ep.PreviousSecret)
	}
}

// DeleteWebhook deletes an endpoint; no delivery starts to it any more.
func (svc Service) DeleteWebhook(ctx context.Context, p payment.Principal, projectID, id string) error {
	if _, err := svc.endpoint(ctx, p, projectID, id); err != nil {
		return err
	}
	return svc.Audited(ctx, p.ProjectID, p.IsLive, payment.AuditWebhookDeleted, "webhook_endpoint", id, nil,
		func(ctx context.Context) error { return svc.Store.Webhooks().DeleteEndpoint(ctx, p, id, svc.Now()) })
}

// RotateWebhookSecret gives an endpoint a new secret, shown this once; the
// old one keeps signing beside it for SecretOverlap.
func (svc Service) RotateWebhookSecret(ctx context.Context, p payment.Principal, projectID, id string) (Endpoint, error) {
	if _, err := svc.endpoint(ctx, p, projectID, id); err != nil {
		return Endpoint{}, err
	}
	s, err := svc.openSealer()
	if err != nil {
		return Endpoint{}, err
	}
	secret := webhook.NewSecret()
	sealed, err := s.Seal(id, secret)
	if err != nil {
		return Endpoint{}, err
	}
	now := svc.Now()
	until := now.Add(SecretOverlap)
	var ep store.StoredEndpoint
	err = svc.Audited(ctx, p.ProjectID, p.IsLive, payment.AuditWebhookSecretRotated, "webhook_endpoint", id,
		map[string]any{"previousSecretValidUntil": until}, func(ctx context.Context) (err error) {
			ep, err = svc.Store.Webhooks().UpdateEndpoint(ctx, id, now, func(ep *store.StoredEndpoint) error {
				ep.PreviousSecret, ep.PreviousSecretUntil, ep.Secret = s.Reseal(id, ep.Secret), &until, sealed
				return nil
			})
			return err
		})
	return Endpoint{WebhookEndpoint: ep.WebhookEndpoint, Secret: secret}, err
}

// SendTestEvent records a webhook.test event and delivers it to one
// endpoint.
func (svc Service) SendTestEvent(ctx context.Context, p payment.Principal, projectID, id string) (payment.Event, error) {
	ep, err := svc.endpoint(ctx, p, projectID, id)
	if err != nil {
		return payment.Event{}, err
	}
	now := svc.Now()
	data, _ := json.Marshal(map[string]any{"webhookId": ep.ID, "message": "This is a test event from paymentsd."})
	ev := payment.Event{ID: payment.NewID(payment.PrefixEvent, now), ProjectID: ep.ProjectID, IsLive: ep.IsLive,
		Type: payment.EventWebhookTest, ObjectID: payment.NewID("test_", now), Version: 1, Data: data, CreatedAt: now}
	// The event, its delivery and the audit entry commit together; the
	// delivery's workflow starts after.
	var d store.Dispatch
	if err := svc.Audited(ctx, p.ProjectID, p.IsLive, payment.AuditWebhookTestSent, "webhook_endpoint", ep.ID, map[string]any{"eventId": ev.ID},
		func(ctx context.Context) (err error) {
			if err := svc.Store.Webhooks().InsertTestEvent(ctx, ev); err != nil {
				return err
			}
			d, err = svc.Store.Webhooks().CreateDelivery(ctx, ev, ep.ID, now)
			return err
		}); err != nil {
		return ev, err
	}
	return ev, svc.startDelivery(ctx, d, 1)
}

// RedeliveryWait bounds how long a redelivery waits for its attempt's
// outcome (an attempt times out at 15 s) before it answers that the
// attempt is under way.
const RedeliveryWait = 45 * time.Second

// ResealBatchSize is how many endpoints ResealWebhookSecrets seals again
// per database transaction, unless told otherwise.
const ResealBatchSize = 200

// ResealReport counts what ResealWebhookSecrets did.
type ResealReport struct {
	// KeyID is the key every secret is now sealed under.
	KeyID string
	// Endpoints were looked at (deleted ones included), Resealed were
	// sealed again, the others were current already; Failed were left
	// as they were, their secrets not opening (an error each).
	Endpoints int
	Resealed  int
	Failed    []store.ResealFailure
}

// ResealWebhookSecrets seals every endpoint's secrets (current and
// previous, deleted endpoints' too) under the newest key, batch endpoints
// per database transaction, so that an older key can be retired once it
// reports no failure. Running it again changes nothing; endpoints created
// or rotated meanwhile are sealed under the newest key already. Each
// endpoint resealed gets an audit entry, in the transaction that reseals
// it. progress, when set, hears each batch.
func (svc Service) ResealWebhookSecrets(ctx context.Context, batch int, progress func(ResealReport)) (ResealReport, error) {
	s, err := svc.openSealer()
	if err != nil {
		return ResealReport{}, err
	}
	if batch <= 0 {
		batch = ResealBatchSize
	}
	report := ResealReport{KeyID: s.NewestKeyID()}
	audit := func(ep payment.WebhookEndpoint) payment.AuditEntry {
		return svc.AuditEntry(ctx, ep.ProjectID, ep.IsLive, payment.AuditWebhookSecretResealed, "webhook_endpoint", ep.ID,
			map[string]any{"keyId": report.KeyID})
	}
	for after := ""; ; {
		b, err := svc.Store.Webhooks().ResealSecrets(ctx, after, batch, s.Update, audit)
		if err != nil {
			return report, fmt.Errorf("reseal webhook secrets: %w", err)
		}
		if b.Seen == 0 {
			return report, nil
		}
		report.Endpoints += b.Seen
		report.Resealed += len(b.Resealed)
		report.Failed = append(report.Failed, b.Failed...)
		if progress != nil {
			progress(report)
		}
		after = b.Last
	}
}
