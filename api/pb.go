package api

import (
	v1 "github.com/paymentsd/paymentsd/api/gen/paymentsd/v1"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/payment/views"
)

// The Connect records are built from the REST views, so both transports
// show the same fields with the same values.

func pbProject(v views.Project) *v1.Project {
	return &v1.Project{Id: v.ID, Name: v.Name, CompleteOn: v.CompleteOn, UnderpaymentTolerancePercent: v.UnderpaymentTolerancePercent,
		LatePaymentWindow: v.LatePaymentWindow, CreatedAt: v.CreatedAt, UpdatedAt: v.UpdatedAt}
}

func pbPlan(v views.Plan) *v1.PaymentPlan {
	out := &v1.PaymentPlan{Id: v.ID, ProjectId: v.ProjectID, IsLive: v.IsLive, Status: v.Status, Title: v.Title,
		PricingModel: v.PricingModel, AmountUsd: v.AmountUSD, MinAmountUsd: v.MinAmountUSD, MaxAmountUsd: v.MaxAmountUSD,
		RedirectUrl: v.RedirectURL, ExpiresAt: v.ExpiresAt, CreatedAt: v.CreatedAt, UpdatedAt: v.UpdatedAt,
		MerchantInfo: &v1.MerchantInfo{Name: v.MerchantInfo.Name, Email: v.MerchantInfo.Email,
			Website: v.MerchantInfo.Website, LogoUrl: v.MerchantInfo.LogoURL}}
	for _, p := range v.AcceptedAssetPolicies {
		out.AcceptedAssetPolicies = append(out.AcceptedAssetPolicies, &v1.Policy{PolicyType: p.PolicyType,
			AssetDefinitionId: p.AssetDefinitionID, EnvironmentScope: p.EnvironmentScope, ChainScope: p.ChainScope, Priority: p.Priority})
	}
	return out
}

func pbSession(v views.Session) *v1.CheckoutSession {
	out := &v1.CheckoutSession{Id: v.ID, Token: v.Token, Url: v.URL, Status: v.Status, PaymentPlanId: v.PaymentPlanID,
		ProjectId: v.ProjectID, IsLive: v.IsLive, Email: v.Email, Metadata: payment.MetadataStrings(v.Metadata), MetadataJson: string(v.Metadata), AmountUsd: v.AmountUSD,
		AmountPaidUsd: v.AmountPaidUSD, DepositAddress: v.DepositAddress, QuoteExpiresAt: v.QuoteExpiresAt,
		ExpiresAt: v.ExpiresAt, CompletedAt: v.CompletedAt, Exception: v.Exception, CreatedAt: v.CreatedAt, UpdatedAt: v.UpdatedAt}
	out.PaymentOptions = pbOptions(v.PaymentOptions)
	out.Transactions = pbSummaries(v.Transactions)
	return out
}

func pbPublicSession(v views.PublicSession) *v1.PublicCheckoutSession {
	out := &v1.PublicCheckoutSession{Id: v.ID, Token: v.Token, Url: v.URL, Status: v.Status, IsLive: v.IsLive,
		AmountUsd: v.AmountUSD, AmountPaidUsd: v.AmountPaidUSD, DepositAddress: v.DepositAddress,
		PaymentOptions: pbOptions(v.PaymentOptions), QuoteExpiresAt: v.QuoteExpiresAt, ExpiresAt: v.ExpiresAt,
		CompletedAt: v.CompletedAt, Exception: v.Exception, Transactions: pbSummaries(v.Transactions)}
	if p := v.PaymentPlan; p != nil {
		out.PaymentPlan = &v1.PlanSummary{Title: p.Title, RedirectUrl: p.RedirectURL,
			MerchantInfo: &v1.PublicMerchantInfo{Name: p.MerchantInfo.Name, LogoUrl: p.MerchantInfo.LogoURL}}
	}
	return out
}

func pbOptions(opts []payment.PaymentOption) []*v1.PaymentOption {
	var out []*v1.PaymentOption
	for _, o := range opts {
		out = append(out, &v1.PaymentOption{AssetDefinitionId: o.AssetDefinitionID,
			Network: o.Network, ChainId: o.ChainID, Symbol: o.Symbol, Decimals: int32(o.Decimals), TokenAddress: o.TokenAddress,
			Amount: o.Amount, AmountBaseUnits: o.AmountBaseUnits, PaymentUri: o.PaymentURI, WalletAccountOnly: o.WalletAccountOnly,
			DepositAddress: o.DepositAddress, Confirmations: int32(o.Confirmations)})
	}
	return out
}

func pbSummaries(txs []views.TransactionSummary) []*v1.TransactionSummary {
	var out []*v1.TransactionSummary
	for _, t := range txs {
		out = append(out, &v1.TransactionSummary{Id: t.ID, Status: t.Status, Network: t.Network,
			TxHash: t.TxHash, Symbol: t.Symbol, Amount: t.Amount, AmountUsd: t.AmountUSD,
			Confirmations: int32(t.Confirmations), CreatedAt: t.CreatedAt})
	}
	return out
}

// stringOrEmpty is a nullable string as a proto3 string ("" for none).
func stringOrEmpty(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func pbTx(v views.Transaction) *v1.Transaction {
	out := &v1.Transaction{Id: v.ID, ProjectId: v.ProjectID, CheckoutSessionId: stringOrEmpty(v.CheckoutSessionID), PaymentPlanId: stringOrEmpty(v.PaymentPlanID),
		IsLive: v.IsLive, Status: v.Status, Network: v.Network, ChainId: v.ChainID, TxHash: v.TxHash,
		FromAddress: v.FromAddress, ToAddress: v.ToAddress, AssetDefinitionId: v.AssetDefinitionID, Symbol: v.Symbol,
		Amount: v.Amount, AmountBaseUnits: v.AmountBaseUnits, AmountUsd: v.AmountUSD, BlockNumber: v.BlockNumber,
		BlockHash: v.BlockHash, Confirmations: int32(v.Confirmations), RequiredConfirmations: int32(v.RequiredConfirmations),
		FailureReason: v.FailureReason, Unexpected: v.Unexpected, CreatedAt: v.CreatedAt, UpdatedAt: v.UpdatedAt,
		ConfirmedAt: v.ConfirmedAt, FinalizedAt: v.FinalizedAt, FailedAt: v.FailedAt}
	if v.LogIndex != nil {
		li := int32(*v.LogIndex)
		out.LogIndex = &li
	}
	for _, h := range v.StatusHistory {
		out.StatusHistory = append(out.StatusHistory, &v1.StatusChange{Status: string(h.Status), At: views.Time(h.At), Reason: h.Reason})
	}
	return out
}

func pbRefund(v views.Refund) *v1.Refund {
	out := &v1.Refund{Id: v.ID, ProjectId: v.ProjectID, IsLive: v.IsLive, CheckoutSessionId: v.CheckoutSessionID, Status: v.Status,
		Network: v.Network, ChainId: v.ChainID, AssetDefinitionId: v.AssetDefinitionID, Symbol: v.Symbol, TokenAddress: v.TokenAddress,
		Amount: v.Amount, AmountBaseUnits: v.AmountBaseUnits, AmountUsd: v.AmountUSD, RateUsd: v.RateUSD, Reason: v.Reason,
		FromAddress: v.FromAddress, ToAddress: v.ToAddress, AddressSource: v.AddressSource, TxHash: v.TxHash,
		FailureReason: v.FailureReason, ClaimUrl: v.ClaimURL, CreatedAt: v.CreatedAt, UpdatedAt: v.UpdatedAt,
		ApprovedBy: v.ApprovedBy, ApprovedAt: v.ApprovedAt}
	out.Transfer = pbTransfer(v.Transfer)
	return out
}

func pbTransfer(t *views.PreparedTransfer) *v1.PreparedTransfer {
	if t == nil {
		return nil
	}
	return &v1.PreparedTransfer{ChainId: t.ChainID, From: t.From, To: t.To, Value: t.Value, Data: t.Data}
}

func pbBatch(v views.PayoutBatch) *v1.PayoutBatch {
	out := &v1.PayoutBatch{Id: v.ID, ProjectId: v.ProjectID, IsLive: v.IsLive, Status: v.Status, Reference: v.Reference,
		FromAddress: v.FromAddress, CreatedBy: v.CreatedBy, ApprovedBy: v.ApprovedBy, ApprovedAt: v.ApprovedAt,
		PayoutCount: int32(v.PayoutCount), CreatedAt: v.CreatedAt, UpdatedAt: v.UpdatedAt}
	if r := v.Report; r != nil {
		out.Report = &v1.PayoutReport{Statuses: make(map[string]int32, len(r.Statuses))}
		for s, n := range r.Statuses {
			out.Report.Statuses[s] = int32(n)
		}
		for _, t := range r.Totals {
			out.Report.Totals = append(out.Report.Totals, &v1.PayoutTotal{AssetDefinitionId: t.AssetDefinitionID, Symbol: t.Symbol,
				Network: t.Network, Requested: t.Requested, Paid: t.Paid, InFlight: t.InFlight, ToSign: t.ToSign, NotPaid: t.NotPaid})
		}
	}
	for _, p := range v.Payouts {
		out.Payouts = append(out.Payouts, pbPayout(p))
	}
	return out
}

func pbPayout(v views.Payout) *v1.Payout {
	return &v1.Payout{Id: v.ID, BatchId: v.BatchID, Line: int32(v.Line), Reference: v.Reference, Status: v.Status, Network: v.Network,
		ChainId: v.ChainID, AssetDefinitionId: v.AssetDefinitionID, Symbol: v.Symbol, Decimals: int32(v.Decimals),
		TokenAddress: v.TokenAddress, Amount: v.Amount, AmountBaseUnits: v.AmountBaseUnits, FromAddress: v.FromAddress,
		ToAddress: v.ToAddress, Transfer: pbTransfer(v.Transfer), TxHash: v.TxHash, FailureReason: v.FailureReason,
		CreatedAt: v.CreatedAt, UpdatedAt: v.UpdatedAt}
}
