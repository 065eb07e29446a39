package workflows

import (
	"go.temporal.io/sdk/temporal"

	"github.com/paymentsd/paymentsd/payment"
)

// Custom search attributes, so that an operator finds a payment in the
// Temporal UI by project, session, status or network. The worker registers
// them with the namespace at start.
var (
	ProjectID         = temporal.NewSearchAttributeKeyKeyword("ProjectId")
	CheckoutSessionID = temporal.NewSearchAttributeKeyKeyword("CheckoutSessionId")
	PaymentStatus     = temporal.NewSearchAttributeKeyKeyword("PaymentStatus")
	Network           = temporal.NewSearchAttributeKeyKeyword("Network")
	IsLive            = temporal.NewSearchAttributeKeyBool("IsLive")
)

// sessionSearchAttributes are a session workflow's attributes at start.
func sessionSearchAttributes(s payment.Session) temporal.SearchAttributes {
	return temporal.NewSearchAttributes(ProjectID.ValueSet(s.ProjectID), CheckoutSessionID.ValueSet(s.ID),
		PaymentStatus.ValueSet(string(s.Status)), IsLive.ValueSet(s.IsLive))
}

func transactionSearchAttributes(s payment.Session, p SessionTransfer) temporal.SearchAttributes {
	return temporal.NewSearchAttributes(ProjectID.ValueSet(s.ProjectID), CheckoutSessionID.ValueSet(s.ID),
		PaymentStatus.ValueSet(string(payment.TxPending)), Network.ValueSet(p.Network), IsLive.ValueSet(s.IsLive))
}

// networkSearchAttributes are a chainwatch workflow's attributes.
func networkSearchAttributes(network string) temporal.SearchAttributes {
	return temporal.NewSearchAttributes(Network.ValueSet(network))
}

// deliverySearchAttributes are a webhook delivery workflow's attributes.
func deliverySearchAttributes(projectID string, isLive bool) temporal.SearchAttributes {
	return temporal.NewSearchAttributes(ProjectID.ValueSet(projectID), IsLive.ValueSet(isLive))
}
