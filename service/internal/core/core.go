// Package core is the floor of the service's areas: what every area's
// operations share. Core holds the service's dependencies (the store, the
// Temporal client, the asset catalog, the chains, the webhook sealer, the
// clock and a session's start) and its state (the API keys' cache, the
// passkeys' relying party, the OAuth server, the networks' readiness last
// found); beside it are the audit entry a change writes with it
// (Audited, AuditIn), the updates sent to a running workflow (Update),
// the ownership checks (Owns, OwnsID, CanManageKeys) and the page of a
// list.
//
// Each area of the service (service/identity, service/access,
// service/checkout, service/payments, service/moneyout, service/webhooks,
// service/chains) embeds the one Core its facade, package service,
// made; this package imports none of them.
package core

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

// Core is what the service's areas run on: one for the service, shared
// by every area's operations.
type Core struct {
	Store           *store.Store
	Temporal        client.Client
	Catalog         payment.Catalog
	Chains          chainwatch.Chains
	Sealer          *webhook.Sealer
	SessionLifetime time.Duration
	MaxOpenHolds    int
	// Clock is the clock; nil is the wall clock (Now).
	Clock  func() time.Time
	Starts *sessionstart.Starter

	AuthCache sync.Map // key hash -> the checkout area's cached principal
	// WebAuthn is the relying party of passkeys (the identity area's
	// SetRelyingParty); nil: passkeys are off.
	WebAuthn *webauthn.WebAuthn
	// OAuth is the authorization server of third-party applications.
	OAuth *oauth.Provider
	// ReadyCache is the networks' state the chains area's Ready last
	// found.
	ReadyCache ReadyCache
}

// Now is the clock at the database's precision, so that a record returned
// on creation reads the same as when it is fetched later.
func (c *Core) Now() time.Time {
	now := time.Now
	if c.Clock != nil {
		now = c.Clock
	}
	return now().UTC().Truncate(time.Microsecond)
}

// Page is one page of a list.
type Page[T any] struct {
	Items []T
	Total int
	Query payment.ListQuery
}
