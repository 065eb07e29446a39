package rest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/paymentsd/paymentsd/payment"
)

// Malformed marks a body that is not JSON at all (a 400, not a 422).
type Malformed struct{ Msg string }

func (e Malformed) Error() string { return e.Msg }

// ParseObject parses a JSON body whose top level must be an object. Numbers
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

// Fields reads a JSON object field by field, recording a problem for each
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

// Get returns the raw value of key; null counts as absent.
func (f *Fields) Get(key string) (any, bool) {
	f.seen = append(f.seen, key)
	v, ok := f.m[key]
	return v, ok && v != nil
}

func (f *Fields) Str(key string) *string {
	v, ok := f.Get(key)
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

// Integer reads a field of JSON Schema's type "integer": any number whose
// value is whole, however it is written (900, 900.0, 9e2); a fraction
// (900.5) is refused. A whole number beyond 32 bits (1e400) reads as the
// 32-bit bound, one past it, for the field's own range check to refuse
// with its message, which names the range: every integer field has one.
func (f *Fields) Integer(key string) *int64 {
	v, ok := f.Get(key)
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
	v, ok := f.Get(key)
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
	v, ok := f.Get(key)
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
	v, ok := f.Get(key)
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
	v, _ := f.Get(key)
	return v
}

// Done records every field that was not read as unknown.
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

// DecodeString reads a payload of one string field ({"checkoutSessionId":
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

// BodyFields decodes a JSON object body with the string fields named;
// required ones must be present.
func BodyFields(body []byte, required []string, optional ...string) (map[string]*string, error) {
	obj, err := ParseObject(body)
	if err != nil {
		return nil, err
	}
	var probs payment.Problems
	f := NewFields(obj, "", &probs)
	out := map[string]*string{}
	for _, k := range append(append([]string{}, required...), optional...) {
		out[k] = f.Str(k)
	}
	f.Done()
	for _, k := range required {
		if out[k] == nil {
			probs.Add(k, "is required")
		}
	}
	return out, probs.Err()
}
