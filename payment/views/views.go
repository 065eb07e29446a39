// Package views renders the engine's records as the API returns them: the
// REST data objects, the Connect messages' source, and the objects inside
// webhook events, so that all three show the same fields and values. It
// sits under payment because it renders the domain's types and imports
// nothing else of the engine: every layer that shows a record uses it.
package views

import (
	"encoding/json"
	"time"

	"github.com/paymentsd/paymentsd/payment"
)

// Project is a project as the API returns it.
type Project struct {
	ID                           string `json:"id"`
	Name                         string `json:"name"`
	CompleteOn                   string `json:"completeOn"`
	UnderpaymentTolerancePercent string `json:"underpaymentTolerancePercent"`
	LatePaymentWindow            string `json:"latePaymentWindow"`
	// SessionLifetimeSeconds is the project's checkout session lifetime;
	// null: the deployment's.
	SessionLifetimeSeconds *int64 `json:"sessionLifetimeSeconds"`
	CreatedAt              string `json:"createdAt"`
	UpdatedAt              string `json:"updatedAt"`
}

// ProjectOf renders a record.
func ProjectOf(p payment.Project) Project {
	return Project{ID: p.ID, Name: p.Name, CompleteOn: string(p.CompleteOn),
		UnderpaymentTolerancePercent: p.UnderpaymentTolerancePercent.String(),
		LatePaymentWindow:            p.LatePaymentWindow.String(),
		SessionLifetimeSeconds:       lifetimeSeconds(p.SessionLifetime),
		CreatedAt:                    Time(p.CreatedAt), UpdatedAt: Time(p.UpdatedAt)}
}

func lifetimeSeconds(d time.Duration) *int64 {
	if d <= 0 {
		return nil
	}
	s := int64(d / time.Second)
	return &s
}

// Plan is a payment plan as the API returns it.
type Plan struct {
	ID                    string               `json:"id"`
	ProjectID             string               `json:"projectId"`
	IsLive                bool                 `json:"isLive"`
	Status                string               `json:"status"`
	Title                 string               `json:"title"`
	PricingModel          string               `json:"pricingModel"`
	AmountUSD             *string              `json:"amountUsd"`
	MinAmountUSD          *string              `json:"minAmountUsd"`
	MaxAmountUSD          *string              `json:"maxAmountUsd"`
	AcceptedAssetPolicies []payment.Policy     `json:"acceptedAssetPolicies"`
	RedirectURL           *string              `json:"redirectUrl"`
	MerchantInfo          payment.MerchantInfo `json:"merchantInfo"`
	ExpiresAt             *string              `json:"expiresAt"`
	CreatedAt             string               `json:"createdAt"`
	UpdatedAt             string               `json:"updatedAt"`
	// A plan priced in token amounts (the second shape's) has these too.
	Name             string              `json:"name,omitempty"`
	RecipientAddress string              `json:"recipientAddress,omitempty"`
	PaymentOptions   []PlanPaymentOption `json:"paymentOptions,omitempty"`
	QuoteTTL         *int64              `json:"quoteTtl,omitempty"`
}

// PlanPaymentOption is one amount a plan priced in token amounts accepts.
type PlanPaymentOption struct {
	NetworkID         string `json:"networkId"`
	ChainID           int64  `json:"chainId"`
	TokenAddress      string `json:"tokenAddress"`
	AssetDefinitionID string `json:"assetDefinitionId"`
	Symbol            string `json:"symbol"`
	Decimals          int    `json:"decimals"`
	Amount            string `json:"amount"`
}

// PlanOf renders a record.
func PlanOf(p payment.Plan) Plan {
	v := Plan{ID: p.ID, ProjectID: p.ProjectID, IsLive: p.IsLive, Status: string(p.EffectiveStatus(time.Now())),
		Title: p.Title, PricingModel: p.PricingModel, AcceptedAssetPolicies: p.AcceptedAssetPolicies,
		MerchantInfo: p.MerchantInfo, ExpiresAt: tsPtr(p.ExpiresAt), CreatedAt: Time(p.CreatedAt), UpdatedAt: Time(p.UpdatedAt)}
	if p.AmountUSD != nil {
		s := payment.FormatUSD(*p.AmountUSD)
		v.AmountUSD = &s
	}
	if p.MinAmountUSD != nil {
		s := payment.FormatUSD(*p.MinAmountUSD)
		v.MinAmountUSD = &s
	}
	if p.MaxAmountUSD != nil {
		s := payment.FormatUSD(*p.MaxAmountUSD)
		v.MaxAmountUSD = &s
	}
	if p.RedirectURL != "" {
		v.RedirectURL = &p.RedirectURL
	}
	if v.AcceptedAssetPolicies == nil {
		v.AcceptedAssetPolicies = []payment.Policy{}
	}
	if p.SharedRecipient() {
		v.Name, v.RecipientAddress = p.Title, p.RecipientAddress
		for _, o := range p.TokenOptions {
			v.PaymentOptions = append(v.PaymentOptions, PlanPaymentOption{NetworkID: o.Network, ChainID: o.ChainID,
				TokenAddress: o.TokenAddress, AssetDefinitionID: o.AssetID, Symbol: o.Symbol, Decimals: o.Decimals, Amount: o.Amount})
		}
		if p.QuoteTTL > 0 {
			v.QuoteTTL = lifetimeSeconds(p.QuoteTTL)
		}
	}
	return v
}

// TransactionSummary is a transaction in a session as the API returns it:
// in the merchant's and the public views of the session, and as the answer
// to the payer's submitted hash.
type TransactionSummary struct {
	ID            string `json:"id"`
	Status        string `json:"status"`
	Network       string `json:"network"`
	TxHash        string `json:"txHash"`
	Symbol        string `json:"symbol"`
	Amount        string `json:"amount"`
	AmountUSD     string `json:"amountUsd"`
	Confirmations int    `json:"confirmations"`
	CreatedAt     string `json:"createdAt"`
}

// TransactionSummaryOf renders a transaction as a session lists it.
func TransactionSummaryOf(t payment.Transaction) TransactionSummary {
	return TransactionSummary{ID: t.ID, Status: string(t.Status), Network: t.Network, TxHash: t.TxHash, Symbol: t.Symbol,
		Amount: t.Amount, AmountUSD: payment.FormatUSD(t.AmountUSD), Confirmations: t.Confirmations, CreatedAt: Time(t.CreatedAt)}
}

// Session is a checkout session as the merchant sees it (and as its
// creator gets it back).
type Session struct {
	ID             string                  `json:"id"`
	Token          *string                 `json:"token,omitempty"`
	URL            *string                 `json:"url,omitempty"`
	Status         string                  `json:"status"`
	PaymentPlanID  string                  `json:"paymentPlanId"`
	ProjectID      string                  `json:"projectId"`
	IsLive         bool                    `json:"isLive"`
	Email          *string                 `json:"email"`
	Metadata       json.RawMessage         `json:"metadata"`
	AmountUSD      string                  `json:"amountUsd"`
	AmountPaidUSD  string                  `json:"amountPaidUsd"`
	DepositAddress *string                 `json:"depositAddress"`
	ExactAmount    bool                    `json:"exactAmount,omitempty"`
	PaymentOptions []payment.PaymentOption `json:"paymentOptions"`
	QuoteExpiresAt string                  `json:"quoteExpiresAt"`
	ExpiresAt      string                  `json:"expiresAt"`
	CompletedAt    *string                 `json:"completedAt"`
	Exception      *string                 `json:"exception"`
	// Resolution is the merchant's resolution of an exception.
	Resolution   *string              `json:"resolution"`
	Transactions []TransactionSummary `json:"transactions,omitempty"`
	CreatedAt    string               `json:"createdAt"`
	UpdatedAt    string               `json:"updatedAt"`
}

// SessionOf renders a session. token and checkoutURL are set only for
// whoever holds the token (its creator and the public lookup); txs, when
// not nil, are listed as summaries.
func SessionOf(cs payment.Session, token, checkoutURL string, txs []payment.Transaction) Session {
	out := Session{ID: cs.ID, Status: string(cs.Status), PaymentPlanID: cs.PaymentPlanID, ProjectID: cs.ProjectID,
		IsLive: cs.IsLive, Email: nonEmpty(cs.Email), Metadata: cs.Metadata, AmountUSD: payment.FormatUSD(cs.AmountUSD),
		AmountPaidUSD: payment.FormatUSD(cs.AmountPaidUSD), DepositAddress: nonEmpty(cs.DepositAddress),
		PaymentOptions: cs.PaymentOptions, QuoteExpiresAt: Time(cs.QuoteExpiresAt), ExpiresAt: Time(cs.ExpiresAt),
		CompletedAt: tsPtr(cs.CompletedAt), Exception: nonEmpty(cs.Exception), Resolution: nonEmpty(string(cs.Resolution)),
		CreatedAt: Time(cs.CreatedAt), UpdatedAt: Time(cs.UpdatedAt), ExactAmount: cs.SharedRecipient}
	if token != "" {
		url := checkoutURL + "/checkout/" + token
		out.Token, out.URL = &token, &url
	}
	if len(out.Metadata) == 0 || string(out.Metadata) == "null" {
		out.Metadata = payment.EmptyMetadata
	}
	if out.PaymentOptions == nil {
		out.PaymentOptions = []payment.PaymentOption{}
	}
	if txs != nil {
		out.Transactions = make([]TransactionSummary, 0, len(txs))
		for _, t := range txs {
			out.Transactions = append(out.Transactions, TransactionSummaryOf(t))
		}
	}
	return out
}

// PublicSession is a checkout session as whoever holds its token sees it
// (the public lookup and its Connect twin, which the hosted page polls):
// what the page shows and a payer needs to pay and to keep as a receipt.
// It is a list of its own, not the merchant's view with fields blanked, so
// that a field added to the merchant's view never shows here by accident:
// no customer e-mail, no metadata, no project or plan ID, no merchant
// contact details. docs/decisions.md lists the fields.
type PublicSession struct {
	ID             string                  `json:"id"`
	Token          *string                 `json:"token,omitempty"`
	URL            *string                 `json:"url,omitempty"`
	Status         string                  `json:"status"`
	IsLive         bool                    `json:"isLive"`
	AmountUSD      string                  `json:"amountUsd"`
	AmountPaidUSD  string                  `json:"amountPaidUsd"`
	DepositAddress *string                 `json:"depositAddress"`
	ExactAmount    bool                    `json:"exactAmount,omitempty"`
	PaymentOptions []payment.PaymentOption `json:"paymentOptions"`
	QuoteExpiresAt string                  `json:"quoteExpiresAt"`
	ExpiresAt      string                  `json:"expiresAt"`
	CompletedAt    *string                 `json:"completedAt"`
	Exception      *string                 `json:"exception"`
	Transactions   []TransactionSummary    `json:"transactions"`
	PaymentPlan    *PlanSummary            `json:"paymentPlan"`
}

// PlanSummary is what the payer sees of a session's plan: its title, the
// merchant's name and logo, and where the page sends the payer once paid.
type PlanSummary struct {
	Title        string             `json:"title"`
	MerchantInfo PublicMerchantInfo `json:"merchantInfo"`
	RedirectURL  *string            `json:"redirectUrl"`
}

// PublicMerchantInfo is the part of a plan's merchantInfo the hosted page
// shows.
type PublicMerchantInfo struct {
	Name    string `json:"name,omitempty"`
	LogoURL string `json:"logoUrl,omitempty"`
}

// PublicSessionOf renders a session for the holder of its token; plan is
// the session's plan, if loaded.
func PublicSessionOf(cs payment.Session, token, checkoutURL string, txs []payment.Transaction, plan *payment.Plan) PublicSession {
	full := SessionOf(cs, token, checkoutURL, txs)
	out := PublicSession{ID: full.ID, Token: full.Token, URL: full.URL, Status: full.Status, IsLive: full.IsLive,
		AmountUSD: full.AmountUSD, AmountPaidUSD: full.AmountPaidUSD, DepositAddress: full.DepositAddress,
		PaymentOptions: full.PaymentOptions, QuoteExpiresAt: full.QuoteExpiresAt, ExpiresAt: full.ExpiresAt,
		CompletedAt: full.CompletedAt, Exception: full.Exception, Transactions: full.Transactions, ExactAmount: full.ExactAmount}
	if out.Transactions == nil {
		out.Transactions = []TransactionSummary{}
	}
	if plan != nil {
		out.PaymentPlan = &PlanSummary{Title: plan.Title, RedirectURL: nonEmpty(plan.RedirectURL),
			MerchantInfo: PublicMerchantInfo{Name: plan.MerchantInfo.Name, LogoURL: plan.MerchantInfo.LogoURL}}
	}
	return out
}

// Transaction is a transaction as the API returns it.
type Transaction struct {
	ID                    string  `json:"id"`
	ProjectID             string  `json:"projectId"`
	CheckoutSessionID     *string `json:"checkoutSessionId"`
	PaymentPlanID         *string `json:"paymentPlanId"`
	IsLive                bool    `json:"isLive"`
	Status                string  `json:"status"`
	Network               string  `json:"network"`
	ChainID               int64   `json:"chainId"`
	TxHash                string  `json:"txHash"`
	LogIndex              *int    `json:"logIndex"`
	FromAddress           string  `json:"fromAddress"`
	ToAddress             string  `json:"toAddress"`
	AssetDefinitionID     string  `json:"assetDefinitionId"`
	Symbol                string  `json:"symbol"`
	Amount                string  `json:"amount"`
	AmountBaseUnits       string  `json:"amountBaseUnits"`
	AmountUSD             string  `json:"amountUsd"`
	BlockNumber           *int64  `json:"blockNumber"`
	BlockHash             *string `json:"blockHash"`
	Confirmations         int     `json:"confirmations"`
	RequiredConfirmations int     `json:"requiredConfirmations"`
	FailureReason         *string `json:"failureReason"`
	// Unexpected marks a transfer to the deposit address of a session that
	// no longer took payments: it counts for no session; the merchant
	// settles it with the payer.
	Unexpected bool `json:"unexpected"`
	// AssignedSessionID is the session the merchant assigned an unexpected
	// transfer to, which counts it.
	AssignedSessionID *string                `json:"assignedSessionId"`
	StatusHistory     []payment.StatusChange `json:"statusHistory"`
	CreatedAt         string                 `json:"createdAt"`
	UpdatedAt         string                 `json:"updatedAt"`
	ConfirmedAt       *string                `json:"confirmedAt"`
	FinalizedAt       *string                `json:"finalizedAt"`
	FailedAt          *string                `json:"failedAt"`
}

// TransactionOf renders a record.
func TransactionOf(t payment.Transaction) Transaction {
	v := Transaction{ID: t.ID, ProjectID: t.ProjectID, CheckoutSessionID: nonEmpty(t.CheckoutSessionID), PaymentPlanID: nonEmpty(t.PaymentPlanID),
		IsLive: t.IsLive, Status: string(t.Status), Network: t.Network, ChainID: t.ChainID, TxHash: t.TxHash,
		FromAddress: t.FromAddress, ToAddress: t.ToAddress, AssetDefinitionID: t.AssetDefinitionID, Symbol: t.Symbol,
		Amount: t.Amount, AmountBaseUnits: t.AmountBaseUnits, AmountUSD: payment.FormatUSD(t.AmountUSD),
		BlockNumber: t.BlockNumber, BlockHash: nonEmpty(t.BlockHash), Confirmations: t.Confirmations,
		RequiredConfirmations: t.RequiredConfirmations, FailureReason: nonEmpty(t.FailureReason), Unexpected: t.Unexpected,
		AssignedSessionID: nonEmpty(t.AssignedSessionID), StatusHistory: t.StatusHistory, CreatedAt: Time(t.CreatedAt), UpdatedAt: Time(t.UpdatedAt),
		ConfirmedAt: tsPtr(t.ConfirmedAt), FinalizedAt: tsPtr(t.FinalizedAt), FailedAt: tsPtr(t.FailedAt)}
	if t.LogIndex >= 0 {
		v.LogIndex = &t.LogIndex
	}
	if v.StatusHistory == nil {
		v.StatusHistory = []payment.StatusChange{}
	}
	return v
}

// Time renders a timestamp: RFC 3339 in UTC.
func Time(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// OptTime renders an optional timestamp as Time does, nil as null.
func OptTime(t *time.Time) *string { return tsPtr(t) }

func tsPtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := Time(*t)
	return &s
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// AuditEntry is an audit log entry as the API returns it.
type AuditEntry struct {
	ID         string          `json:"id"`
	OccurredAt string          `json:"occurredAt"`
	IsLive     bool            `json:"isLive"`
	Actor      AuditActor      `json:"actor"`
	Action     string          `json:"action"`
	Target     AuditTarget     `json:"target"`
	Details    json.RawMessage `json:"details"`
}

// AuditActor is who made a change, and from where.
type AuditActor struct {
	Type      string `json:"type"` // api_key, admin or internal
	ID        string `json:"id"`
	IP        string `json:"ip"`
	UserAgent string `json:"userAgent"`
}

// AuditTarget is what a change was made to.
type AuditTarget struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// AuditEntryOf renders an audit entry.
func AuditEntryOf(a payment.AuditEntry) AuditEntry {
	details := a.Details
	if len(details) == 0 {
		details = json.RawMessage(`{}`)
	}
	return AuditEntry{ID: a.ID, OccurredAt: Time(a.OccurredAt), IsLive: a.IsLive,
		Actor:  AuditActor{Type: a.ActorKind, ID: a.ActorID, IP: a.IP, UserAgent: a.UserAgent},
		Action: a.Action, Target: AuditTarget{Type: a.TargetType, ID: a.TargetID}, Details: details}
}
