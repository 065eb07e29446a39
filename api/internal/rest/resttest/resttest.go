// Package resttest holds what the tests of the REST handlers' decoders
// share: a catalog to check decoded inputs against, and the check that a
// decoder's error is the client's.
package resttest

import (
	"errors"
	"testing"

	"github.com/paymentsd/paymentsd/api/internal/rest"
	"github.com/paymentsd/paymentsd/payment"
)

// Catalog has one asset: USDC on devnet.
var Catalog = payment.Catalog{Assets: []payment.Asset{
	{ID: "usdc-devnet", Symbol: "USDC", Decimals: 6, Network: "devnet", ChainID: 1337, TokenAddress: "0x5FbDB2315678afecb367f032d93F642f64180aa3", Price: payment.PriceSource{Kind: payment.PriceUSDPegged}},
}}

// CheckClientError fails unless err is nil, malformed JSON (a 400) or a
// validation error whose every detail names a field: never anything that
// would become a 500.
func CheckClientError(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var m rest.Malformed
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
