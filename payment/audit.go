package payment

import (
	"context"
	"encoding/json"
	"time"
)

// Actions an audit entry records: every management change, named
// <resource>.<change>.
const (
	AuditPlanCreated           = "payment_plan.created"
	AuditPlanUpdated           = "payment_plan.updated"
	AuditPlanArchived          = "payment_plan.archived"
	AuditSessionCanceled       = "checkout_session.canceled"
	AuditSessionResolved       = "checkout_session.resolved"
	AuditTransactionAssigned   = "transaction.assigned"
	AuditRefundCreated         = "refund.created"
	AuditRefundAddressSet      = "refund.address_set"
	AuditRefundCanceled        = "refund.canceled"
	AuditRefundSent            = "refund.transaction_reported"
	AuditRefundApproved        = "refund.approved"
	AuditPayoutBatchCreated    = "payout_batch.created"
	AuditPayoutBatchApproved   = "payout_batch.approved"
	AuditPayoutBatchCanceled   = "payout_batch.canceled"
	AuditPayoutSent            = "payout.transaction_reported"
	AuditPayoutCanceled        = "payout.canceled"
	AuditWebhookCreated        = "webhook_endpoint.created"
	AuditWebhookUpdated        = "webhook_endpoint.updated"
	AuditWebhookDeleted        = "webhook_endpoint.deleted"
	AuditWebhookSecretRotated  = "webhook_endpoint.secret_rotated"
	AuditWebhookSecretResealed = "webhook_endpoint.secret_resealed"
	AuditWebhookDisabled       = "webhook_endpoint.disabled"
	AuditWebhookTestSent       = "webhook_endpoint.test_sent"
	AuditDeliveryRedelivered   = "webhook_delivery.redelivered"
	AuditDepositKeySet         = "deposit_key.set"
	AuditBitcoinKeySet         = "bitcoin_deposit_key.set"
	AuditAPIKeyCreated         = "api_key.created"
	AuditAPIKeyRevoked         = "api_key.revoked"
	AuditAPIKeyRolled          = "api_key.rolled"
	AuditMemberInvited         = "member.invited"
	AuditMemberJoined          = "member.joined"
	AuditMemberRoleChanged     = "member.role_changed"
	AuditMemberRemoved         = "member.removed"
	AuditInvitationRevoked     = "invitation.revoked"
	AuditProjectUpdated        = "project.updated"
	AuditOAuthClientCreated    = "oauth_client.created"
	AuditOAuthClientRevoked    = "oauth_client.revoked"
	AuditOAuthGrantCreated     = "oauth_grant.created"
	AuditOAuthGrantRevoked     = "oauth_grant.revoked"
	AuditActorAPIKey           = "api_key"
	// AuditActorUser is a signed-in member (the dashboard's cookie).
	AuditActorUser  = "user"
	AuditActorAdmin = "admin"
	// AuditActorOAuthApp is an application acting with an OAuth access
	// token; the actor ID is its grant's.
	AuditActorOAuthApp = "oauth_app"
	// AuditActorInternal is the engine acting on its own: the dev stack's
	// set-up, or the delivery path disabling a failing endpoint.
	AuditActorInternal = "internal"
)

// AuditActions lists every action, for the list's filter.
var AuditActions = []string{AuditPlanCreated, AuditPlanUpdated, AuditPlanArchived, AuditSessionCanceled, AuditSessionResolved,
	AuditTransactionAssigned, AuditRefundCreated, AuditRefundAddressSet, AuditRefundCanceled, AuditRefundSent, AuditRefundApproved,
	AuditPayoutBatchCreated, AuditPayoutBatchApproved, AuditPayoutBatchCanceled, AuditPayoutSent, AuditPayoutCanceled,
	AuditWebhookCreated, AuditWebhookUpdated, AuditWebhookDeleted, AuditWebhookSecretRotated, AuditWebhookSecretResealed, AuditWebhookDisabled, AuditWebhookTestSent,
	AuditDeliveryRedelivered, AuditDepositKeySet, AuditBitcoinKeySet, AuditAPIKeyCreated, AuditAPIKeyRevoked, AuditAPIKeyRolled,
	AuditMemberInvited, AuditMemberJoined, AuditMemberRoleChanged, AuditMemberRemoved, AuditInvitationRevoked, AuditProjectUpdated,
	AuditOAuthClientCreated, AuditOAuthClientRevoked, AuditOAuthGrantCreated, AuditOAuthGrantRevoked}

// Origin is who makes a change and from where: an API key from a client
// address, or an operator's `paymentsd admin` command on a host.
type Origin struct {
	ActorKind string // AuditActorAPIKey or AuditActorAdmin
	ActorID   string // the key's ID, or the operator's OS user
	IP        string // the client's address, or the admin command's host name
	UserAgent string
}

type originKey struct{}

// WithOrigin returns ctx carrying the origin of the changes made under it.
func WithOrigin(ctx context.Context, o Origin) context.Context {
	return context.WithValue(ctx, originKey{}, o)
}

// OriginOf returns the origin ctx carries (zero when none).
func OriginOf(ctx context.Context) Origin {
	o, _ := ctx.Value(originKey{}).(Origin)
	return o
}

// AuditEntry is one management change: who, when, from where, and what.
// Details never hold a secret.
type AuditEntry struct {
	ID         string
	ProjectID  string
	IsLive     bool
	OccurredAt time.Time
	Origin
	Action     string
	TargetType string
	TargetID   string
	Details    json.RawMessage
}
