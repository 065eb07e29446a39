package payment

import (
	"cmp"
	"fmt"
	"net/mail"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"
)

// Pricing models of a payment plan.
const (
	PricingFixedUSD    = "fixed_usd"
	PricingVariableUSD = "variable_usd"
)

// Policy types and environment scopes of an accepted-asset policy.
const (
	PolicyAny             = "any"
	PolicyAssetDefinition = "asset_definition"
	ScopeLive             = "live"
	ScopeSandbox          = "sandbox"
	ScopeAll              = "all"
)

// Limits of a payment plan.
const (
	MaxTitleLength = 200
	MaxPolicies    = 50
	MaxURLLength   = 2048
	MaxPriority    = 1000
)

// PlanInput is the create payload of a payment plan, as decoded from JSON.
// Pointers tell "absent" from "empty".
type PlanInput struct {
	Title                 *string
	PricingModel          *string
	AmountUSD             *string
	MinAmountUSD          *string
	MaxAmountUSD          *string
	AcceptedAssetPolicies []PolicyInput
	RedirectURL           *string
	MerchantInfo          *MerchantInfo
	ExpiresAt             *string
	// Token is set instead of the fields above for the second API shape's
	// payload: a plan priced in token amounts, paid to one recipient.
	Token *TokenPlanInput
	// Problems found while decoding (fields of the wrong type, unknown
	// fields); validation reports them with its own.
	Problems Problems
}

// PolicyInput is one accepted-asset policy as sent.
type PolicyInput struct {
	PolicyType        *string
	AssetDefinitionID *string
	EnvironmentScope  *string
	ChainScope        []string
	Priority          *int64
}

// MerchantInfo is what the hosted checkout page shows about the merchant.
type MerchantInfo struct {
	Name    string `json:"name,omitempty"`
	Email   string `json:"email,omitempty"`
	Website string `json:"website,omitempty"`
	LogoURL string `json:"logoUrl,omitempty"`
}

// Policy is a validated accepted-asset policy.
type Policy struct {
	PolicyType        string   `json:"policyType"`
	AssetDefinitionID string   `json:"assetDefinitionId,omitempty"`
	EnvironmentScope  string   `json:"environmentScope"`
	ChainScope        []string `json:"chainScope"`
	Priority          int64    `json:"priority"`
}

// Plan is a payment plan.
type Plan struct {
	ID                    string
	ProjectID             string
	IsLive                bool
	Title                 string
	PricingModel          string
	AmountUSD             *decimal.Decimal
	MinAmountUSD          *decimal.Decimal
	MaxAmountUSD          *decimal.Decimal
	AcceptedAssetPolicies []Policy
	RedirectURL           string
	MerchantInfo          MerchantInfo
	ExpiresAt             *time.Time
	// RecipientAddress, TokenOptions and QuoteTTL are those of a plan
	// priced in token amounts (PricingTokenAmount): every session pays
	// the recipient one of the options' amounts, made unique to the
	// session (see Reservation), and holds it for QuoteTTL (0: the
	// project's session lifetime).
	RecipientAddress string
	TokenOptions     []TokenOption
	QuoteTTL         time.Duration
	Status           PlanStatus
	// Version counts the plan's recorded changes (its events).
	Version   int
	CreatedAt time.Time
	UpdatedAt time.Time
}

// EffectiveStatus is the plan's status at time now: an active plan past its
// expiresAt is expired.
func (p Plan) EffectiveStatus(now time.Time) PlanStatus {
	if p.Status == PlanActive && p.ExpiresAt != nil && !now.Before(*p.ExpiresAt) {
		return PlanExpired
	}
	return p.Status
}

// Catalog is the set of asset definitions a deployment accepts.
type Catalog struct {
	Assets []Asset
}

// Asset returns the asset with the given ID.
func (c Catalog) Asset(id string) (Asset, bool) {
	i := slices.IndexFunc(c.Assets, func(a Asset) bool { return a.ID == id })
	if i < 0 {
		return Asset{}, false
	}
	return c.Assets[i], true
}

// HasNetwork reports whether any asset lives on the network.
func (c Catalog) HasNetwork(key string) bool {
	return slices.ContainsFunc(c.Assets, func(a Asset) bool { return a.Network == key })
}

// Networks returns the keys of the networks the catalog's assets live on,
// in catalog order.
func (c Catalog) Networks() []string {
	var out []string
	for _, a := range c.Assets {
		if !slices.Contains(out, a.Network) {
			out = append(out, a.Network)
		}
	}
	return out
}

// Environment returns the catalog's assets of one environment.
func (c Catalog) Environment(isLive bool) []Asset {
	var out []Asset
	for _, a := range c.Assets {
		if a.IsLive == isLive {
			out = append(out, a)
		}
	}
	return out
}

// AcceptedAssets resolves a plan's policies against the catalog for the
// plan's environment: the assets a checkout session offers, ordered by the
// policies' priority (lower first), then by catalog order. No policies
// means every asset of the environment.
func (c Catalog) AcceptedAssets(policies []Policy, isLive bool) []Asset {
	env := c.Environment(isLive)
	if len(policies) == 0 {
		return env
	}
	type ranked struct {
		asset    Asset
		priority int64
		order    int
	}
	best := map[string]ranked{}
	for _, p := range policies {
		if p.EnvironmentScope == ScopeLive && !isLive || p.EnvironmentScope == ScopeSandbox && isLive {
			continue
		}
		for i, a := range env {
			if p.PolicyType == PolicyAssetDefinition && a.ID != p.AssetDefinitionID {
				continue
			}
			if len(p.ChainScope) > 0 && !slices.Contains(p.ChainScope, a.Network) {
				continue
			}
			if r, ok := best[a.ID]; !ok || p.Priority < r.priority {
				best[a.ID] = ranked{a, p.Priority, i}
			}
		}
	}
	list := make([]ranked, 0, len(best))
	for _, r := range best {
		list = append(list, r)
	}
	slices.SortFunc(list, func(x, y ranked) int {
		return cmp.Or(cmp.Compare(x.priority, y.priority), cmp.Compare(x.order, y.order))
	})
	out := make([]Asset, len(list))
	for i, r := range list {
		out[i] = r.asset
	}
	return out
}

// NewPlan validates a create payload for a project's environment and returns
// the plan it describes, or a validation error with one detail per
// offending field.
func NewPlan(in PlanInput, projectID string, isLive bool, catalog Catalog, now time.Time) (Plan, error) {
	var probs Problems
	p := Plan{ProjectID: projectID, IsLive: isLive, Status: PlanActive, PricingModel: PricingFixedUSD}
	if in.Token != nil {
		p = newTokenPlan(*in.Token, p, catalog, &probs)
		found := slices.Clone(in.Problems)
		found.Merge(probs)
		return p, found.Err()
	}

	if in.Title == nil {
		probs.Add("title", "is required")
	} else {
		p.Title = checkTitle(*in.Title, &probs)
	}

	if in.PricingModel != nil {
		p.PricingModel = *in.PricingModel
	}
	amount := func(field string, s *string) *decimal.Decimal {
		if s == nil {
			return nil
		}
		d, msg := ParseUSD(*s)
		if msg != "" {
			probs.Add(field, msg)
			return nil
		}
		return &d
	}
	switch p.PricingModel {
	case PricingFixedUSD:
		if in.AmountUSD == nil {
			probs.Add("amountUsd", "is required when pricingModel is fixed_usd")
		}
		p.AmountUSD = amount("amountUsd", in.AmountUSD)
		if in.MinAmountUSD != nil {
			probs.Add("minAmountUsd", "is only allowed when pricingModel is variable_usd")
		}
		if in.MaxAmountUSD != nil {
			probs.Add("maxAmountUsd", "is only allowed when pricingModel is variable_usd")
		}
	case PricingVariableUSD:
		if in.AmountUSD != nil {
			probs.Add("amountUsd", "is only allowed when pricingModel is fixed_usd; the customer's amount is given at checkout")
		}
		if in.MinAmountUSD == nil {
			probs.Add("minAmountUsd", "is required when pricingModel is variable_usd")
		}
		if in.MaxAmountUSD == nil {
			probs.Add("maxAmountUsd", "is required when pricingModel is variable_usd")
		}
		p.MinAmountUSD = amount("minAmountUsd", in.MinAmountUSD)
		p.MaxAmountUSD = amount("maxAmountUsd", in.MaxAmountUSD)
		if p.MinAmountUSD != nil && p.MaxAmountUSD != nil && p.MinAmountUSD.GreaterThan(*p.MaxAmountUSD) {
			probs.Add("minAmountUsd", "must not be greater than maxAmountUsd")
		}
	default:
		probs.Add("pricingModel", "must be one of fixed_usd, variable_usd")
	}

	if len(in.AcceptedAssetPolicies) > MaxPolicies {
		probs.Addf("acceptedAssetPolicies", "must have at most %d items", MaxPolicies)
	}
	for i, pi := range in.AcceptedAssetPolicies {
		if pol, ok := newPolicy(pi, fmt.Sprintf("acceptedAssetPolicies[%d]", i), isLive, catalog, &probs); ok {
			p.AcceptedAssetPolicies = append(p.AcceptedAssetPolicies, pol)
		}
	}
	if p.AcceptedAssetPolicies == nil {
		p.AcceptedAssetPolicies = []Policy{}
	}
	if len(in.AcceptedAssetPolicies) == len(p.AcceptedAssetPolicies) && len(catalog.AcceptedAssets(p.AcceptedAssetPolicies, isLive)) == 0 {
		probs.Add("acceptedAssetPolicies", "accept no asset available in this environment")
	}

	if in.RedirectURL != nil {
		p.RedirectURL = checkRedirectURL(*in.RedirectURL, isLive, &probs)
	}
	if in.MerchantInfo != nil {
		p.MerchantInfo = checkMerchantInfo(*in.MerchantInfo, &probs)
	}
	if in.ExpiresAt != nil {
		p.ExpiresAt = checkExpiresAt(*in.ExpiresAt, now, &probs)
	}
	found := slices.Clone(in.Problems)
	found.Merge(probs)
	return p, found.Err()
}

// The checks of the fields a plan's creation and its updates both take:
// one implementation each, so an update can never store what creation
// would refuse.

// checkTitle returns a title trimmed, or records why it is refused.
func checkTitle(s string, probs *Problems) string {
	t := strings.TrimSpace(s)
	if t == "" {
		probs.Add("title", "must not be empty")
	} else if utf8.RuneCountInString(t) > MaxTitleLength {
		probs.Addf("title", "must be at most %d characters", MaxTitleLength)
	}
	return t
}

// checkRedirectURL checks where the hosted page sends the payer once paid:
// an absolute http(s) URL, https in live; empty means none.
func checkRedirectURL(s string, isLive bool, probs *Problems) string {
	if s != "" {
		if msg := checkURL(s, isLive); msg != "" {
			probs.Add("redirectUrl", msg)
		}
	}
	return s
}

// checkMerchantInfo checks what the hosted page may show of the merchant;
// its links must be http(s) (the logo https), never javascript: or data:.
func checkMerchantInfo(m MerchantInfo, probs *Problems) MerchantInfo {
	if utf8.RuneCountInString(m.Name) > MaxTitleLength {
		probs.Addf("merchantInfo.name", "must be at most %d characters", MaxTitleLength)
	}
	if m.Email != "" && !ValidEmail(m.Email) {
		probs.Add("merchantInfo.email", "must be a valid e-mail address")
	}
	if m.Website != "" {
		if msg := checkURL(m.Website, false); msg != "" {
			probs.Add("merchantInfo.website", msg)
		}
	}
	if m.LogoURL != "" {
		if msg := checkURL(m.LogoURL, true); msg != "" {
			probs.Add("merchantInfo.logoUrl", msg)
		}
	}
	return m
}

// checkExpiresAt parses a plan's expiry, which must be in the future.
func checkExpiresAt(s string, now time.Time, probs *Problems) *time.Time {
	t, dateOnly, ok := ParseISOTime(s)
	if dateOnly {
		t = t.AddDate(0, 0, 1) // valid through that whole day (UTC)
	}
	switch {
	case !ok:
		probs.Add("expiresAt", "must be an ISO 8601 date-time such as 2030-01-31T12:00:00Z (without an offset, UTC) or a date (valid through that day, UTC)")
	case !t.After(now):
		probs.Add("expiresAt", "must be in the future")
	default:
		t = t.UTC()
		return &t
	}
	return nil
}

func newPolicy(in PolicyInput, path string, isLive bool, catalog Catalog, probs *Problems) (Policy, bool) {
	n := len(*probs)
	pol := Policy{EnvironmentScope: ScopeAll, ChainScope: []string{}}
	switch {
	case in.PolicyType == nil:
		probs.Add(path+".policyType", "is required")
	case *in.PolicyType == PolicyAny:
		pol.PolicyType = PolicyAny
		if in.AssetDefinitionID != nil {
			probs.Add(path+".assetDefinitionId", "is only allowed when policyType is asset_definition")
		}
	case *in.PolicyType == PolicyAssetDefinition:
		pol.PolicyType = PolicyAssetDefinition
		if in.AssetDefinitionID == nil || *in.AssetDefinitionID == "" {
			probs.Add(path+".assetDefinitionId", "is required when policyType is asset_definition")
		} else if a, ok := catalog.Asset(*in.AssetDefinitionID); !ok {
			probs.Add(path+".assetDefinitionId", "is not a known asset definition (see GET /api/v1/assets)")
		} else if a.IsLive != isLive {
			probs.Add(path+".assetDefinitionId", "belongs to the other environment")
		} else {
			pol.AssetDefinitionID = a.ID
		}
	default:
		probs.Add(path+".policyType", "must be one of any, asset_definition")
	}
	if in.EnvironmentScope != nil {
		switch *in.EnvironmentScope {
		case ScopeLive, ScopeSandbox, ScopeAll:
			pol.EnvironmentScope = *in.EnvironmentScope
		default:
			probs.Add(path+".environmentScope", "must be one of live, sandbox, all")
		}
	}
	for j, key := range in.ChainScope {
		switch {
		case !catalog.HasNetwork(key):
			probs.Addf(fmt.Sprintf("%s.chainScope[%d]", path, j), "is not a known network")
		case slices.Contains(pol.ChainScope, key):
			probs.Addf(fmt.Sprintf("%s.chainScope[%d]", path, j), "is listed twice")
		default:
			pol.ChainScope = append(pol.ChainScope, key)
		}
	}
	if in.Priority != nil {
		if *in.Priority < 0 || *in.Priority > MaxPriority {
			probs.Addf(path+".priority", "must be between 0 and %d", MaxPriority)
		}
		pol.Priority = *in.Priority
	}
	return pol, len(*probs) == n
}

// checkURL returns a problem with an absolute http(s) URL, or "".
func checkURL(s string, httpsOnly bool) string {
	if len(s) > MaxURLLength {
		return fmt.Sprintf("must be at most %d characters", MaxURLLength)
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return "must be an absolute http or https URL"
	}
	if httpsOnly && u.Scheme != "https" {
		return "must be an https URL"
	}
	return ""
}

// ValidEmail reports whether s is a plain e-mail address (no display name).
func ValidEmail(s string) bool {
	if len(s) > 254 {
		return false
	}
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s && a.Name == "" && strings.Contains(s[strings.LastIndexByte(s, '@'):], ".")
}

// ChangePlan applies an update payload to a plan. The price and the
// accepted assets are fixed once sessions may have quoted them: changing
// them is refused (create a new plan instead); title, redirectUrl,
// merchantInfo and expiresAt can change, under the same checks as at
// creation.
func ChangePlan(p *Plan, in PlanInput, now time.Time) error {
	probs := slices.Clone(in.Problems)
	var mine Problems
	if t := in.Token; t != nil {
		for _, f := range []struct {
			name string
			sent bool
		}{{"recipientAddress", t.RecipientAddress != nil}, {"paymentOptions", t.OptionsSent}, {"quoteTtl", t.QuoteTTL != nil}} {
			if f.sent {
				mine.Add(f.name, "cannot be changed; create a new payment plan")
			}
		}
		if t.Name != nil {
			p.Title = checkName("name", *t.Name, &mine)
		}
		if t.RedirectURL != nil {
			p.RedirectURL = checkRedirectURL(*t.RedirectURL, p.IsLive, &mine)
		}
		probs.Merge(mine)
		return probs.Err()
	}
	fixed := map[string]bool{"pricingModel": in.PricingModel != nil, "amountUsd": in.AmountUSD != nil,
		"minAmountUsd": in.MinAmountUSD != nil, "maxAmountUsd": in.MaxAmountUSD != nil,
		"acceptedAssetPolicies": in.AcceptedAssetPolicies != nil}
	for _, f := range []string{"pricingModel", "amountUsd", "minAmountUsd", "maxAmountUsd", "acceptedAssetPolicies"} {
		if fixed[f] {
			mine.Add(f, "cannot be changed; create a new payment plan")
		}
	}
	if in.Title != nil {
		p.Title = checkTitle(*in.Title, &mine)
	}
	if in.RedirectURL != nil {
		p.RedirectURL = checkRedirectURL(*in.RedirectURL, p.IsLive, &mine)
	}
	if in.MerchantInfo != nil {
		p.MerchantInfo = checkMerchantInfo(*in.MerchantInfo, &mine)
	}
	if in.ExpiresAt != nil {
		if t := checkExpiresAt(*in.ExpiresAt, now, &mine); t != nil {
			p.ExpiresAt = t
		}
	}
	probs.Merge(mine)
	return probs.Err()
}
