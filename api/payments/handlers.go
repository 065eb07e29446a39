package payments

import (
	"net/http"

	"github.com/paymentsd/paymentsd/api/internal/rest"
	"github.com/paymentsd/paymentsd/payment/views"
)

func (s Handlers) ResolveSession(w http.ResponseWriter, r *http.Request) error {
	res, err := rest.BodyOf(r, decodeResolution)
	if err != nil {
		return err
	}
	return rest.Respond(w, r, http.StatusOK, "Checkout session's exception resolved", s.SessionJSON)(s.Svc.Checkout().ResolveSession(r.Context(), rest.Principal(r), r.PathValue("projectId"), r.PathValue("sessionId"), res))
}

func (s Handlers) AssignTransaction(w http.ResponseWriter, r *http.Request) error {
	sessionID, err := rest.BodyOf(r, func(body []byte) (string, error) { return rest.DecodeString(body, "checkoutSessionId") })
	if err != nil {
		return err
	}
	return rest.Respond(w, r, http.StatusOK, "Transaction assigned", s.TxJSON)(s.Svc.Payments().AssignTransaction(r.Context(), rest.Principal(r), r.PathValue("projectId"), r.PathValue("transactionId"), sessionID))
}

func (s Handlers) ListTransactions(w http.ResponseWriter, r *http.Request) error {
	q, err := s.TransactionQuery(r)
	if err != nil {
		return err
	}
	if rest.WantsCSV(r) {
		return s.exportTransactions(w, r, q)
	}
	return rest.RespondPage(w, r, "Transactions retrieved", q, s.TxJSON)(s.Svc.Payments().ListTransactions(r.Context(), rest.Principal(r), r.PathValue("projectId"), q))
}

func (s Handlers) GetTransaction(w http.ResponseWriter, r *http.Request) error {
	return rest.Respond(w, r, http.StatusOK, "Transaction retrieved", s.TxJSON)(s.Svc.Payments().GetTransaction(r.Context(), rest.Principal(r), r.PathValue("projectId"), r.PathValue("transactionId")))
}

func (s Handlers) SubmitPayment(w http.ResponseWriter, r *http.Request) error {
	in, err := rest.BodyOf(r, decodePaymentSubmission)
	if err != nil {
		return err
	}
	t, err := s.Svc.Payments().SubmitPayment(r.Context(), r.PathValue("sessionToken"), in.network, in.txHash)
	if err != nil {
		return err
	}
	if t == nil {
		rest.OK(w, r, http.StatusAccepted, "Payment submitted; its transaction will be recorded shortly", map[string]string{"network": in.network, "txHash": in.txHash})
		return nil
	}
	// The payer sees the record as the session's public view lists it.
	sum := views.TransactionSummaryOf(*t)
	sum.Status = s.TxStatus(sum.Status)
	rest.OK(w, r, http.StatusCreated, "Payment submitted", sum)
	return nil
}
