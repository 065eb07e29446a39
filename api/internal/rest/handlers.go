package rest

import (
	"bytes"
	"errors"
	"io"
	"net/http"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/payment/views"
	"github.com/paymentsd/paymentsd/service"
)

var (
	TxStatuses      = statusStrings(payment.TransactionStatuses)
	SessionStatuses = statusStrings(payment.SessionStatuses)
	PlanStatuses    = statusStrings(payment.PlanStatuses)
)

func statusStrings[S ~string](list []S) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = string(s)
	}
	return out
}

// DecodeErr answers a body that is not JSON at all with a 400 itself and
// returns any other error; FailErr answers the same 400 for such an error
// a handler returns, which respond's handlers do.
func DecodeErr(w http.ResponseWriter, r *http.Request, err error) error {
	var m Malformed
	if errors.As(err, &m) {
		Fail(w, r, http.StatusBadRequest, "BAD_REQUEST", m.Msg, nil)
		return nil
	}
	return err
}

// Action wraps the handler of an action route (archive, cancel, rotate,
// test, redeliver): it takes no input, so its body must be empty or an
// empty JSON object; anything else is refused as any body with unknown
// fields is, not ignored.
func Action(h func(http.ResponseWriter, *http.Request) error) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		body, _ := io.ReadAll(r.Body)
		if len(bytes.TrimSpace(body)) > 0 {
			obj, err := ParseObject(body)
			if err != nil {
				return err
			}
			var probs payment.Problems
			NewFields(obj, "", &probs).Done()
			if err := probs.Err(); err != nil {
				return err
			}
		}
		return h(w, r)
	}
}

func MapSlice[T, U any](in []T, f func(T) U) []U {
	out := make([]U, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}

// SessionView renders a session for the merchant, or for its creator.
func (s *Edge) SessionView(v service.SessionView) views.Session {
	out := views.SessionOf(v.Session, v.Token, s.CheckoutURL, v.Transactions)
	s.ShapeSummaries(out.Transactions)
	return out
}

// PublicSessionView renders a session for whoever holds its token.
func (s *Edge) PublicSessionView(v service.SessionView) views.PublicSession {
	return views.PublicSessionOf(v.Session, v.Token, s.CheckoutURL, v.Transactions, v.Plan)
}

var BatchStatuses = statusStrings(payment.PayoutBatchStatuses)

var RefundStatuses = statusStrings(payment.RefundStatuses)
