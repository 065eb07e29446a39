package views

import (
	"math/big"

	"github.com/paymentsd/paymentsd/payment"
)

// PayoutBatch is a payout batch as the API shows it (both shapes alike),
// with its report; Payouts are listed by the batch's own read, not in
// lists or events.
type PayoutBatch struct {
	ID          string        `json:"id"`
	ProjectID   string        `json:"projectId"`
	IsLive      bool          `json:"isLive"`
	Status      string        `json:"status"`
	Reference   string        `json:"reference"`
	FromAddress string        `json:"fromAddress"`
	CreatedBy   string        `json:"createdBy"`
	ApprovedBy  *string       `json:"approvedBy"`
	ApprovedAt  *string       `json:"approvedAt"`
	PayoutCount int           `json:"payoutCount"`
	Report      *PayoutReport `json:"report,omitempty"`
	Payouts     []Payout      `json:"payouts,omitempty"`
	CreatedAt   string        `json:"createdAt"`
	UpdatedAt   string        `json:"updatedAt"`
}

// PayoutReport is a batch's account: how many payouts are in each status
// and, per asset, what was asked, paid (finalized), is in flight (sent or
// confirmed), waits to be signed, and was not paid (failed, canceled or an
// exception), in whole units.
type PayoutReport struct {
	Statuses map[string]int `json:"statuses"`
	Totals   []PayoutTotal  `json:"totals"`
}

// PayoutTotal is one asset's line of a PayoutReport.
type PayoutTotal struct {
	AssetDefinitionID string `json:"assetDefinitionId"`
	Symbol            string `json:"symbol"`
	Network           string `json:"network"`
	Requested         string `json:"requested"`
	Paid              string `json:"paid"`
	InFlight          string `json:"inFlight"`
	ToSign            string `json:"toSign"`
	NotPaid           string `json:"notPaid"`
}

// Payout is one payout as the API shows it.
type Payout struct {
	ID                string            `json:"id"`
	BatchID           string            `json:"batchId"`
	Line              int               `json:"line"`
	Reference         string            `json:"reference"`
	Status            string            `json:"status"`
	Network           string            `json:"network"`
	ChainID           int64             `json:"chainId"`
	AssetDefinitionID string            `json:"assetDefinitionId"`
	Symbol            string            `json:"symbol"`
	Decimals          int               `json:"decimals"`
	TokenAddress      *string           `json:"tokenAddress"`
	Amount            string            `json:"amount"`
	AmountBaseUnits   string            `json:"amountBaseUnits"`
	FromAddress       string            `json:"fromAddress"`
	ToAddress         string            `json:"toAddress"`
	Transfer          *PreparedTransfer `json:"transfer"`
	TxHash            *string           `json:"txHash"`
	FailureReason     *string           `json:"failureReason"`
	CreatedAt         string            `json:"createdAt"`
	UpdatedAt         string            `json:"updatedAt"`
}

// PayoutOf renders a payout; its prepared transfer once its batch is
// approved.
func PayoutOf(p payment.Payout) Payout {
	v := Payout{ID: p.ID, BatchID: p.BatchID, Line: p.Line, Reference: p.Reference, Status: string(p.Status), Network: p.Network,
		ChainID: p.ChainID, AssetDefinitionID: p.AssetDefinitionID, Symbol: p.Symbol, Decimals: p.Decimals, TokenAddress: nonEmpty(p.TokenAddress),
		Amount: p.Amount(), AmountBaseUnits: p.AmountBaseUnits, FromAddress: p.FromAddress, ToAddress: p.ToAddress,
		TxHash: nonEmpty(p.TxHash), FailureReason: nonEmpty(p.FailureReason), CreatedAt: Time(p.CreatedAt), UpdatedAt: Time(p.UpdatedAt)}
	if p.Status != payment.PayoutAwaitingApproval {
		v.Transfer = prepared(p.Outgoing)
	}
	return v
}

// BatchOf renders a batch alone, as lists show it.
func BatchOf(b payment.PayoutBatch) PayoutBatch {
	v := PayoutBatch{ID: b.ID, ProjectID: b.ProjectID, IsLive: b.IsLive, Status: string(b.Status), Reference: b.Reference,
		FromAddress: b.FromAddress, CreatedBy: b.CreatedBy, ApprovedBy: nonEmpty(b.ApprovedBy), PayoutCount: b.Count,
		CreatedAt: Time(b.CreatedAt), UpdatedAt: Time(b.UpdatedAt)}
	if b.ApprovedAt != nil {
		t := Time(*b.ApprovedAt)
		v.ApprovedAt = &t
	}
	return v
}

// BatchReportOf renders a batch with its report (events carry it).
func BatchReportOf(rec payment.BatchRecord) PayoutBatch {
	v := BatchOf(rec.Batch)
	r := payment.ReportOf(rec.Payouts)
	rep := &PayoutReport{Statuses: map[string]int{}, Totals: []PayoutTotal{}}
	for s, n := range r.Statuses {
		rep.Statuses[string(s)] = n
	}
	for _, t := range r.Totals {
		amount := func(n *big.Int) string { return payment.UnitsToAmount(n.String(), t.Decimals) }
		rep.Totals = append(rep.Totals, PayoutTotal{AssetDefinitionID: t.AssetID, Symbol: t.Symbol, Network: t.Network,
			Requested: amount(t.Requested), Paid: amount(t.Paid), InFlight: amount(t.InFlight), ToSign: amount(t.ToSign), NotPaid: amount(t.NotPaid)})
	}
	v.Report = rep
	return v
}

// BatchDetailOf renders a batch with its report and its payouts.
func BatchDetailOf(rec payment.BatchRecord) PayoutBatch {
	v := BatchReportOf(rec)
	v.Payouts = make([]Payout, len(rec.Payouts))
	for i, p := range rec.Payouts {
		v.Payouts[i] = PayoutOf(p)
	}
	return v
}

// PayoutEvent renders a payout as an event's data.
func PayoutEvent(p payment.Payout, version int) ([]byte, error) {
	return Versioned(PayoutOf(p), version)
}

// BatchEvent renders a batch with its report as an event's data.
func BatchEvent(rec payment.BatchRecord, version int) ([]byte, error) {
	return Versioned(BatchReportOf(rec), version)
}
