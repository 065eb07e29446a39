package access

import (
	"net/http"

	"github.com/paymentsd/paymentsd/api/internal/rest"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/payment/views"
)

func (s Handlers) ListAudit(w http.ResponseWriter, r *http.Request) error {
	q, err := rest.ParseListQueryBy(r.URL.Query(), "action", payment.AuditActions)
	if err != nil {
		return err
	}
	return rest.RespondPage(w, r, "Audit log retrieved", q, views.AuditEntryOf)(s.Svc.Access().ListAudit(r.Context(), rest.Principal(r), r.PathValue("projectId"), q))
}
