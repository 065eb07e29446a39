// Package api is the engine's HTTP edge: the spec's REST routes with their
// envelope and status codes, the Connect service on the same port, API-key
// authentication, rate limits and idempotency keys. Handlers are thin: they
// parse, call one engine operation and write the result.
//
// The REST handlers are by area, a package each: identity, access,
// checkout, payments, moneyout and webhooks, the service's areas less
// Chains, whose operations are the operator's (a handler of refunds is a
// method of moneyout.Handlers). What they share (the envelope, the body
// and query parsers, the views, the principal, sudo mode's checks, the
// rate limiters) is internal/rest, the floor under them. The Server keeps
// the routes (routes.go), the middleware's steps (serve.go), the
// operations table, the Connect procedures, the dashboard's files and
// payment link, OpenAPI and the metrics.
package api

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/sethvargo/go-limiter"
	"github.com/sethvargo/go-limiter/memorystore"

	accessarea "github.com/paymentsd/paymentsd/api/access"
	"github.com/paymentsd/paymentsd/api/checkout"
	"github.com/paymentsd/paymentsd/api/identity"
	"github.com/paymentsd/paymentsd/api/internal/rest"
	"github.com/paymentsd/paymentsd/api/moneyout"
	"github.com/paymentsd/paymentsd/api/payments"
	"github.com/paymentsd/paymentsd/api/webhooks"
	"github.com/paymentsd/paymentsd/internal/version"
	"github.com/paymentsd/paymentsd/service"
)

// Tier is a rate-limit tier of the spec (section 8).
type Tier = rest.Tier

// The tiers (rest.Tier).
const (
	Relaxed      = rest.Relaxed
	SemiRelaxed  = rest.SemiRelaxed
	Standard     = rest.Standard
	Moderate     = rest.Moderate
	Strict       = rest.Strict
	StrictAPIKey = rest.StrictAPIKey
)

// DefaultLimits are the spec's per-minute limits of each tier.
var DefaultLimits = map[Tier]uint64{Relaxed: 60, SemiRelaxed: 30, Standard: 20, Moderate: 10, Strict: 5, StrictAPIKey: 5}

// Config configures the HTTP edge.
type Config struct {
	// Limits per tier, per minute; missing tiers take DefaultLimits.
	Limits map[Tier]uint64
	// LimitStore, when set, replaces the in-memory store (e.g. Redis when
	// several API replicas run); it must count per minute.
	LimitStore func(tier Tier, perMinute uint64) (limiter.Store, error)
	// PublicURL is the base URL the hosted checkout page is served from.
	PublicURL string
	// MaxBodyBytes bounds request bodies (default 1 MiB).
	MaxBodyBytes int64
	// TrustedProxies are the networks of the proxies in front of the API:
	// from a peer in one, the client is read from X-Forwarded-For. Without
	// any, the client is the peer.
	TrustedProxies []netip.Prefix
	// SignupDisabled refuses POST /api/v1/auth/signup: accounts are made
	// with `paymentsd admin create-user`.
	SignupDisabled bool
	// Shape is the API's shape (API_SHAPE); empty is ShapeFirst.
	Shape Shape
	// ReauthWindow is how long after a sign-in (or re-authentication) a
	// session may take sensitive actions (sudo mode, REAUTH_WINDOW); 0 is
	// DefaultReauthWindow.
	ReauthWindow time.Duration
	// MetricsAddr, when set, is where Run serves /metrics (and /healthz),
	// and /metrics is not served on the API's address (METRICS_ADDR).
	MetricsAddr string
	// MaxInflight bounds the requests the server serves at once; past it a
	// request is refused with 503 and Retry-After (MAX_INFLIGHT_REQUESTS);
	// 0 is DefaultMaxInflight.
	MaxInflight int
}

// Server serves the API.
type Server struct {
	*rest.Edge
	// The REST handlers of each area, over Edge.
	identity  identity.Handlers
	access    accessarea.Handlers
	checkout  checkout.Handlers
	payments  payments.Handlers
	moneyOut  moneyout.Handlers
	webhooks  webhooks.Handlers
	maxBody   int64
	limits    map[Tier]uint64
	mux       *http.ServeMux
	stopPurge context.CancelFunc
	table     []Route
	// probes counts each address's readiness probes, in this process.
	probes limiter.Store
	// metricsElsewhere leaves /metrics off the API's routes
	// (Config.MetricsAddr is set).
	metricsElsewhere bool
	// inflight bounds the requests served at once (Config.MaxInflight).
	inflight *inflight
}

// Route is one method of one REST route, as the router serves it.
type Route struct {
	Pattern string // e.g. /api/v1/projects/{projectId}/payment-plans
	Method  string
	Tier    Tier
	// Access is "api_key" (a key is required), "public" (none is read) or
	// "api_key_optional" (public, and a call that sends a key acts as it).
	Access string
	// Scope is what an OAuth access token needs on the route; empty:
	// tokens are not accepted.
	Scope string
}

// Routes lists every REST route the server serves, for the tests that
// must cover them all (the attack suite): a route added later is in it.
func (s *Server) Routes() []Route { return slices.Clone(s.table) }

// New returns the API server over a service.
func New(svc *service.Service, cfg Config) (*Server, error) {
	s := &Server{Edge: &rest.Edge{Svc: svc, CheckoutURL: strings.TrimRight(cfg.PublicURL, "/"), Limiters: map[Tier]limiter.Store{},
		Proxies: cfg.TrustedProxies, CrossOriginProtection: http.NewCrossOriginProtection(), SignupDisabled: cfg.SignupDisabled, Shape: cfg.Shape,
		ReauthWindow: cfg.ReauthWindow}, maxBody: cfg.MaxBodyBytes, limits: map[Tier]uint64{}, mux: http.NewServeMux(),
		metricsElsewhere: cfg.MetricsAddr != "", inflight: newInflight(cfg.MaxInflight)}
	if s.ReauthWindow <= 0 {
		s.ReauthWindow = DefaultReauthWindow
	}
	if s.Shape == "" {
		s.Shape = ShapeFirst
	}
	if s.maxBody <= 0 {
		s.maxBody = 1 << 20
	}
	for tier, def := range DefaultLimits {
		n := def
		if v, ok := cfg.Limits[tier]; ok && v > 0 {
			n = v
		}
		var st limiter.Store
		var err error
		if cfg.LimitStore != nil {
			st, err = cfg.LimitStore(tier, n)
		} else {
			st, err = memorystore.New(&memorystore.Config{Tokens: n, Interval: time.Minute})
		}
		if err != nil {
			return nil, fmt.Errorf("rate limit store: %w", err)
		}
		s.Limiters[tier], s.limits[tier] = st, n
	}
	probes, err := memorystore.New(&memorystore.Config{Tokens: s.limits[Relaxed], Interval: time.Minute})
	if err != nil {
		return nil, fmt.Errorf("rate limit store: %w", err)
	}
	s.probes = probes
	if svc != nil && cfg.PublicURL != "" {
		// Passkeys need a domain name in PUBLIC_URL (localhost will do).
		if err := svc.Identity().SetRelyingParty(cfg.PublicURL); err != nil {
			slog.Warn("passkeys are off", "err", err)
		}
	}
	s.identity, s.access, s.checkout = identity.Handlers{Edge: s.Edge}, accessarea.Handlers{Edge: s.Edge}, checkout.Handlers{Edge: s.Edge}
	s.payments, s.moneyOut, s.webhooks = payments.Handlers{Edge: s.Edge}, moneyout.Handlers{Edge: s.Edge}, webhooks.Handlers{Edge: s.Edge}
	s.routes()
	ctx, cancel := context.WithCancel(context.Background())
	s.stopPurge = cancel
	if svc != nil {
		go s.purgeIdempotency(ctx)
	}
	return s, nil
}

// purgeIdempotency deletes the idempotency records older than a day and
// the expired OAuth codes and tokens, now and every ten minutes, until
// Close. Every API process runs it; the deletions are the same.
func (s *Server) purgeIdempotency(ctx context.Context) {
	tick := time.NewTicker(10 * time.Minute)
	defer tick.Stop()
	for {
		if n, err := s.Svc.PurgeIdempotency(ctx); err != nil && ctx.Err() == nil {
			slog.WarnContext(ctx, "purge idempotency records", "err", err)
		} else if n > 0 {
			slog.InfoContext(ctx, "purged idempotency records", "count", n)
		}
		if o := s.Svc.OAuth(); o != nil {
			if n, err := o.Purge(ctx); err != nil && ctx.Err() == nil {
				slog.WarnContext(ctx, "purge expired OAuth tokens", "err", err)
			} else if n > 0 {
				slog.InfoContext(ctx, "purged expired OAuth tokens", "count", n)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// Close stops the purge of idempotency records and releases the rate-limit
// stores.
func (s *Server) Close() {
	s.stopPurge()
	for _, st := range s.Limiters {
		_ = st.Close(context.Background())
	}
	_ = s.probes.Close(context.Background())
}

// Handler returns the HTTP handler of the whole API.
func (s *Server) Handler() http.Handler {
	return withRequestID(withMetrics(s.inflight.bound(withRecover(s.mux))))
}

// access says who may call a route.
type access int

const (
	public access = iota
	apiKey
	// optionalKey routes are public, and a call that sends an API key is
	// authenticated and counted as that key's (server-side creation).
	optionalKey
	// user routes are a signed-in user's own (the session cookie), of no
	// project.
	user
	// member routes are a project's, for its signed-in members only: API
	// keys never manage keys, members or settings (403 for the project's
	// own keys, 404 for another's).
	member
	// authorizationServer routes are the OAuth authorization server's
	// endpoints (oauthEndpoint): a form body, OAuth's answers, counted per
	// client IP.
	authorizationServer
)

// accessNames are the access of each route as Routes reports it.
var accessNames = [...]string{public: "public", apiKey: "api_key", optionalKey: "api_key_optional", user: "session_cookie",
	member: "session_cookie_member", authorizationServer: "oauth"}

// endpoint is one method of a route.
type endpoint struct {
	tier   Tier
	access access
	handle func(w http.ResponseWriter, r *http.Request) error
}

// handlers are a route's handlers by method.
type handlers map[string]func(w http.ResponseWriter, r *http.Request) error

// handle registers a path with its methods, each limited and authorized
// as the operations table says; other methods get a 405.
func (s *Server) handle(path string, methods handlers) {
	endpoints := make(map[string]endpoint, len(methods))
	for m, h := range methods {
		endpoints[m] = s.endpointOf(m, path, h)
	}
	s.mount(path, endpoints)
}

// endpointOf is the endpoint of one method of a path, as the operations
// table has it.
func (s *Server) endpointOf(method, path string, h func(http.ResponseWriter, *http.Request) error) endpoint {
	op := operationOf(method, path)
	return endpoint{op.tier, op.access, h}
}

// route registers a path whose endpoints spell out their tier and access;
// each must be what the operations table says (New panics otherwise), so
// that its Connect twin cannot be limited apart from it.
func (s *Server) route(path string, methods map[string]endpoint) {
	for m, ep := range methods {
		if op := operationOf(m, path); op.tier != ep.tier || op.access != ep.access {
			panic(fmt.Sprintf("%s %s: tier %s, access %s; the operations table says %s, %s", m, path, ep.tier, accessNames[ep.access], op.tier, accessNames[op.access]))
		}
	}
	s.mount(path, methods)
}

// mount serves a path's endpoints through serve; other methods get a
// 405. The scope an access token needs on each is the operations
// table's, on the endpoints that read a credential.
func (s *Server) mount(path string, methods map[string]endpoint) {
	allow := make([]string, 0, len(methods))
	for m := range methods {
		allow = append(allow, m)
	}
	allowed := strings.Join(sortStrings(allow), ", ")
	scopes := map[string]string{}
	for m, ep := range methods {
		if ep.access == apiKey || ep.access == optionalKey {
			scopes[m] = operationOf(m, path).scope
		}
	}
	for _, m := range allow {
		s.table = append(s.table, Route{Pattern: path, Method: m, Tier: methods[m].tier, Scope: scopes[m], Access: accessNames[methods[m].access]})
	}
	s.mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		ep, ok := methods[r.Method]
		if !ok {
			w.Header().Set("Allow", allowed)
			rest.Fail(w, r, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "Method "+r.Method+" is not allowed here; allowed: "+allowed, nil)
			return
		}
		s.serve(w, r, ep, scopes[r.Method])
	})
}

func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	// Each address has its own budget of probes (the Relaxed tier's),
	// apart from its budget of API calls and counted by this process
	// alone (a probe costs the process it reaches; the kubelet of a node
	// probes every replica on it from one address): a flood is refused
	// before it reaches the database or Temporal; the nodes' state is
	// cached.
	if err := s.TakeFrom(r.Context(), s.probes, w.Header(), Relaxed, "readyz|ip:"+s.ClientIP(r)); err != nil {
		rest.FailErr(w, r, err)
		return
	}
	st := s.Svc.Chains().Ready(r.Context(), 2*time.Second)
	if st.Database != nil {
		rest.Fail(w, r, http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE", "Database unreachable", nil)
		return
	}
	if st.Temporal != nil {
		rest.Fail(w, r, http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE", "Temporal unreachable", nil)
		return
	}
	// A network whose nodes do not answer, or disagree, leaves the API
	// able to serve (it reads the database and starts workflows, which
	// wait for the node): it is named, and the status says degraded, but
	// the API stays in rotation.
	status, networks := "ready", map[string]any{}
	for _, n := range st.Networks {
		network := networkReadiness(n)
		if network["status"] != "ok" {
			status = "degraded"
		}
		networks[n.Key] = network
	}
	rest.OK(w, r, http.StatusOK, "Ready", map[string]any{"status": status, "networks": networks, "version": version.Version})
}

// networkReadiness is a network's entry in /readyz: ok with its head;
// degraded with its head while some of its nodes are set aside (an answer
// failed a check, or they disagree with the majority: the others serve);
// disagreeing while its nodes disagree with no majority (none is used, its
// payments wait); unreachable while none answers. The nodes are counted,
// not named: the logs and the metrics name them.
func networkReadiness(n service.NetworkReadiness) map[string]any {
	out := map[string]any{}
	switch {
	case n.Nodes.Disagree:
		out["status"] = "disagreeing"
	case n.Err != nil:
		out["status"] = "unreachable"
	case len(n.Nodes.SetAside) > 0:
		out["status"], out["head"] = "degraded", n.Head
	default:
		out["status"], out["head"] = "ok", n.Head
	}
	if len(n.Nodes.SetAside) > 0 || n.Nodes.Disagree {
		out["nodes"], out["nodesSetAside"] = n.Nodes.Nodes, len(n.Nodes.SetAside)
	}
	return out
}

// hasCredentials tells whether a call sends an API key, well-formed or not.
func hasCredentials(h http.Header) bool {
	return h.Get("Authorization") != "" || h.Get("X-API-Key") != ""
}
