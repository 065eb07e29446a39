package checkout

import (
	"testing"

	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/payment"
)

func TestRemainingURI(t *testing.T) {
	s := payment.Session{AmountUSD: decimal.NewFromInt(25), DepositAddress: "0xabc"}
	o := payment.PaymentOption{ChainID: 1337, TokenAddress: "0xtoken", AmountBaseUnits: "25000000",
		PaymentURI: "ethereum:0xtoken@1337/transfer?address=0xabc&uint256=25000000"}
	if got := remainingURI(s, o); got != o.PaymentURI {
		t.Errorf("unpaid: %s", got)
	}
	s.AmountPaidUSD = decimal.NewFromInt(10)
	if got := remainingURI(s, o); got != "ethereum:0xtoken@1337/transfer?address=0xabc&uint256=15000000" {
		t.Errorf("underpaid: %s", got)
	}
	eth := payment.PaymentOption{ChainID: 1337, AmountBaseUnits: "8333333333333334"}
	if got := remainingURI(s, eth); got != "ethereum:0xabc@1337?value=5000000000000001" {
		t.Errorf("underpaid in ETH (rounded up): %s", got)
	}
}
