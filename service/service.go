// Package service holds the engine's operations: one function per thing a
// merchant or a customer can do. The REST and Connect transports both call
// these, so each operation has one implementation. Reads go to Postgres;
// commands go to Temporal, whose workflows own every state change.
//
// This package is the facade the transports, the commands and the tests
// call: Service, made by New over its Deps, hands out the areas (areas.go),
// each a package of its own under this folder: identity, access, checkout,
// payments, moneyout, webhooks and chains, the same areas as the store's.
// An area imports another only where it builds on it (payments, money
// out and access on checkout, money out on the chains, the chains on
// checkout and payments, identity on access); what every area shares (the
// dependencies, the audit entry a change writes, workflow updates, the
// ownership checks) is their floor, service/internal/core. The Service
// keeps what is no area's: the asset catalog, the OAuth server and the
// API's idempotency keys. The areas' types, errors and constants are
// named here too (areas.go), so that a caller imports this package alone.
package service

import (
	"time"

	"go.temporal.io/sdk/client"

	"github.com/paymentsd/paymentsd/activities/sessionstart"
	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service/internal/core"
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
// dependencies are its own (the floor its areas share); the transports
// see only its operations.
type Service struct {
	core *core.Core
}

// New returns the service over d.
func New(d Deps) *Service {
	c := &core.Core{Store: d.Store, Temporal: d.Temporal, Catalog: d.Catalog, Chains: d.Chains, Sealer: d.Sealer,
		SessionLifetime: d.SessionLifetime, MaxOpenHolds: d.MaxOpenHolds, Clock: d.Now, Starts: sessionstart.New(d.Store, d.Temporal)}
	if c.MaxOpenHolds <= 0 {
		c.MaxOpenHolds = payment.DefaultMaxOpenHolds
	}
	if d.Store != nil {
		c.OAuth = oauth.New(d.Store.Pool())
	}
	return &Service{core: c}
}

// Assets lists the deployment's asset definitions.
func (svc *Service) Assets() []payment.Asset { return svc.core.Catalog.Assets }

// ExplorerTxURL is a transaction's page on its network's block explorer,
// "" when the network has none.
func (svc *Service) ExplorerTxURL(network, hash string) string {
	if c, ok := svc.core.Chains[network]; ok {
		return c.Network.TxURL(hash)
	}
	return ""
}

// Catalog returns the deployment's asset catalog.
func (svc *Service) Catalog() payment.Catalog { return svc.core.Catalog }

// OAuth is the authorization server of third-party applications.
func (svc *Service) OAuth() *oauth.Provider { return svc.core.OAuth }
