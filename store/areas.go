package store

import (
	"github.com/paymentsd/paymentsd/store/access"
	"github.com/paymentsd/paymentsd/store/chains"
	"github.com/paymentsd/paymentsd/store/checkout"
	"github.com/paymentsd/paymentsd/store/identity"
	"github.com/paymentsd/paymentsd/store/internal/db"
	"github.com/paymentsd/paymentsd/store/moneyout"
	"github.com/paymentsd/paymentsd/store/payments"
	"github.com/paymentsd/paymentsd/store/webhooks"
)

// The store's records by area, each a package of its own (store/identity,
// store/access, ...) whose Store stands on the one handle (the same pool,
// replica and watched set). A caller names the area it reads or writes:
// st.Checkout().CreateSession(...). The names below keep the areas' types
// reachable as store.X for the callers outside the store.

// The areas' stores.
type (
	Identity = identity.Store
	Access   = access.Store
	Checkout = checkout.Store
	Payments = payments.Store
	MoneyOut = moneyout.Store
	Webhooks = webhooks.Store
	Chains   = chains.Store
)

// Identity is the store's records of people.
func (s *Store) Identity() Identity { return identity.New(s.h) }

// Access is the store's records of who may do what.
func (s *Store) Access() Access { return access.New(s.h) }

// Checkout is the store's records of projects, plans and sessions.
func (s *Store) Checkout() Checkout { return checkout.New(s.h) }

// Payments is the store's records of money in.
func (s *Store) Payments() Payments { return payments.New(s.h) }

// MoneyOut is the store's records of refunds and payouts.
func (s *Store) MoneyOut() MoneyOut { return moneyout.New(s.h) }

// Webhooks is the store's records of endpoints, events and deliveries.
func (s *Store) Webhooks() Webhooks { return webhooks.New(s.h) }

// Chains is the store's records of what was read from the chains.
func (s *Store) Chains() Chains { return chains.New(s.h) }

// The areas' records, sentinels and constants, by area.
type (
	StoredPasskey = identity.StoredPasskey

	APIKey         = checkout.APIKey
	SessionStart   = checkout.SessionStart
	WatchedAddress = checkout.WatchedAddress

	Overview = payments.Overview
	TxChange = payments.TxChange

	StoredEndpoint     = webhooks.StoredEndpoint
	Disabling          = webhooks.Disabling
	Dispatch           = webhooks.Dispatch
	DispatchBatch      = webhooks.DispatchBatch
	DispatchedDelivery = webhooks.DispatchedDelivery
	ResealBatch        = webhooks.ResealBatch
	ResealFailure      = webhooks.ResealFailure
	ResealFunc         = webhooks.ResealFunc

	BitcoinKeyRow      = chains.BitcoinKeyRow
	BitcoinOwner       = chains.BitcoinOwner
	BlockRef           = chains.BlockRef
	DepositCounter     = chains.DepositCounter
	TakenIndexes       = chains.TakenIndexes
	DepositKeyClaim    = chains.DepositKeyClaim
	OutgoingRef        = chains.OutgoingRef
	RecipientCollision = chains.RecipientCollision
	ScannedBlocks      = chains.ScannedBlocks
	Watched            = chains.Watched
)

// Render turns a record into an event's data (db.Render).
type Render[T any] = db.Render[T]

var (
	ErrRecipientOwned     = checkout.ErrRecipientOwned
	ErrRecipientIsDeposit = checkout.ErrRecipientIsDeposit
	ErrDepositIsRecipient = checkout.ErrDepositIsRecipient
	ErrTooManyHolds       = checkout.ErrTooManyHolds
	ErrTransferTaken      = moneyout.ErrTransferTaken
	ErrNoDepositKey       = chains.ErrNoDepositKey
	ErrNoBitcoinKey       = chains.ErrNoBitcoinKey
)

const (
	SharedRecipientWatch = checkout.SharedRecipientWatch
	ReceivesDeposit      = moneyout.ReceivesDeposit
	ReceivesRecipient    = moneyout.ReceivesRecipient
)

// RevokeOAuthGrant ends a grant and every code and token of it, at once,
// through q (access.RevokeOAuthGrant).
var RevokeOAuthGrant = access.RevokeOAuthGrant
