package checkout

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/paymentsd/paymentsd/api/internal/rest"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/payment/views"
)

// firstShapePlanFields are the plan payload's fields that only the first
// shape has.
var firstShapePlanFields = []string{"title", "pricingModel", "amountUsd", "minAmountUsd", "maxAmountUsd",
	"acceptedAssetPolicies", "merchantInfo", "expiresAt"}

// decodePlanInput reads a payment plan create (or update) payload. Only
// malformed JSON is an error here; fields of the wrong type are left in
// in.Problems for validation to report together with its own findings. In
// the second shape, a payload with none of the first shape's own fields is
// the second shape's (name, recipientAddress, paymentOptions, redirectUrl,
// quoteTtl); one with them is the first's, which the dashboard sends.
func decodePlanInput(body []byte, shape views.Shape) (payment.PlanInput, error) {
	obj, err := rest.ParseObject(body)
	if err != nil {
		return payment.PlanInput{}, err
	}
	var probs payment.Problems
	if shape == views.ShapeSecond && !slices.ContainsFunc(firstShapePlanFields, func(k string) bool { _, ok := obj[k]; return ok }) {
		return decodeTokenPlanInput(obj), nil
	}
	f := rest.NewFields(obj, "", &probs)
	in := payment.PlanInput{
		Title:        f.Str("title"),
		PricingModel: f.Str("pricingModel"),
		AmountUSD:    f.Str("amountUsd"),
		MinAmountUSD: f.Str("minAmountUsd"),
		MaxAmountUSD: f.Str("maxAmountUsd"),
		RedirectURL:  f.Str("redirectUrl"),
		ExpiresAt:    f.Str("expiresAt"),
	}
	if policies, ok := f.Array("acceptedAssetPolicies"); ok {
		in.AcceptedAssetPolicies = make([]payment.PolicyInput, 0, len(policies))
		for i, v := range policies {
			path := fmt.Sprintf("acceptedAssetPolicies[%d]", i)
			m, isObj := v.(map[string]any)
			if !isObj {
				probs.Add(path, "must be an object")
				continue
			}
			pf := rest.NewFields(m, path, &probs)
			in.AcceptedAssetPolicies = append(in.AcceptedAssetPolicies, payment.PolicyInput{
				PolicyType:        pf.Str("policyType"),
				AssetDefinitionID: pf.Str("assetDefinitionId"),
				EnvironmentScope:  pf.Str("environmentScope"),
				ChainScope:        pf.Strings("chainScope"),
				Priority:          pf.Integer("priority"),
			})
			pf.Done()
		}
	}
	if mf := f.Object("merchantInfo"); mf != nil {
		in.MerchantInfo = &payment.MerchantInfo{}
		for key, dst := range map[string]*string{"name": &in.MerchantInfo.Name, "email": &in.MerchantInfo.Email,
			"website": &in.MerchantInfo.Website, "logoUrl": &in.MerchantInfo.LogoURL} {
			if s := mf.Str(key); s != nil {
				*dst = *s
			}
		}
		mf.Done()
	}
	f.Done()
	in.Problems = probs
	return in, nil
}

// decodeTokenPlanInput reads the second shape's plan payload.
func decodeTokenPlanInput(obj map[string]any) payment.PlanInput {
	var probs payment.Problems
	f := rest.NewFields(obj, "", &probs)
	in := payment.TokenPlanInput{
		Name:             f.Str("name"),
		RecipientAddress: f.Str("recipientAddress"),
		RedirectURL:      f.Str("redirectUrl"),
		QuoteTTL:         f.Integer("quoteTtl"),
	}
	in.OptionsSent = obj["paymentOptions"] != nil
	if options, ok := f.Array("paymentOptions"); ok {
		in.PaymentOptions = make([]payment.TokenOptionInput, 0, len(options))
		for i, v := range options {
			path := fmt.Sprintf("paymentOptions[%d]", i)
			m, isObj := v.(map[string]any)
			if !isObj {
				probs.Add(path, "must be an object")
				continue
			}
			of := rest.NewFields(m, path, &probs)
			o := payment.TokenOptionInput{TokenAddress: of.Str("tokenAddress"), Amount: of.Str("amount")}
			// A network's key, or its chain ID as a number or a string.
			if v, ok := of.Get("networkId"); ok {
				switch n := v.(type) {
				case string:
					o.NetworkID = &n
				case json.Number:
					if id, whole, fits := payment.ParseInteger(n.String()); whole && fits {
						s := strconv.FormatInt(id, 10) // 8453.0 is chain 8453
						o.NetworkID = &s
					} else {
						probs.Add(path+".networkId", "must be a network key or a chain ID")
					}
				default:
					probs.Add(path+".networkId", "must be a network key or a chain ID")
				}
			}
			in.PaymentOptions = append(in.PaymentOptions, o)
			of.Done()
		}
	}
	f.Done()
	return payment.PlanInput{Token: &in, Problems: probs}
}

// decodeSessionInput reads a checkout session create payload.
func decodeSessionInput(body []byte) (payment.SessionInput, error) {
	obj, err := rest.ParseObject(body)
	if err != nil {
		return payment.SessionInput{}, err
	}
	var probs payment.Problems
	f := rest.NewFields(obj, "", &probs)
	in := payment.SessionInput{
		PaymentPlanID: f.Str("paymentPlanId"),
		Email:         f.Str("email"),
		Metadata:      f.Raw("metadata"),
		AmountUSD:     f.Str("amountUsd"),
	}
	f.Done()
	in.Problems = probs
	return in, nil
}
