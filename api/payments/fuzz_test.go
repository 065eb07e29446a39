package payments

import (
	"testing"

	"github.com/paymentsd/paymentsd/api/internal/rest/resttest"
)

func FuzzDecodeResolution(f *testing.F) {
	for _, seed := range []string{
		`{"resolution":"underpayment_accepted"}`, `{"resolution":"overpayment_settled"}`, `{"resolution":"refunded"}`,
		`{"resolution":1}`, `{"resolution":null}`, `{}`, `{"resolution":"underpayment_accepted","x":1}`, `[`, `"x"`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := decodeResolution(body)
		resttest.CheckClientError(t, err)
		if err != nil && r != "" {
			t.Fatalf("a refused body read as %q", r)
		}
	})
}
