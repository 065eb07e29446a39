package rest

import (
	"errors"
	"testing"

	"github.com/paymentsd/paymentsd/payment"
)

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

// checkClientError is resttest.CheckClientError, which this package's
// tests cannot import (resttest imports rest).
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
