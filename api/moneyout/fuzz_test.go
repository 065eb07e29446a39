package moneyout

import (
	"math/big"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/api/internal/rest/resttest"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/shopspring/decimal"
)

// A refund's payload, decoded and checked against a session that received
// 10 USDC with 4 already refunding: a client error, or a refund of at
// least one base unit and never more than the 6 that remain.
func FuzzDecodeRefundInput(f *testing.F) {
	for _, seed := range []string{
		`{"checkoutSessionId":"cs_01m80h0jzc3psaavehj57fnh3h"}`,
		`{"checkoutSessionId":"cs_01m80h0jzc3psaavehj57fnh3h","amount":"6"}`,
		`{"checkoutSessionId":"cs_01m80h0jzc3psaavehj57fnh3h","amount":"6.000001"}`,
		`{"checkoutSessionId":"cs_01m80h0jzc3psaavehj57fnh3h","amountUsd":"5.999999"}`,
		`{"checkoutSessionId":"cs_01m80h0jzc3psaavehj57fnh3h","amount":"1","amountUsd":"1"}`,
		`{"checkoutSessionId":"cs_01m80h0jzc3psaavehj57fnh3h","address":"0x000000000000000000000000000000000000bEEF","reason":"r"}`,
		`{"checkoutSessionId":"cs_01m80h0jzc3psaavehj57fnh3h","assetDefinitionId":"eth-devnet"}`,
		`{"checkoutSessionId":7}`, `{"amount":-1}`, `{}`, `[`, `"x"`, `{"checkoutSessionId":"cs_x","x":1}`,
	} {
		f.Add([]byte(seed))
	}
	const sessionID = "cs_01m80h0jzc3psaavehj57fnh3h"
	s := payment.Session{ID: sessionID, ProjectID: "proj_1", DepositAddress: "0x00000000000000000000000000000000000000aa"}
	txs := []payment.Transaction{{CheckoutSessionID: sessionID, Status: payment.TxFinalized, AssetDefinitionID: "usdc-devnet", AmountBaseUnits: "10000000"}}
	held := []payment.Refund{{Outgoing: payment.Outgoing{AssetDefinitionID: "usdc-devnet", Status: payment.RefundSent, AmountBaseUnits: "4000000"}}}
	rate := func(payment.Asset) (decimal.Decimal, bool) { return decimal.NewFromInt(1), true }
	f.Fuzz(func(t *testing.T, body []byte) {
		id, in, err := decodeRefundInput(body)
		resttest.CheckClientError(t, err)
		if err != nil {
			return
		}
		if id != "" && id != sessionID {
			return // another session: the service finds none
		}
		r, err := payment.NewRefund(in, s, txs, held, resttest.Catalog, rate, time.Now())
		resttest.CheckClientError(t, err)
		if err != nil {
			return
		}
		n, ok := new(big.Int).SetString(r.AmountBaseUnits, 10)
		if !ok || n.Sign() <= 0 || n.Cmp(big.NewInt(6000000)) > 0 {
			t.Fatalf("a refund of %q base units from %s", r.AmountBaseUnits, body)
		}
	})
}

// FuzzDecodePayoutBatch decodes batches as CSV and as JSON: a client
// error or a batch, never a panic, and a batch's payouts are exactly its
// lines, each a positive amount to a payee that is not the batch's
// address.
func FuzzDecodePayoutBatch(f *testing.F) {
	const from = "0x00000000000000000000000000000000000000aa"
	for _, seed := range []string{
		"address,asset,amount,reference\n0x000000000000000000000000000000000000bEEF,usdc-devnet,12.5,inv-1\n",
		"\xef\xbb\xbfAddress,Asset,Amount\r\n0x000000000000000000000000000000000000bEEF,eth-devnet,0.01\r\n",
		"address,asset,amount\n\"0x000000000000000000000000000000000000bEEF\",usdc-devnet,\"1\"\n,,\n",
		"address,asset,amount,reference\n0x1,usdc-devnet,1,a\n0x000000000000000000000000000000000000bEEF,usdc-devnet,1,a\n",
		"amount,asset\n1,usdc-devnet\n", "address,asset,amount,memo\n", "address,asset,amount\n\"unterminated\n", "",
		`{"fromAddress":"` + from + `","payouts":[{"address":"0x000000000000000000000000000000000000bEEF","asset":"usdc-devnet","amount":"1"}]}`,
		`{"fromAddress":"` + from + `","payouts":[1,{"address":7}]}`, `{"payouts":"x"}`, `[`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var in payment.PayoutBatchInput
		var err error
		if len(body) > 0 && body[0] == '{' {
			in, err = decodePayoutBatch(body)
		} else {
			in, err = decodePayoutCSV(body, url.Values{"fromAddress": {from}})
		}
		resttest.CheckClientError(t, err)
		if err != nil {
			return
		}
		b, payouts, err := payment.NewPayoutBatch(in, resttest.Catalog, false, "key_1", time.Now())
		resttest.CheckClientError(t, err)
		if err != nil {
			return
		}
		if b.Count != len(in.Lines) || len(payouts) != len(in.Lines) {
			t.Fatalf("%d lines became %d payouts (count %d)", len(in.Lines), len(payouts), b.Count)
		}
		for _, p := range payouts {
			n, ok := new(big.Int).SetString(p.AmountBaseUnits, 10)
			if !ok || n.Sign() <= 0 || p.ToAddress == "" || strings.EqualFold(p.ToAddress, b.FromAddress) {
				t.Fatalf("payout %+v from %q", p, body)
			}
		}
	})
}
