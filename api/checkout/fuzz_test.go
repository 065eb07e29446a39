package checkout

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/api/internal/rest/resttest"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/payment/views"
)

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
		for _, shape := range []views.Shape{views.ShapeFirst, views.ShapeSecond} {
			in, err := decodePlanInput(body, shape)
			resttest.CheckClientError(t, err)
			if err != nil {
				return
			}
			plan, err := payment.NewPlan(in, "proj_x", false, resttest.Catalog, time.Now())
			resttest.CheckClientError(t, err)
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
		resttest.CheckClientError(t, err)
		if err != nil {
			return
		}
		metadata, err := payment.CheckSessionInput(in)
		resttest.CheckClientError(t, err)
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
