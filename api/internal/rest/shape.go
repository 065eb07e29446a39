package rest

import (
	"net/http"
	"strings"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/payment/views"
)

// TxStatus is a transaction status as the deployment's shape names it.
func (s *Edge) TxStatus(st string) string { return views.TxStatus(s.Shape, st) }

// ShapeSummaries names the statuses of a session's transactions as the
// deployment's shape does (REST only: the Connect API keeps the first
// shape's).
func (s *Edge) ShapeSummaries(txs []views.TransactionSummary) {
	for i := range txs {
		txs[i].Status = s.TxStatus(txs[i].Status)
	}
}

// TransactionQuery parses the transactions list's query in the
// deployment's shape.
func (s *Edge) TransactionQuery(r *http.Request) (payment.ListQuery, error) {
	if s.Shape != views.ShapeSecond {
		return ParseTransactionQuery(r.URL.Query(), TxStatuses, s.Svc.Catalog().Networks())
	}
	return ParseSecondShapeTransactionQuery(r.URL.Query(), s.Svc.Catalog().Networks())
}

// BearerSession is a second-shape call's session token sent as
// `Authorization: Bearer svc_st_…`: it signs the user in as the cookie
// does.
func (s *Edge) BearerSession(h http.Header) string {
	if s.Shape != views.ShapeSecond {
		return ""
	}
	scheme, token, found := strings.Cut(h.Get("Authorization"), " ")
	if !found || !strings.EqualFold(scheme, "Bearer") || !strings.HasPrefix(strings.TrimSpace(token), payment.UserSessionTokenPrefix) {
		return ""
	}
	return strings.TrimSpace(token)
}
