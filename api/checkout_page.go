package api

import (
	"net/http"
	"strings"

	"rsc.io/qr"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/web"
)

// checkoutRoutes serve the hosted checkout page and its QR codes, outside
// /api/v1 as hosted pages are.
func (s *Server) checkoutRoutes() {
	s.route("/checkout/{sessionToken}", map[string]endpoint{http.MethodGet: {Relaxed, public, s.checkoutPage}})
	s.route("/checkout/{sessionToken}/qr/{file}", map[string]endpoint{http.MethodGet: {Relaxed, public, s.checkoutQR}})
}

func (s *Server) checkoutPage(w http.ResponseWriter, r *http.Request) error {
	if !payment.ValidSessionToken(r.PathValue("sessionToken")) {
		return payment.NotFound("Checkout session")
	}
	web.Checkout(w, r)
	return nil
}

// checkoutQR renders the EIP-681 payment request of one of the session's
// options as a QR code a wallet scans.
func (s *Server) checkoutQR(w http.ResponseWriter, r *http.Request) error {
	v, err := s.Engine.SessionByToken(r.Context(), r.PathValue("sessionToken"))
	if err != nil {
		return err
	}
	asset := strings.TrimSuffix(r.PathValue("file"), ".png")
	for _, o := range v.Session.PaymentOptions {
		if o.AssetDefinitionID != asset || o.PaymentURI == "" {
			continue
		}
		code, err := qr.Encode(o.PaymentURI, qr.M)
		if err != nil {
			return err
		}
		code.Scale = 6
		w.Header().Set("Content-Type", "image/png")
		w.Header().Set("Cache-Control", "private, max-age=3600")
		_, _ = w.Write(code.PNG())
		return nil
	}
	return payment.NotFound("Payment option")
}
