package checkout

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/api/internal/rest"
	"github.com/paymentsd/paymentsd/api/internal/rest/resttest"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/payment/views"
)

// A field of JSON Schema's type integer takes any number whose value is
// whole, however written; a fraction is refused naming the field, and so
// is a whole number out of the field's range, with the range's message.
func TestIntegerFieldsTakeWholeNumbersHoweverWritten(t *testing.T) {
	plan := func(ttl string) string {
		return `{"name":"Pro","recipientAddress":"0x52908400098527886E0F7030069857D2E4169EE7","paymentOptions":[{"networkId":"devnet","tokenAddress":"0x5FbDB2315678afecb367f032d93F642f64180aa3","amount":"10.5"}],"quoteTtl":` + ttl + `}`
	}
	for _, ttl := range []string{"900", "900.0", "9e2", "9.00e2", "9E+2", "90000e-2"} {
		in, err := decodePlanInput([]byte(plan(ttl)), views.ShapeSecond)
		if err != nil || len(in.Problems) != 0 || in.Token == nil || in.Token.QuoteTTL == nil || *in.Token.QuoteTTL != 900 {
			t.Errorf("quoteTtl %s: %+v %v", ttl, in, err)
			continue
		}
		p, err := payment.NewPlan(in, "proj_x", false, resttest.Catalog, time.Now())
		if err != nil || p.QuoteTTL != 15*time.Minute {
			t.Errorf("quoteTtl %s: %v %v", ttl, p.QuoteTTL, err)
		}
	}
	for ttl, message := range map[string]string{
		"900.5": "must be an integer", "9.005e2": "must be an integer", "1e-400": "must be an integer", `"900"`: "must be an integer",
		"1e400": "between 60 and 604800", "-1e400": "between 60 and 604800", "604801.0": "between 60 and 604800",
		"59": "between 60 and 604800", "123456789012345678901234567890": "between 60 and 604800",
	} {
		in, err := decodePlanInput([]byte(plan(ttl)), views.ShapeSecond)
		if err == nil {
			_, err = payment.NewPlan(in, "proj_x", false, resttest.Catalog, time.Now())
			if len(in.Problems) > 0 {
				err = in.Problems.Err()
			}
		}
		var e *payment.Error
		if !errors.As(err, &e) || e.Kind != payment.KindValidation || len(e.Details) != 1 ||
			e.Details[0].Field != "quoteTtl" || !strings.Contains(e.Details[0].Message, message) {
			t.Errorf("quoteTtl %s: %v; want a 422 on quoteTtl saying %q", ttl, err, message)
		}
	}

	// The other integer fields read the same way.
	in, err := decodePlanInput([]byte(`{"title":"A","amountUsd":"5","acceptedAssetPolicies":[{"policyType":"asset_definition","assetDefinitionId":"usdc-devnet","priority":3.0},{"policyType":"asset_definition","assetDefinitionId":"usdc-devnet","priority":0.5}]}`), views.ShapeFirst)
	if err != nil || *in.AcceptedAssetPolicies[0].Priority != 3 || len(in.Problems) != 1 || in.Problems[0].Field != "acceptedAssetPolicies[1].priority" {
		t.Errorf("priority: %+v %v", in, err)
	}
	for raw, want := range map[string]int64{"1e400": math.MaxInt32 + 1, "-1e400": math.MinInt32 - 1, "2147483648": math.MaxInt32 + 1, "2147483647.0": math.MaxInt32} {
		var probs payment.Problems
		obj, _ := rest.ParseObject([]byte(`{"sessionLifetimeSeconds":` + raw + `}`))
		if got := rest.NewFields(obj, "", &probs).Integer("sessionLifetimeSeconds"); got == nil || *got != want || len(probs) != 0 {
			t.Errorf("%s: %v %v; want %d", raw, got, probs, want)
		}
	}

	// A chain ID as a number is the same chain however it is written.
	for _, id := range []string{"1337", "1337.0", "1.337e3"} {
		in, _ := decodePlanInput([]byte(strings.Replace(plan("900"), `"networkId":"devnet"`, `"networkId":`+id, 1)), views.ShapeSecond)
		if len(in.Problems) != 0 || *in.Token.PaymentOptions[0].NetworkID != "1337" {
			t.Errorf("networkId %s: %+v", id, in.Problems)
		}
	}
	in, _ = decodePlanInput([]byte(strings.Replace(plan("900"), `"networkId":"devnet"`, `"networkId":1337.5`, 1)), views.ShapeSecond)
	if len(in.Problems) != 1 || in.Problems[0].Field != "paymentOptions[0].networkId" {
		t.Errorf("networkId 1337.5: %+v", in.Problems)
	}
}
