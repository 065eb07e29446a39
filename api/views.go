package api

import (
	"time"

	"github.com/paymentsd/paymentsd/engine"
	"github.com/paymentsd/paymentsd/payment"
)

// The JSON records the API returns (DESIGN.md section 5).

type projectView struct {
	ID                           string `json:"id"`
	Name                         string `json:"name"`
	CompleteOn                   string `json:"completeOn"`
	UnderpaymentTolerancePercent string `json:"underpaymentTolerancePercent"`
	LatePaymentWindow            string `json:"latePaymentWindow"`
	CreatedAt                    string `json:"createdAt"`
	UpdatedAt                    string `json:"updatedAt"`
}

func viewProject(p payment.Project) projectView {
	return projectView{ID: p.ID, Name: p.Name, CompleteOn: string(p.CompleteOn),
		UnderpaymentTolerancePercent: p.UnderpaymentTolerancePercent.String(),
		LatePaymentWindow:            p.LatePaymentWindow.String(),
		CreatedAt:                    ts(p.CreatedAt), UpdatedAt: ts(p.UpdatedAt)}
}

type planView struct {
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
}

func viewPlan(p payment.Plan) planView {
	v := planView{ID: p.ID, ProjectID: p.ProjectID, IsLive: p.IsLive, Status: string(p.EffectiveStatus(time.Now())),
		Title: p.Title, PricingModel: p.PricingModel, AcceptedAssetPolicies: p.AcceptedAssetPolicies,
		MerchantInfo: p.MerchantInfo, ExpiresAt: tsPtr(p.ExpiresAt), CreatedAt: ts(p.CreatedAt), UpdatedAt: ts(p.UpdatedAt)}
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
	return v
}

type txSummary struct {
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

type sessionView struct {
	ID             string                  `json:"id"`
	Token          *string                 `json:"token,omitempty"`
	URL            *string                 `json:"url,omitempty"`
	Status         string                  `json:"status"`
	PaymentPlanID  string                  `json:"paymentPlanId"`
	ProjectID      string                  `json:"projectId"`
	IsLive         bool                    `json:"isLive"`
	Email          *string                 `json:"email"`
	Metadata       map[string]string       `json:"metadata"`
	AmountUSD      string                  `json:"amountUsd"`
	AmountPaidUSD  string                  `json:"amountPaidUsd"`
	DepositAddress *string                 `json:"depositAddress"`
	PaymentOptions []payment.PaymentOption `json:"paymentOptions"`
	QuoteExpiresAt string                  `json:"quoteExpiresAt"`
	ExpiresAt      string                  `json:"expiresAt"`
	CompletedAt    *string                 `json:"completedAt"`
	Exception      *string                 `json:"exception"`
	Transactions   []txSummary             `json:"transactions,omitempty"`
	CreatedAt      string                  `json:"createdAt"`
	UpdatedAt      string                  `json:"updatedAt"`
}

func (s *Server) viewSession(v engine.SessionView) sessionView {
	cs := v.Session
	out := sessionView{ID: cs.ID, Status: string(cs.Status), PaymentPlanID: cs.PaymentPlanID, ProjectID: cs.ProjectID,
		IsLive: cs.IsLive, Email: nonEmpty(cs.Email), Metadata: cs.Metadata, AmountUSD: payment.FormatUSD(cs.AmountUSD),
		AmountPaidUSD: payment.FormatUSD(cs.AmountPaidUSD), DepositAddress: nonEmpty(cs.DepositAddress),
		PaymentOptions: cs.PaymentOptions, QuoteExpiresAt: ts(cs.QuoteExpiresAt), ExpiresAt: ts(cs.ExpiresAt),
		CompletedAt: tsPtr(cs.CompletedAt), Exception: nonEmpty(cs.Exception), CreatedAt: ts(cs.CreatedAt), UpdatedAt: ts(cs.UpdatedAt)}
	if v.Token != "" {
		url := s.CheckoutURL + "/checkout/" + v.Token
		out.Token, out.URL = &v.Token, &url
	}
	if out.Metadata == nil {
		out.Metadata = map[string]string{}
	}
	if out.PaymentOptions == nil {
		out.PaymentOptions = []payment.PaymentOption{}
	}
	if v.Transactions != nil {
		out.Transactions = []txSummary{}
		for _, t := range v.Transactions {
			out.Transactions = append(out.Transactions, txSummary{ID: t.ID, Status: string(t.Status), Network: t.Network,
				TxHash: t.TxHash, Symbol: t.Symbol, Amount: t.Amount, AmountUSD: payment.FormatUSD(t.AmountUSD),
				Confirmations: t.Confirmations, CreatedAt: ts(t.CreatedAt)})
		}
	}
	return out
}

type txView struct {
	ID                    string                 `json:"id"`
	ProjectID             string                 `json:"projectId"`
	CheckoutSessionID     string                 `json:"checkoutSessionId"`
	PaymentPlanID         string                 `json:"paymentPlanId"`
	IsLive                bool                   `json:"isLive"`
	Status                string                 `json:"status"`
	Network               string                 `json:"network"`
	ChainID               int64                  `json:"chainId"`
	TxHash                string                 `json:"txHash"`
	LogIndex              *int                   `json:"logIndex"`
	FromAddress           string                 `json:"fromAddress"`
	ToAddress             string                 `json:"toAddress"`
	AssetDefinitionID     string                 `json:"assetDefinitionId"`
	Symbol                string                 `json:"symbol"`
	Amount                string                 `json:"amount"`
	AmountBaseUnits       string                 `json:"amountBaseUnits"`
	AmountUSD             string                 `json:"amountUsd"`
	BlockNumber           *int64                 `json:"blockNumber"`
	BlockHash             *string                `json:"blockHash"`
	Confirmations         int                    `json:"confirmations"`
	RequiredConfirmations int                    `json:"requiredConfirmations"`
	FailureReason         *string                `json:"failureReason"`
	StatusHistory         []payment.StatusChange `json:"statusHistory"`
	CreatedAt             string                 `json:"createdAt"`
	UpdatedAt             string                 `json:"updatedAt"`
	ConfirmedAt           *string                `json:"confirmedAt"`
	FinalizedAt           *string                `json:"finalizedAt"`
	FailedAt              *string                `json:"failedAt"`
}

func viewTx(t payment.Transaction) txView {
	v := txView{ID: t.ID, ProjectID: t.ProjectID, CheckoutSessionID: t.CheckoutSessionID, PaymentPlanID: t.PaymentPlanID,
		IsLive: t.IsLive, Status: string(t.Status), Network: t.Network, ChainID: t.ChainID, TxHash: t.TxHash,
		FromAddress: t.FromAddress, ToAddress: t.ToAddress, AssetDefinitionID: t.AssetDefinitionID, Symbol: t.Symbol,
		Amount: t.Amount, AmountBaseUnits: t.AmountBaseUnits, AmountUSD: payment.FormatUSD(t.AmountUSD),
		BlockNumber: t.BlockNumber, BlockHash: nonEmpty(t.BlockHash), Confirmations: t.Confirmations,
		RequiredConfirmations: t.RequiredConfirmations, FailureReason: nonEmpty(t.FailureReason),
		StatusHistory: t.StatusHistory, CreatedAt: ts(t.CreatedAt), UpdatedAt: ts(t.UpdatedAt),
		ConfirmedAt: tsPtr(t.ConfirmedAt), FinalizedAt: tsPtr(t.FinalizedAt), FailedAt: tsPtr(t.FailedAt)}
	if t.LogIndex >= 0 {
		v.LogIndex = &t.LogIndex
	}
	if v.StatusHistory == nil {
		v.StatusHistory = []payment.StatusChange{}
	}
	return v
}

func ts(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func tsPtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := ts(*t)
	return &s
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
