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
		{"nothing yet", SessionOpen, nil, TxFinalized, zero, Settlement{SessionOpen, zero, ""}},
		{"seen, not final", SessionOpen, []PaymentLine{usdc("30000000", TxConfirmed)}, TxFinalized, zero, Settlement{SessionProcessing, zero, ""}},
		{"final", SessionProcessing, []PaymentLine{usdc("30000000", TxFinalized)}, TxFinalized, zero, Settlement{SessionCompleted, decimal.NewFromInt(30), ""}},
		{"confirmed is enough", SessionProcessing, []PaymentLine{usdc("30000000", TxConfirmed)}, TxConfirmed, zero, Settlement{SessionCompleted, decimal.NewFromInt(30), ""}},
		{"underpaid", SessionProcessing, []PaymentLine{usdc("20000000", TxFinalized)}, TxFinalized, zero, Settlement{SessionProcessing, decimal.NewFromInt(20), ExceptionUnderpaid}},
		{"topped up", SessionProcessing, []PaymentLine{usdc("20000000", TxFinalized), usdc("10000000", TxFinalized)}, TxFinalized, zero, Settlement{SessionCompleted, decimal.NewFromInt(30), ""}},
		{"top-up still confirming", SessionProcessing, []PaymentLine{usdc("20000000", TxFinalized), usdc("10000000", TxConfirmed)}, TxFinalized, zero, Settlement{SessionProcessing, decimal.NewFromInt(20), ""}},
		{"within tolerance", SessionProcessing, []PaymentLine{usdc("29700000", TxFinalized)}, TxFinalized, decimal.NewFromInt(1), Settlement{SessionCompleted, decimal.RequireFromString("29.7"), ""}},
		{"overpaid", SessionProcessing, []PaymentLine{usdc("45000000", TxFinalized)}, TxFinalized, zero, Settlement{SessionCompleted, decimal.NewFromInt(45), ExceptionOverpaid}},
		{"failed does not count", SessionProcessing, []PaymentLine{usdc("30000000", TxFailed)}, TxFinalized, zero, Settlement{SessionProcessing, zero, ""}},
		{"other asset at its quoted rate", SessionOpen, []PaymentLine{{AssetID: "eth", AmountBaseUnits: "5000000000000000", Status: TxFinalized}, usdc("15000000", TxFinalized)}, TxFinalized, zero, Settlement{SessionCompleted, decimal.NewFromInt(30), ""}},
		{"late", SessionExpired, []PaymentLine{{AssetID: "usdc", AmountBaseUnits: "30000000", Status: TxFinalized, Late: true}}, TxFinalized, zero, Settlement{SessionExpired, decimal.NewFromInt(30), ExceptionPaidLate}},
		{"expired underpaid", SessionExpired, []PaymentLine{usdc("1000000", TxFinalized)}, TxFinalized, zero, Settlement{SessionExpired, decimal.NewFromInt(1), ExceptionUnderpaid}},
		{"completed stays", SessionCompleted, []PaymentLine{usdc("30000000", TxFinalized)}, TxFinalized, zero, Settlement{SessionCompleted, decimal.NewFromInt(30), ""}},
		{"completed, its payment reorged out", SessionCompleted, []PaymentLine{usdc("30000000", TxPending)}, TxConfirmed, zero, Settlement{SessionCompleted, zero, ExceptionReversed}},
		{"completed, its payment failed", SessionCompleted, []PaymentLine{usdc("30000000", TxFailed)}, TxConfirmed, zero, Settlement{SessionCompleted, zero, ExceptionReversed}},
		{"completed, mined again", SessionCompleted, []PaymentLine{usdc("30000000", TxConfirmed)}, TxConfirmed, zero, Settlement{SessionCompleted, decimal.NewFromInt(30), ""}},
	}
	for _, c := range cases {
		got := Settle(s, c.status, c.lines, c.completeOn, c.tolerance)
		if got.Status != c.want.Status || !got.PaidUSD.Equal(c.want.PaidUSD) || got.Exception != c.want.Exception {
			t.Errorf("%s: got %s %s %q, want %s %s %q", c.name, got.Status, got.PaidUSD, got.Exception, c.want.Status, c.want.PaidUSD, c.want.Exception)
		}
	}
}
