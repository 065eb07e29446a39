package webhooks

import (
	"github.com/paymentsd/paymentsd/api/internal/rest"
	"github.com/paymentsd/paymentsd/payment"
)

// decodeWebhookInput reads a webhook endpoint's create or update payload.
func decodeWebhookInput(body []byte) (payment.WebhookInput, error) {
	obj, err := rest.ParseObject(body)
	if err != nil {
		return payment.WebhookInput{}, err
	}
	var probs payment.Problems
	f := rest.NewFields(obj, "", &probs)
	in := payment.WebhookInput{URL: f.Str("url"), Description: f.Str("description"),
		EnabledEvents: f.Strings("enabledEvents"), Status: f.Str("status")}
	f.Done()
	in.Problems = probs
	return in, nil
}
