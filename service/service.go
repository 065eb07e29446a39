// Package service holds the engine's operations: one function per thing a
// merchant or a customer can do. The REST and Connect transports both call
// these, so each operation has one implementation. Reads go to Postgres;
// commands go to Temporal, whose workflows own every state change.
//
// The operations are by area (areas.go), each a view of the one Service:
// Identity, Access, Checkout, Payments, MoneyOut, Webhooks and Chains,
// the same areas as the store's. A file holds one area's operations; the
// Service keeps what they share (idempotency keys, the asset catalog,
// workflow updates).
package service

import (
	"sync"
	"time"

	"github.com/go-webauthn/webauthn/webauthn"

	"go.temporal.io/sdk/client"

	"github.com/paymentsd/paymentsd/activities/sessionstart"
	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service/oauth"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/webhook"
)

// Deps are what the service runs on.
type Deps struct {
	Store    *store.Store
	Temporal client.Client
	Catalog  payment.Catalog
	Chains   chainwatch.Chains
	Sealer   *webhook.Sealer
	// SessionLifetime is how long a checkout session stays open; zero is
	// payment.DefaultSessionLifetime.
	SessionLifetime time.Duration
	// MaxOpenHolds bounds the holds on a shared recipient: sessions of one
	// plan holding amounts at once, and base units asked above the plan's
	// amount (RECIPIENT_MAX_OPEN_HOLDS); zero is
	// payment.DefaultMaxOpenHolds.
	MaxOpenHolds int
	// Now is the clock; nil is the wall clock.
	Now func() time.Time
}

// Service is the engine's service layer: every operation a merchant, a
// customer or an operator can ask for, whatever the transport. Its
// dependencies are its own; the transports see only its operations.
type Service struct {
	store           *store.Store
	temporal        client.Client
	catalog         payment.Catalog
	chains          chainwatch.Chains
	sealer          *webhook.Sealer
	sessionLifetime time.Duration
	maxOpenHolds    int
	clock           func() time.Time
	starts          *sessionstart.Starter

	authCache sync.Map // key hash -> cachedPrincipal
	// webauthn is the relying party of passkeys (SetRelyingParty); nil:
	// passkeys are off.
	webauthn *webauthn.WebAuthn
	// oauth is the authorization server of third-party applications.
	oauth *oauth.Provider
	// ready is the networks' state Ready last found.
	ready readyCache
}

// New returns the service over d.
func New(d Deps) *Service {
	svc := &Service{store: d.Store, temporal: d.Temporal, catalog: d.Catalog, chains: d.Chains, sealer: d.Sealer,
		sessionLifetime: d.SessionLifetime, maxOpenHolds: d.MaxOpenHolds, clock: d.Now, starts: sessionstart.New(d.Store, d.Temporal)}
	if svc.maxOpenHolds <= 0 {
		svc.maxOpenHolds = payment.DefaultMaxOpenHolds
	}
	if d.Store != nil {
		svc.oauth = oauth.New(d.Store.Pool())
	}
	return svc
}

// now is the clock at the database's precision, so that a record returned
// on creation reads the same as when it is fetched later.
func (svc *Service) now() time.Time {
	now := time.Now
	if svc.clock != nil {
		now = svc.clock
	}
	return now().UTC().Truncate(time.Microsecond)
}

// Page is one page of a list.
type Page[T any] struct {
	Items []T
	Total int
	Query payment.ListQuery
}
