package payment

import (
	"encoding/json"
	"math/big"
	"slices"
	"time"

	"github.com/shopspring/decimal"
)

// SessionDraft is what opening a checkout session is decided from, as the
// service loaded it: the request, its plan and project, the plan's assets
// with their prices now, and which deposit keys the project environment
// has. NewSession decides the rest.
type SessionDraft struct {
	Input SessionInput
	// Metadata is the input's metadata, serialized (CheckSessionInput).
	Metadata json.RawMessage
	Plan     Plan
	Project  Project
	// Quotes are the assets the session may offer: for a plan priced in
	// USD, its accepted assets that have a price now, in the catalog's
	// order; for a plan priced in token amounts, its options' assets on
	// the networks this deployment serves, in the plan's order (priced
	// or not).
	Quotes []AssetQuote
	// Keys says which deposit keys the project environment has; it is
	// read only when the quotes hold both bitcoin and EVM assets.
	Keys DepositKeys
	// Lifetime is the deployment's session lifetime; zero: the default.
	Lifetime time.Duration
	Now      time.Time
}

// AssetQuote is an asset a session may offer, with what its network
// tells the customer.
type AssetQuote struct {
	Asset Asset
	// Rate is the asset's USD price per whole unit when Priced.
	Rate   decimal.Decimal
	Priced bool
	// WalletAccountOnly: a payment in the asset is seen only when sent
	// from a wallet account (see PaymentOption).
	WalletAccountOnly bool
	// Confirmations gives the depth at which a payment worth an amount
	// in USD is final on a Bitcoin network; nil on an EVM network.
	Confirmations func(amountUSD decimal.Decimal) int
}

// DepositKeys says which keys a project environment has set.
type DepositKeys struct{ EVM, Bitcoin bool }

// OfferBothKinds reports whether quotes hold both bitcoin and EVM assets:
// only then do the project's keys decide what a session offers.
func OfferBothKinds(quotes []AssetQuote) bool {
	return slices.ContainsFunc(quotes, func(q AssetQuote) bool { return q.Asset.Bitcoin() }) &&
		slices.ContainsFunc(quotes, func(q AssetQuote) bool { return !q.Asset.Bitcoin() })
}

// Opening is a session decided and not yet given its addresses: the
// service takes what it needs (a deposit address, a Bitcoin address, or
// the held amounts at a shared recipient) and finishes it with
// WithAddresses or WithHeldAmounts.
type Opening struct {
	Session Session
	// Token is the session's secret, shown once to its creator.
	Token string
	// NeedsDepositAddress and NeedsBitcoinAddress name the addresses the
	// session is to be given; neither for a shared recipient.
	NeedsDepositAddress, NeedsBitcoinAddress bool
	quotes                                   []AssetQuote
	planTitle                                string
}

// SessionLifetime is how long a session of a project stays open: the
// project's lifetime, else the deployment's, else DefaultSessionLifetime.
// A plan's quote TTL, when set, replaces it (SessionTimes).
func SessionLifetime(project Project, deployment time.Duration) time.Duration {
	switch {
	case project.SessionLifetime > 0:
		return project.SessionLifetime
	case deployment > 0:
		return deployment
	}
	return DefaultSessionLifetime
}

// SessionTimes returns when a session opened at now stops taking payments
// (its quote expiring with it) and when its late-payment window ends.
func SessionTimes(plan Plan, project Project, deployment time.Duration, now time.Time) (expires, lateUntil time.Time) {
	expires = now.Add(SessionLifetime(project, deployment))
	if plan.QuoteTTL > 0 {
		expires = now.Add(plan.QuoteTTL)
	}
	return expires, expires.Add(project.LatePaymentWindow)
}

// SessionDue returns what a session of the plan opened at now asks in
// USD, given the payload's amountUsd: zero for a plan priced in token
// amounts (its options' amounts are due). It refuses a plan archived or
// expired, and an amount the plan does not allow. NewSession decides it
// again; the service asks first, to refuse before it reads any price.
func SessionDue(plan Plan, amountUSD *string, now time.Time) (decimal.Decimal, error) {
	if plan.SharedRecipient() {
		return decimal.Decimal{}, TokenAmountDue(plan, amountUSD, now)
	}
	return AmountDue(plan, amountUSD, now)
}

// NewSession decides a checkout session from its draft: what is due, when
// it expires and stops taking late payments, and which payment options it
// offers. It refuses a plan that is not usable now, an amount the plan
// does not allow, and a plan none of whose assets can be offered now.
func NewSession(d SessionDraft) (Opening, error) {
	plan, now := d.Plan, d.Now
	due, err := SessionDue(plan, d.Input.AmountUSD, now)
	if err != nil {
		return Opening{}, err
	}
	token := NewSessionToken()
	s := Session{
		ID:             NewID(PrefixSession, now),
		TokenHash:      HashSecret(token),
		ProjectID:      plan.ProjectID,
		PaymentPlanID:  plan.ID,
		IsLive:         plan.IsLive,
		Status:         SessionOpen,
		Metadata:       d.Metadata,
		AmountUSD:      due,
		AmountPaidUSD:  decimal.Zero,
		CreatedAt:      now,
		UpdatedAt:      now,
		PaymentOptions: []PaymentOption{},
	}
	s.ExpiresAt, s.LateUntil = SessionTimes(plan, d.Project, d.Lifetime, now)
	s.QuoteExpiresAt = s.ExpiresAt
	if d.Input.Email != nil {
		s.Email = *d.Input.Email
	}
	o := Opening{Session: s, Token: token, planTitle: plan.Title}
	if plan.SharedRecipient() {
		err = o.heldOptions(plan, d.Quotes)
	} else {
		err = o.quotedOptions(d.Quotes, d.Keys)
	}
	return o, err
}

// quotedOptions decides what a session of a plan priced in USD offers:
// its amount in each quoted asset its project's keys serve. Bitcoin is
// offered when the project environment has a Bitcoin account key, the EVM
// assets when it has an EVM deposit key; a plan accepting both is paid in
// what its keys serve. Without a key of either kind both are asked for,
// and the session is refused when its EVM address, taken first, cannot
// be, naming the EVM key.
func (o *Opening) quotedOptions(quotes []AssetQuote, keys DepositKeys) error {
	if len(quotes) == 0 {
		var probs Problems
		probs.Add("paymentPlanId", "the payment plan accepts no asset that can be quoted now")
		return probs.Err()
	}
	bitcoin := slices.ContainsFunc(quotes, func(q AssetQuote) bool { return q.Asset.Bitcoin() })
	evm := slices.ContainsFunc(quotes, func(q AssetQuote) bool { return !q.Asset.Bitcoin() })
	if bitcoin && evm {
		bitcoin = keys.Bitcoin || !keys.EVM
		evm = keys.EVM || !keys.Bitcoin
	}
	o.NeedsDepositAddress, o.NeedsBitcoinAddress = evm, bitcoin
	for _, q := range quotes {
		if q.Asset.Bitcoin() && !bitcoin || !q.Asset.Bitcoin() && !evm {
			continue
		}
		opt := Quote(q.Asset, o.Session.AmountUSD, q.Rate, "")
		if q.Asset.Bitcoin() && q.Confirmations != nil {
			opt.Confirmations = q.Confirmations(o.Session.AmountUSD)
		}
		opt.WalletAccountOnly = q.WalletAccountOnly
		o.quotes = append(o.quotes, q)
		o.Session.PaymentOptions = append(o.Session.PaymentOptions, opt)
	}
	return nil
}

// heldOptions decides what a session of a plan priced in token amounts
// offers: the plan's amounts on the networks served, paid to the plan's
// recipient, each to be made unique while the session holds it. The
// session's amount in USD is the first priced option's, for reports and
// the settlement's ratios.
func (o *Opening) heldOptions(plan Plan, quotes []AssetQuote) error {
	s := &o.Session
	s.DepositAddress, s.SharedRecipient = plan.RecipientAddress, true
	for _, t := range plan.TokenOptions {
		i := slices.IndexFunc(quotes, func(q AssetQuote) bool { return q.Asset.ID == t.AssetID })
		if i < 0 {
			continue
		}
		a := quotes[i].Asset
		o.quotes = append(o.quotes, quotes[i])
		s.PaymentOptions = append(s.PaymentOptions, PaymentOption{AssetDefinitionID: a.ID, Network: a.Network,
			ChainID: a.ChainID, Symbol: a.Symbol, Decimals: a.Decimals, TokenAddress: a.TokenAddress,
			AmountBaseUnits: t.AmountBaseUnits, WalletAccountOnly: quotes[i].WalletAccountOnly})
	}
	var probs Problems
	if len(s.PaymentOptions) == 0 {
		probs.Add("paymentPlanId", "the payment plan's networks are not served by this deployment")
		return probs.Err()
	}
	for i, opt := range s.PaymentOptions {
		if q := o.quotes[i]; q.Priced {
			s.AmountUSD = ValueUSD(opt.AmountBaseUnits, q.Asset.Decimals, q.Rate)
			break
		}
	}
	if !s.AmountUSD.IsPositive() {
		probs.Add("paymentPlanId", "none of the payment plan's assets has a USD price now")
		return probs.Err()
	}
	return nil
}

// SessionAddresses are the addresses taken for a session, each at its
// key's derivation index.
type SessionAddresses struct {
	Deposit      string
	DepositIndex *int64
	Bitcoin      string
	BitcoinIndex *int64
}

// WithAddresses returns the session given its addresses, each option
// with the address it is paid to and the URI that asks a wallet to pay it.
func (o Opening) WithAddresses(a SessionAddresses) Session {
	s := o.Session
	s.DepositAddress, s.DepositIndex = a.Deposit, a.DepositIndex
	s.BitcoinAddress, s.BitcoinIndex = a.Bitcoin, a.BitcoinIndex
	s.PaymentOptions = slices.Clone(s.PaymentOptions)
	for i := range s.PaymentOptions {
		opt, asset := &s.PaymentOptions[i], o.quotes[i].Asset
		base, _ := new(big.Int).SetString(opt.AmountBaseUnits, 10)
		switch {
		case asset.Bitcoin():
			opt.DepositAddress, opt.PaymentURI = s.BitcoinAddress, BitcoinURI(s.BitcoinAddress, base, o.planTitle)
		case s.DepositAddress != "":
			opt.PaymentURI = PaymentURI(asset, s.DepositAddress, base)
		}
	}
	return s
}

// WithHeldAmounts returns a shared recipient's session with the amounts
// it holds (the store's ReserveAmounts), each with its amount in whole
// units and the URI that asks a wallet to pay it.
func (o Opening) WithHeldAmounts(held []PaymentOption) Session {
	s := o.Session
	s.PaymentOptions = slices.Clone(held)
	for i := range s.PaymentOptions {
		opt := &s.PaymentOptions[i]
		j := slices.IndexFunc(o.quotes, func(q AssetQuote) bool { return q.Asset.ID == opt.AssetDefinitionID })
		if j < 0 {
			continue
		}
		a := o.quotes[j].Asset
		base, _ := new(big.Int).SetString(opt.AmountBaseUnits, 10)
		opt.Amount = UnitsToAmount(opt.AmountBaseUnits, a.Decimals)
		opt.PaymentURI = PaymentURI(a, s.DepositAddress, base)
	}
	return s
}
