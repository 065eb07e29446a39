package api

import (
	"encoding/json"
	"errors"
	"math/big"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/payment"
)

var fuzzCatalog = payment.Catalog{Assets: []payment.Asset{
	{ID: "usdc-devnet", Symbol: "USDC", Decimals: 6, Network: "devnet", ChainID: 1337, TokenAddress: "0x5FbDB2315678afecb367f032d93F642f64180aa3", Price: payment.PriceSource{Kind: payment.PriceUSDPegged}},
}}

// checkClientError fails unless err is nil, malformed JSON (a 400) or a
// validation error whose every detail names a field: never anything that
// would become a 500.
func checkClientError(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var m Malformed
	if errors.As(err, &m) {
		return
	}
	var e *payment.Error
	if !errors.As(err, &e) || e.Kind != payment.KindValidation {
		t.Fatalf("error %v is not a client error", err)
	}
	for _, d := range e.Details {
		if d.Field == "" || d.Message == "" {
			t.Fatalf("detail without field or message: %+v", d)
		}
	}
}

func FuzzDecodePlanInput(f *testing.F) {
	for _, seed := range []string{
		`{"title":"Pro","amountUsd":"10"}`,
		`{"title":"Tip","pricingModel":"variable_usd","minAmountUsd":"1","maxAmountUsd":"5"}`,
		`{"title":"A","amountUsd":"5","acceptedAssetPolicies":[{"policyType":"asset_definition","assetDefinitionId":"usdc-devnet","chainScope":["devnet"],"priority":3}]}`,
		`{"title":"A","amountUsd":"5","merchantInfo":{"name":"x","email":"a@b.co"},"expiresAt":"2099-01-01T00:00:00Z","redirectUrl":"https://x.example"}`,
		`{"title":5,"acceptedAssetPolicies":[1,{"priority":1e400}]}`,
		`[]`, `{`, `null`, `{"a":{"b":[[[]]]}}`,
		`{"name":"Pro","recipientAddress":"0x52908400098527886E0F7030069857D2E4169EE7","paymentOptions":[{"networkId":"devnet","tokenAddress":"0x5FbDB2315678afecb367f032d93F642f64180aa3","amount":"10.5"},{"networkId":1337,"tokenAddress":"","amount":"0.01"}],"redirectUrl":"https://x.example","quoteTtl":900}`,
		`{"name":"","recipientAddress":"0x52908400098527886e0f7030069857d2e4169ee7","paymentOptions":[{"networkId":"devnet","amount":"1e3"}],"quoteTtl":1.5}`,
		`{"paymentOptions":{},"quoteTtl":"60"}`,
		// quoteTtl is an integer however written; a fraction or a value
		// out of range is refused.
		`{"name":"Pro","recipientAddress":"0x52908400098527886E0F7030069857D2E4169EE7","paymentOptions":[{"networkId":1337.0,"amount":"1"}],"quoteTtl":900.0}`,
		`{"name":"Pro","recipientAddress":"0x52908400098527886E0F7030069857D2E4169EE7","paymentOptions":[{"networkId":"devnet","amount":"1"}],"quoteTtl":9e2}`,
		`{"name":"Pro","recipientAddress":"0x52908400098527886E0F7030069857D2E4169EE7","paymentOptions":[{"networkId":"devnet","amount":"1"}],"quoteTtl":9.00e2}`,
		`{"name":"Pro","recipientAddress":"0x52908400098527886E0F7030069857D2E4169EE7","paymentOptions":[{"networkId":"devnet","amount":"1"}],"quoteTtl":900.5}`,
		`{"name":"Pro","recipientAddress":"0x52908400098527886E0F7030069857D2E4169EE7","paymentOptions":[{"networkId":"devnet","amount":"1"}],"quoteTtl":1e400}`,
		`{"name":"Pro","recipientAddress":"0x52908400098527886E0F7030069857D2E4169EE7","paymentOptions":[{"networkId":"devnet","amount":"1"}],"quoteTtl":-1e400}`,
		`{"name":"Pro","recipientAddress":"0x52908400098527886E0F7030069857D2E4169EE7","paymentOptions":[{"networkId":1.337e3,"amount":"1"}],"quoteTtl":1e-400}`,
		`{"title":"A","amountUsd":"5","acceptedAssetPolicies":[{"policyType":"asset_definition","assetDefinitionId":"usdc-devnet","priority":3.0}]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, shape := range []Shape{ShapeFirst, ShapeSecond} {
			in, err := decodePlanInput(body, shape)
			checkClientError(t, err)
			if err != nil {
				return
			}
			plan, err := payment.NewPlan(in, "proj_x", false, fuzzCatalog, time.Now())
			checkClientError(t, err)
			if err == nil && (plan.Title == "" || plan.PricingModel == payment.PricingFixedUSD && plan.AmountUSD == nil ||
				plan.PricingModel == payment.PricingTokenAmount && (plan.RecipientAddress == "" || len(plan.TokenOptions) == 0)) {
				t.Fatalf("accepted an incomplete plan: %+v", plan)
			}
			if plan.QuoteTTL != 0 && (plan.QuoteTTL < payment.MinQuoteTTL || plan.QuoteTTL > payment.MaxQuoteTTL) {
				t.Fatalf("accepted quoteTtl %v", plan.QuoteTTL)
			}
			for _, o := range plan.TokenOptions {
				if o.AmountBaseUnits == "" || o.AmountBaseUnits == "0" || o.AssetID == "" {
					t.Fatalf("accepted an incomplete payment option: %+v", o)
				}
			}
		}
	})
}

func FuzzDecodeSessionInput(f *testing.F) {
	for _, seed := range []string{
		`{"paymentPlanId":"plan_01m80h0jzc3psaavehj57fnh3h"}`,
		`{"paymentPlanId":"plan_x","email":"a@b.co","metadata":{"k":"v"},"amountUsd":"12.5"}`,
		`{"metadata":{"k":1},"email":7}`, `{"paymentPlanId":null}`, `"x"`,
		`{"paymentPlanId":"plan_01m80h0jzc3psaavehj57fnh3h","metadata":{"orderId":123,"price":12.50,"big":123456789012345678901234567890,"e":1e400,"nested":{"a":[1,"two",null,true,{"b":-0.0}]}}}`,
		`{"paymentPlanId":"plan_01m80h0jzc3psaavehj57fnh3h","metadata":{"a":{"b":{"c":{"d":{"e":{"f":1}}}}}}}`,
		`{"paymentPlanId":"plan_01m80h0jzc3psaavehj57fnh3h","metadata":[1,2]}`,
		`{"paymentPlanId":"plan_01m80h0jzc3psaavehj57fnh3h","metadata":{"":1,"x":"\ud800"}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		in, err := decodeSessionInput(body)
		checkClientError(t, err)
		if err != nil {
			return
		}
		metadata, err := payment.CheckSessionInput(in)
		checkClientError(t, err)
		if err != nil {
			return
		}
		// Accepted metadata is a JSON object within the limits, and what
		// was sent, numbers exactly.
		if len(metadata) > payment.MaxMetadataBytes || !json.Valid(metadata) || metadata[0] != '{' {
			t.Fatalf("accepted metadata %q", metadata)
		}
		if in.Metadata != nil {
			back, ok := payment.DecodeMetadata(string(metadata))
			if !ok || !reflect.DeepEqual(back, in.Metadata) {
				t.Fatalf("metadata %v came back %s", in.Metadata, metadata)
			}
		}
	})
}

func TestDuplicateKeysAreFound(t *testing.T) {
	for body, want := range map[string]string{
		`{"a":1,"a":2}`:                       "a",
		`{"a":{"b":1},"c":[{"d":1,"d":2}]}`:   "d",
		`{"a":{"b":1,"b":[1]}}`:               "b",
		`{"a":[{"x":1},{"x":2}],"b":{"x":3}}`: "",
		`{"a":"a","b":"a"}`:                   "",
		`[{"k":1},{"k":1}]`:                   "",
		`{"a":[1,{"a":2}],"b":{"a":[]}}`:      "",
	} {
		got, found := duplicateKey([]byte(body))
		if got != want || found != (want != "") {
			t.Errorf("%s: %q, %v; want %q", body, got, found, want)
		}
	}
}

func FuzzDecodeResolution(f *testing.F) {
	for _, seed := range []string{
		`{"resolution":"underpayment_accepted"}`, `{"resolution":"overpayment_settled"}`, `{"resolution":"refunded"}`,
		`{"resolution":1}`, `{"resolution":null}`, `{}`, `{"resolution":"underpayment_accepted","x":1}`, `[`, `"x"`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := decodeResolution(body)
		checkClientError(t, err)
		if err != nil && r != "" {
			t.Fatalf("a refused body read as %q", r)
		}
	})
}

func FuzzDecodeAssignment(f *testing.F) {
	for _, seed := range []string{
		`{"checkoutSessionId":"cs_01m80h0jzc3psaavehj57fnh3h"}`, `{"checkoutSessionId":7}`, `{"checkoutSessionId":null}`,
		`{}`, `{"checkoutSessionId":"cs_x","x":1}`, `[`, `"x"`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		id, err := DecodeString(body, "checkoutSessionId")
		checkClientError(t, err)
		if err != nil && id != "" {
			t.Fatalf("a refused body read as %q", id)
		}
	})
}

// The account bodies: credentials, string fields and WebAuthn ceremony
// answers are decoded into a client error or values, never a panic; a
// credential that decodes is an object re-encoded as JSON.
func FuzzDecodeAccountBodies(f *testing.F) {
	for _, seed := range []string{
		`{"email":"a@b.co","password":"long enough pw"}`, `{"email":"a@b.co"}`, `{"email":7,"password":null}`,
		`{"challengeId":"wch_01m80h0jzc3psaavehj57fnh3h","credential":{"id":"x","response":{}},"name":"Laptop"}`,
		`{"challengeId":"x","credential":"not an object"}`, `{"credential":[1,2]}`, `{"role":"owner"}`, `{"xpub":""}`,
		`[]`, `{`, `null`, `{"a":{"b":[[[]]]}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		email, password, err := decodeCredentials(body, "email", "password")
		checkClientError(t, err)
		if err == nil && (email == "" && !strings.Contains(string(body), `"email":""`) || password == "" && !strings.Contains(string(body), `"password":""`)) {
			t.Fatalf("credentials %q %q decoded from %q", email, password, body)
		}
		fields, err := BodyFields(body, []string{"role"}, "name")
		checkClientError(t, err)
		if err == nil && fields["role"] == nil {
			t.Fatalf("a required field missing was accepted: %q", body)
		}
		id, _, credential, err := ceremonyBody(body, true)
		checkClientError(t, err)
		if err == nil && (id == "" && !strings.Contains(string(body), `"challengeId":""`) || len(credential) == 0 || credential[0] != '{') {
			t.Fatalf("ceremony %q %q decoded from %q", id, credential, body)
		}
	})
}

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
		checkClientError(t, err)
		if err != nil {
			return
		}
		if id != "" && id != sessionID {
			return // another session: the service finds none
		}
		r, err := payment.NewRefund(in, s, txs, held, fuzzCatalog, rate, time.Now())
		checkClientError(t, err)
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
		checkClientError(t, err)
		if err != nil {
			return
		}
		b, payouts, err := payment.NewPayoutBatch(in, fuzzCatalog, false, "key_1", time.Now())
		checkClientError(t, err)
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
