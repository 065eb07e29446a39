package checkout

import (
	"net/http"

	"github.com/paymentsd/paymentsd/api/internal/rest"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/payment/views"
	"github.com/paymentsd/paymentsd/workflows"
)

var sessionColumns = []string{"id", "created_at", "expires_at", "completed_at", "status", "payment_plan_id", "amount_usd",
	"amount_paid_usd", "paid", "exception", "resolution", "deposit_address", "email", "metadata", "workflow_id"}

func (s Handlers) exportSessions(w http.ResponseWriter, r *http.Request, q payment.ListQuery) error {
	cw, err := rest.CSVExport(w, r, "checkout-sessions", sessionColumns)
	if err != nil {
		return err
	}
	n := 0
	err = s.Svc.Payments().ExportSessions(r.Context(), rest.Principal(r), r.PathValue("projectId"), q, func(cs payment.Session, paid string) error {
		if err := cw.Write([]string{cs.ID, views.Time(cs.CreatedAt), views.Time(cs.ExpiresAt), rest.OptTime(cs.CompletedAt),
			string(cs.Status), cs.PaymentPlanID, payment.FormatUSD(cs.AmountUSD), payment.FormatUSD(cs.AmountPaidUSD), rest.Text(paid),
			cs.Exception, string(cs.Resolution), cs.DepositAddress, rest.Text(cs.Email), rest.Text(string(cs.Metadata)),
			workflows.CheckoutSessionWorkflowID(cs.ID)}); err != nil {
			return err
		}
		return rest.FlushEvery(w, cw, &n)
	})
	return rest.EndExport(w, r, cw, n, err)
}
