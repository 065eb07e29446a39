package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/paymentsd/paymentsd/payment"
)

// errMalformed marks a body that is not JSON at all (a 400, not a 422).
type Malformed struct{ Msg string }

func (e Malformed) Error() string { return e.Msg }

// parseObject parses a JSON body whose top level must be an object. Numbers
// stay json.Number, so nothing is rounded through a float.
func ParseObject(body []byte) (map[string]any, error) {
	// Refused rather than repaired: invalid UTF-8 (the decoder would turn
	// it into U+FFFD) and a key given twice (the decoder keeps the last;
	// another parser on the way may keep the first).
	if !utf8.Valid(body) {
		return nil, Malformed{"Malformed JSON: the body is not valid UTF-8"}
	}
	if key, ok := duplicateKey(body); ok {
		return nil, Malformed{fmt.Sprintf("Malformed JSON: the key %q is given twice in one object", key)}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, Malformed{"Malformed JSON: " + strings.TrimPrefix(err.Error(), "json: ")}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, Malformed{"Malformed JSON: unexpected data after the top-level value"}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, Malformed{"Malformed JSON: the body must be a JSON object"}
	}
	return obj, nil
}

// duplicateKey finds a key given twice in one object of a JSON document.
// A document that does not parse has none: the decoder reports it.
func duplicateKey(body []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	// One frame per open object or array: its keys seen, and whether the
	// next string token is a key.
	type frame struct {
		keys   map[string]bool
		object bool
		isKey  bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.isKey {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				continue
			}
			key, _ := tok.(string)
			if top.keys[key] {
				return key, true
			}
			top.keys[key], top.isKey = true, false
			continue
		}
		if top != nil && top.object {
			top.isKey = true // a value was read: a key comes next
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{keys: map[string]bool{}, object: true, isKey: true})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if len(stack) == 0 {
			return "", false
		}
	}
}

// fields reads a JSON object field by field, recording a problem for each
// field of the wrong type and, in done, for each field it does not know.
type Fields struct {
	path  string
	m     map[string]any
	seen  []string
	probs *payment.Problems
}

func NewFields(m map[string]any, path string, probs *payment.Problems) *Fields {
	return &Fields{path: path, m: m, probs: probs}
}

func (f *Fields) name(key string) string {
	if key == "" {
		key = `""` // an empty key still needs a visible name
	}
	if f.path == "" {
		return key
	}
	return f.path + "." + key
}

// get returns the raw value of key; null counts as absent.
func (f *Fields) get(key string) (any, bool) {
	f.seen = append(f.seen, key)
	v, ok := f.m[key]
	return v, ok && v != nil
}

func (f *Fields) Str(key string) *string {
	v, ok := f.get(key)
	if !ok {
		return nil
	}
	s, isStr := v.(string)
	if !isStr {
		f.probs.Add(f.name(key), "must be a string")
		return nil
	}
	return &s
}

// integer reads a field of JSON Schema's type "integer": any number whose
// value is whole, however it is written (900, 900.0, 9e2); a fraction
// (900.5) is refused. A whole number beyond 32 bits (1e400) reads as the
// 32-bit bound, one past it, for the field's own range check to refuse
// with its message, which names the range: every integer field has one.
func (f *Fields) Integer(key string) *int64 {
	v, ok := f.get(key)
	if !ok {
		return nil
	}
	n, isNum := v.(json.Number)
	if !isNum {
		f.probs.Add(f.name(key), "must be an integer")
		return nil
	}
	i, whole, _ := payment.ParseInteger(n.String())
	if !whole {
		f.probs.Add(f.name(key), "must be an integer")
		return nil
	}
	i = min(max(i, math.MinInt32-1), math.MaxInt32+1)
	return &i
}

func (f *Fields) Boolean(key string) *bool {
	v, ok := f.get(key)
	if !ok {
		return nil
	}
	b, isBool := v.(bool)
	if !isBool {
		f.probs.Add(f.name(key), "must be true or false")
		return nil
	}
	return &b
}

func (f *Fields) Object(key string) *Fields {
	v, ok := f.get(key)
	if !ok {
		return nil
	}
	m, isObj := v.(map[string]any)
	if !isObj {
		f.probs.Add(f.name(key), "must be an object")
		return nil
	}
	return NewFields(m, f.name(key), f.probs)
}

func (f *Fields) Array(key string) ([]any, bool) {
	v, ok := f.get(key)
	if !ok {
		return nil, false
	}
	a, isArr := v.([]any)
	if !isArr {
		f.probs.Add(f.name(key), "must be an array")
		return nil, false
	}
	return a, true
}

func (f *Fields) Strings(key string) []string {
	a, ok := f.Array(key)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(a))
	for i, v := range a {
		s, isStr := v.(string)
		if !isStr {
			f.probs.Add(fmt.Sprintf("%s[%d]", f.name(key), i), "must be a string")
			continue
		}
		out = append(out, s)
	}
	return out
}

// stringMap reads an object whose values must all be strings.
// raw returns the value of key as decoded, for a free-form field (nil when
// absent or null).
func (f *Fields) Raw(key string) any {
	v, _ := f.get(key)
	return v
}

// done records every field that was not read as unknown.
func (f *Fields) Done() {
	var unknown []string
	for k := range f.m {
		if !slices.Contains(f.seen, k) {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	for _, k := range unknown {
		f.probs.Add(f.name(k), "is not a known field")
	}
}

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
func decodePlanInput(body []byte, shape Shape) (payment.PlanInput, error) {
	obj, err := ParseObject(body)
	if err != nil {
		return payment.PlanInput{}, err
	}
	var probs payment.Problems
	if shape == ShapeSecond && !slices.ContainsFunc(firstShapePlanFields, func(k string) bool { _, ok := obj[k]; return ok }) {
		return decodeTokenPlanInput(obj), nil
	}
	f := NewFields(obj, "", &probs)
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
			pf := NewFields(m, path, &probs)
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
	f := NewFields(obj, "", &probs)
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
			of := NewFields(m, path, &probs)
			o := payment.TokenOptionInput{TokenAddress: of.Str("tokenAddress"), Amount: of.Str("amount")}
			// A network's key, or its chain ID as a number or a string.
			if v, ok := of.get("networkId"); ok {
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
	obj, err := ParseObject(body)
	if err != nil {
		return payment.SessionInput{}, err
	}
	var probs payment.Problems
	f := NewFields(obj, "", &probs)
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

type paymentSubmission struct{ network, txHash string }

// decodePaymentSubmission reads a payer's {network, txHash}.
func decodePaymentSubmission(body []byte) (paymentSubmission, error) {
	obj, err := ParseObject(body)
	if err != nil {
		return paymentSubmission{}, err
	}
	var probs payment.Problems
	f := NewFields(obj, "", &probs)
	network, hash := f.Str("network"), f.Str("txHash")
	f.Done()
	if network == nil && !slices.ContainsFunc(probs, func(p payment.FieldError) bool { return p.Field == "network" }) {
		probs.Add("network", "is required")
	}
	if hash == nil && !slices.ContainsFunc(probs, func(p payment.FieldError) bool { return p.Field == "txHash" }) {
		probs.Add("txHash", "is required")
	}
	if err := probs.Err(); err != nil {
		return paymentSubmission{}, err
	}
	return paymentSubmission{*network, *hash}, nil
}

// decodeResolution reads a merchant's {resolution} of a session's
// exception; a missing one is the service's to refuse, once it has checked
// the session is the caller's.
func decodeResolution(body []byte) (payment.Resolution, error) {
	obj, err := ParseObject(body)
	if err != nil {
		return "", err
	}
	var probs payment.Problems
	f := NewFields(obj, "", &probs)
	r := f.Str("resolution")
	f.Done()
	if err := probs.Err(); err != nil || r == nil {
		return "", err
	}
	return payment.Resolution(*r), nil
}

// decodeString reads a payload of one string field ({"checkoutSessionId":
// …} of an assignment, {"txHash": …}, {"address": …}); a missing one is
// "", the service's to refuse once it has checked the resource is the
// caller's.
func DecodeString(body []byte, field string) (string, error) {
	obj, err := ParseObject(body)
	if err != nil {
		return "", err
	}
	var probs payment.Problems
	f := NewFields(obj, "", &probs)
	v := f.Str(field)
	f.Done()
	if err := probs.Err(); err != nil || v == nil {
		return "", err
	}
	return *v, nil
}

// decodeWebhookInput reads a webhook endpoint's create or update payload.
func decodeWebhookInput(body []byte) (payment.WebhookInput, error) {
	obj, err := ParseObject(body)
	if err != nil {
		return payment.WebhookInput{}, err
	}
	var probs payment.Problems
	f := NewFields(obj, "", &probs)
	in := payment.WebhookInput{URL: f.Str("url"), Description: f.Str("description"),
		EnabledEvents: f.Strings("enabledEvents"), Status: f.Str("status")}
	f.Done()
	in.Problems = probs
	return in, nil
}
