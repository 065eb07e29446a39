package service

import (
	"github.com/paymentsd/paymentsd/service/access"
	"github.com/paymentsd/paymentsd/service/chains"
	"github.com/paymentsd/paymentsd/service/checkout"
	"github.com/paymentsd/paymentsd/service/identity"
	"github.com/paymentsd/paymentsd/service/internal/core"
	"github.com/paymentsd/paymentsd/service/moneyout"
	"github.com/paymentsd/paymentsd/service/payments"
	"github.com/paymentsd/paymentsd/service/webhooks"
)

// The service's operations by area. Each area is a package of its own
// (service/identity, service/access, service/checkout, service/payments,
// service/moneyout, service/webhooks, service/chains) whose Service holds
// the one floor every area shares (service/internal/core: the store, the
// Temporal client, the chains, the clock, the audit entry a change writes
// with it, workflow updates). A transport names the area it calls:
// svc.Checkout().CreateSession(...). The names below are the areas' own,
// under the names callers have always used.

// Identity: accounts, sign-up and sign-in, sign-in sessions, passkeys,
// passwords and the account's security log.
type Identity = identity.Service

// Access: who may do what in a project: members and invitations, API
// keys, the principal of a request, OAuth applications and their grants,
// and the audit log.
type Access = access.Service

// Checkout: projects, plans, deposit keys and addresses, shared
// recipients, and checkout sessions with their quotes.
type Checkout = checkout.Service

// Payments: money in: transactions, a payer's submitted hash, assignment
// of a transfer to a session, the overview and exports.
type Payments = payments.Service

// MoneyOut: refunds, payouts, and the outgoing transactions that pay them.
type MoneyOut = moneyout.Service

// Webhooks: endpoints, events and deliveries.
type Webhooks = webhooks.Service

// Chains: the networks' readiness, rescans, and the reconciliation of the
// records with the chains, money in and out.
type Chains = chains.Service

// Identity is the service's operations on accounts and sign-in.
func (svc *Service) Identity() Identity { return identity.Service{Core: svc.core} }

// Access is the service's operations on members, keys and applications.
func (svc *Service) Access() Access { return access.Service{Core: svc.core} }

// Checkout is the service's operations on projects, plans and sessions.
func (svc *Service) Checkout() Checkout { return checkout.Service{Core: svc.core} }

// Payments is the service's operations on money in.
func (svc *Service) Payments() Payments { return payments.Service{Core: svc.core} }

// MoneyOut is the service's operations on refunds and payouts.
func (svc *Service) MoneyOut() MoneyOut { return moneyout.Service{Core: svc.core} }

// Webhooks is the service's operations on endpoints, events and deliveries.
func (svc *Service) Webhooks() Webhooks { return webhooks.Service{Core: svc.core} }

// Chains is the service's operations on the networks and reconciliation.
func (svc *Service) Chains() Chains { return chains.Service{Core: svc.core} }

// Page is one page of a list.
type Page[T any] = core.Page[T]

// Identity's names.
type (
	SignedIn  = identity.SignedIn
	Client    = identity.Client
	SignedOut = identity.SignedOut
	Proof     = identity.Proof
)

const (
	SessionIdle       = identity.SessionIdle
	SessionAbsolute   = identity.SessionAbsolute
	ChallengeLifetime = identity.ChallengeLifetime
)

var (
	ErrBadLogin      = identity.ErrBadLogin
	ErrBadPasskey    = identity.ErrBadPasskey
	ErrClonedPasskey = identity.ErrClonedPasskey
)

// Access's names.
const (
	MaxKeyGrace                  = access.MaxKeyGrace
	InvitationLifetime           = access.InvitationLifetime
	GrantsEndPasswordChanged     = access.GrantsEndPasswordChanged
	GrantsEndSignedOutEverywhere = access.GrantsEndSignedOutEverywhere
)

// Checkout's names.
type (
	BitcoinKeyInfo = checkout.BitcoinKeyInfo
	ProjectInput   = checkout.ProjectInput
	DepositKeyInfo = checkout.DepositKeyInfo
	CreatedProject = checkout.CreatedProject
	SessionView    = checkout.SessionView
)

const (
	MaxSessionLifetime   = checkout.MaxSessionLifetime
	MaxLatePaymentWindow = checkout.MaxLatePaymentWindow
	LiveKeyPrefix        = checkout.LiveKeyPrefix
	SandboxKeyPrefix     = checkout.SandboxKeyPrefix
	AuthCacheTTL         = checkout.AuthCacheTTL
)

// Payments's names.
type Overview = payments.Overview

// Webhooks's names.
type (
	Endpoint     = webhooks.Endpoint
	ResealReport = webhooks.ResealReport
	Redelivery   = webhooks.Redelivery
)

const (
	SecretOverlap   = webhooks.SecretOverlap
	RedeliveryWait  = webhooks.RedeliveryWait
	ResealBatchSize = webhooks.ResealBatchSize
)

// Chains's names.
type (
	Readiness        = chains.Readiness
	NetworkReadiness = chains.NetworkReadiness
	Finding          = chains.Finding
	ReconcileOptions = chains.ReconcileOptions
)

const (
	ReadyCacheFor                     = chains.ReadyCacheFor
	FindingStartPending               = chains.FindingStartPending
	FindingSessionWithoutWorkflow     = chains.FindingSessionWithoutWorkflow
	FindingTransactionWithoutWorkflow = chains.FindingTransactionWithoutWorkflow
	FindingWorkflowWithoutRecord      = chains.FindingWorkflowWithoutRecord
	FindingTransactionWithoutRecord   = chains.FindingTransactionWithoutRecord
	FindingDepositIndexBehind         = chains.FindingDepositIndexBehind
	FindingNetworkUnreachable         = chains.FindingNetworkUnreachable
	FindingFinalizedBlockGone         = chains.FindingFinalizedBlockGone
	FindingPaymentReversed            = chains.FindingPaymentReversed
	FindingRefundNotOnChain           = chains.FindingRefundNotOnChain
	FindingRefundOverdrawn            = chains.FindingRefundOverdrawn
	FindingPayoutNotOnChain           = chains.FindingPayoutNotOnChain
	FindingOutgoingTransferReused     = chains.FindingOutgoingTransferReused
	FindingDepositKeyShared           = chains.FindingDepositKeyShared
	FindingDepositAddressIsRecipient  = chains.FindingDepositAddressIsRecipient
)
