package payments

import (
	"slices"

	"github.com/paymentsd/paymentsd/api/internal/rest"
	"github.com/paymentsd/paymentsd/payment"
)

type paymentSubmission struct{ network, txHash string }

// decodePaymentSubmission reads a payer's {network, txHash}.
func decodePaymentSubmission(body []byte) (paymentSubmission, error) {
	obj, err := rest.ParseObject(body)
	if err != nil {
		return paymentSubmission{}, err
	}
	var probs payment.Problems
	f := rest.NewFields(obj, "", &probs)
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
	obj, err := rest.ParseObject(body)
	if err != nil {
		return "", err
	}
	var probs payment.Problems
	f := rest.NewFields(obj, "", &probs)
	r := f.Str("resolution")
	f.Done()
	if err := probs.Err(); err != nil || r == nil {
		return "", err
	}
	return payment.Resolution(*r), nil
}
