// Package webhooks is the service's area of webhooks: endpoints and their
// sealed secrets, events and their feed, deliveries and redeliveries. It
// builds on no other area.
package webhooks

import (
	"github.com/paymentsd/paymentsd/service/internal/core"
)

// Service is the operations on endpoints, events and deliveries: a view of the
// service's one floor (core.Core), which it embeds.
type Service struct{ *core.Core }
