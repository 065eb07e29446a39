package payment

import (
	"testing"

	"github.com/shopspring/decimal"
)

func TestSettle(t *testing.T) {
	s := Session{AmountUSD: decimal.RequireFromString("30"), PaymentOptions: []PaymentOption{
		{AssetDefinitionID: "usdc", AmountBaseUnits: "30000000"},         // 6 decimals, 1:1
		{AssetDefinitionID: "eth", AmountBaseUnits: "10000000000000000"}, // 0.01 ETH at 3000
	}}
	usdc := func(units string, st TransactionStatus) PaymentLine {
		return PaymentLine{AssetID: "usdc", AmountBaseUnits: units, Status: st}
	}
	zero := decimal.Zero
	cases := []struct {
		name       string
		status     SessionStatus
		lines      []PaymentLine
		completeOn TransactionStatus
		tolerance  decimal.Decimal
		want       Settlement
	}{
		{"nothing yet", SessionOpen, nil, TxFinalized, zero, Settlement{Status: SessionOpen, PaidUSD: zero, Exception: ""}},
		{"seen, not final", SessionOpen, []PaymentLine{usdc("30000000", TxConfirmed)}, TxFinalized, zero, Settlement{Status: SessionProcessing, PaidUSD: zero, Exception: ""}},
		{"final", SessionProcessing, []PaymentLine{usdc("30000000", TxFinalized)}, TxFinalized, zero, Settlement{Status: SessionCompleted, PaidUSD: decimal.NewFromInt(30), Exception: ""}},
		{"confirmed is enough", SessionProcessing, []PaymentLine{usdc("30000000", TxConfirmed)}, TxConfirmed, zero, Settlement{Status: SessionCompleted, PaidUSD: decimal.NewFromInt(30), Exception: ""}},
		{"underpaid", SessionProcessing, []PaymentLine{usdc("20000000", TxFinalized)}, TxFinalized, zero, Settlement{Status: SessionProcessing, PaidUSD: decimal.NewFromInt(20), Exception: ExceptionUnderpaid}},
		{"topped up", SessionProcessing, []PaymentLine{usdc("20000000", TxFinalized), usdc("10000000", TxFinalized)}, TxFinalized, zero, Settlement{Status: SessionCompleted, PaidUSD: decimal.NewFromInt(30), Exception: ""}},
		{"top-up still confirming", SessionProcessing, []PaymentLine{usdc("20000000", TxFinalized), usdc("10000000", TxConfirmed)}, TxFinalized, zero, Settlement{Status: SessionProcessing, PaidUSD: decimal.NewFromInt(20), Exception: ""}},
		{"within tolerance", SessionProcessing, []PaymentLine{usdc("29700000", TxFinalized)}, TxFinalized, decimal.NewFromInt(1), Settlement{Status: SessionCompleted, PaidUSD: decimal.RequireFromString("29.7"), Exception: ""}},
		{"overpaid", SessionProcessing, []PaymentLine{usdc("45000000", TxFinalized)}, TxFinalized, zero, Settlement{Status: SessionCompleted, PaidUSD: decimal.NewFromInt(45), Exception: ExceptionOverpaid}},
		{"failed does not count", SessionProcessing, []PaymentLine{usdc("30000000", TxFailed)}, TxFinalized, zero, Settlement{Status: SessionProcessing, PaidUSD: zero, Exception: ""}},
		{"other asset at its quoted rate", SessionOpen, []PaymentLine{{AssetID: "eth", AmountBaseUnits: "5000000000000000", Status: TxFinalized}, usdc("15000000", TxFinalized)}, TxFinalized, zero, Settlement{Status: SessionCompleted, PaidUSD: decimal.NewFromInt(30), Exception: ""}},
		{"late", SessionExpired, []PaymentLine{{AssetID: "usdc", AmountBaseUnits: "30000000", Status: TxFinalized, Late: true}}, TxFinalized, zero, Settlement{Status: SessionExpired, PaidUSD: decimal.NewFromInt(30), Exception: ExceptionPaidLate}},
		{"expired underpaid", SessionExpired, []PaymentLine{usdc("1000000", TxFinalized)}, TxFinalized, zero, Settlement{Status: SessionExpired, PaidUSD: decimal.NewFromInt(1), Exception: ExceptionUnderpaid}},
		{"completed stays", SessionCompleted, []PaymentLine{usdc("30000000", TxFinalized)}, TxFinalized, zero, Settlement{Status: SessionCompleted, PaidUSD: decimal.NewFromInt(30), Exception: ""}},
		{"completed, its payment reorged out", SessionCompleted, []PaymentLine{usdc("30000000", TxPending)}, TxConfirmed, zero, Settlement{Status: SessionCompleted, PaidUSD: zero, Exception: ExceptionReversed}},
		{"completed, its payment failed", SessionCompleted, []PaymentLine{usdc("30000000", TxFailed)}, TxConfirmed, zero, Settlement{Status: SessionCompleted, PaidUSD: zero, Exception: ExceptionReversed}},
		{"completed, mined again", SessionCompleted, []PaymentLine{usdc("30000000", TxConfirmed)}, TxConfirmed, zero, Settlement{Status: SessionCompleted, PaidUSD: decimal.NewFromInt(30), Exception: ""}},
	}
	for _, c := range cases {
		got := Settle(s, c.status, c.lines, c.completeOn, c.tolerance)
		if got.Status != c.want.Status || !got.PaidUSD.Equal(c.want.PaidUSD) || got.Exception != c.want.Exception {
			t.Errorf("%s: got %s %s %q, want %s %s %q", c.name, got.Status, got.PaidUSD, got.Exception, c.want.Status, c.want.PaidUSD, c.want.Exception)
		}
	}
}
