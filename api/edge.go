package api

import (
	"net/http"
	"net/netip"
	"time"

	"github.com/sethvargo/go-limiter"

	"github.com/paymentsd/paymentsd/service"
)

// Edge is what the handlers of every area share of the server: the
// service, the deployment's settings and the rate limiters.
type Edge struct {
	svc         *service.Service
	CheckoutURL string
	limiters    map[Tier]limiter.Store
	proxies     []netip.Prefix // Config.TrustedProxies
	// cop refuses cross-origin state changes made with the session cookie.
	cop            *http.CrossOriginProtection
	signupDisabled bool
	shape          Shape
	reauthWindow   time.Duration // Config.ReauthWindow
}
