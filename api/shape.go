package api

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/views"
)

// Shape is the form of the API a deployment serves (views.Shape).
type Shape = views.Shape

const (
	// ShapeFirst is the spec's sections 2 to 5 (the default).
	ShapeFirst = views.ShapeFirst
	// ShapeSecond is section 9's: transaction statuses pending,
	// completed and failed; transactions filtered by page, limit, status
	// and network only; a checkout session read by its ID with
	// credentials; the session token as a bearer token.
	ShapeSecond = views.ShapeSecond
)

// ParseShape reads API_SHAPE.
func ParseShape(s string) (Shape, error) {
	switch Shape(s) {
	case "", ShapeFirst:
		return ShapeFirst, nil
	case ShapeSecond:
		return ShapeSecond, nil
	}
	return "", fmt.Errorf("API_SHAPE must be first or second, not %q", s)
}

// txStatus is a transaction status as the deployment's shape names it.
func (s *Server) txStatus(st string) string { return views.TxStatus(s.shape, st) }

// transactionQuery parses the transactions list's query in the
// deployment's shape.
func (s *Server) transactionQuery(r *http.Request) (payment.ListQuery, error) {
	if s.shape != ShapeSecond {
		return payment.ParseTransactionQuery(r.URL.Query(), txStatuses, s.svc.Catalog().Networks())
	}
	return payment.ParseSecondShapeTransactionQuery(r.URL.Query(), s.svc.Catalog().Networks())
}

// bearerSession is a second-shape call's session token sent as
// `Authorization: Bearer svc_st_…`: it signs the user in as the cookie
// does.
func (s *Server) bearerSession(h http.Header) string {
	if s.shape != ShapeSecond {
		return ""
	}
	scheme, token, found := strings.Cut(h.Get("Authorization"), " ")
	if !found || !strings.EqualFold(scheme, "Bearer") || !strings.HasPrefix(strings.TrimSpace(token), payment.UserSessionTokenPrefix) {
		return ""
	}
	return strings.TrimSpace(token)
}
