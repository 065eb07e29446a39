package api

import (
	"net/http"
	"strings"

	"github.com/paymentsd/paymentsd/api/web"
	"github.com/paymentsd/paymentsd/payment"
)

// dashboardRoutes serve the merchant dashboard's files at /dashboard/ (no
// rate limit: they are the same embedded files for everyone, and every
// call the dashboard makes goes through the API's limits) and a plan's
// payment link at /pay/{planId}.
func (s *Server) dashboardRoutes() {
	s.mux.Handle("GET /dashboard/", web.Dashboard())
	s.mux.Handle("GET /dashboard", http.RedirectHandler("/dashboard/", http.StatusFound))
	s.mux.Handle("GET /{$}", http.RedirectHandler("/dashboard/", http.StatusFound))
	s.handle("/pay/{planId}", handlers{http.MethodGet: s.paymentLink})
}

func (s *Server) paymentLink(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("planId")
	if !strings.HasPrefix(id, "plan_") || len(id) > 64 {
		return payment.NotFound("Payment plan")
	}
	web.PaymentLink(w, r)
	return nil
}
