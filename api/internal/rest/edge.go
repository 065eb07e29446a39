package rest

import (
	"net/http"
	"net/netip"
	"time"

	"github.com/paymentsd/paymentsd/payment/views"
	"github.com/paymentsd/paymentsd/service"
	"github.com/sethvargo/go-limiter"
)

// Edge is what the handlers of every area share of the server: the
// service, the deployment's settings and the rate limiters.
type Edge struct {
	Svc         *service.Service
	CheckoutURL string
	Limiters    map[Tier]limiter.Store
	Proxies     []netip.Prefix // Config.TrustedProxies
	// cop refuses cross-origin state changes made with the session cookie.
	CrossOriginProtection *http.CrossOriginProtection
	SignupDisabled        bool
	Shape                 views.Shape
	ReauthWindow          time.Duration // Config.ReauthWindow
}
