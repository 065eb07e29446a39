// Package shop is an example shop integrated with paymentsd, the way a
// merchant's server does it: the server creates the checkout session with
// its API key, sends the customer to the hosted page, and marks the order
// paid when the signed webhook says the session completed. Read it top to
// bottom as the integration guide; client/examples/shop runs it, tests/shop runs
// it against the whole engine, and docs/webhooks.md explains the webhook
// side in more languages.
package shop

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// Config is what the shop needs from paymentsd.
type Config struct {
	PaymentsdURL  string // e.g. https://payments.example.com (no /api/v1)
	APIKey        string // the project's key: it stays on the server
	PlanID        string // the plan the product is sold by; empty: New creates one
	ProjectID     string // the key's project, needed only to create the plan
	WebhookSecret string // the endpoint's whsec_… secret
	// ShopURL is where customers reach the shop, e.g.
	// https://shop.example.com. A plan New creates sends the customer back
	// to ShopURL/orders/mine from the hosted page once paid.
	ShopURL  string
	Product  string // shown on the page and as the plan's title
	PriceUSD string // e.g. "25.00"
}

// Order is one purchase.
type Order struct {
	ID        string
	Status    string // awaiting_payment, paid, expired, canceled, exception
	SessionID string // the checkout session created for it
	PaidUSD   string
	// Version is the highest version of the session the shop applied:
	// webhooks can arrive out of order.
	Version int
}

// Shop keeps its orders in memory; a real one keeps them in its database,
// with the handled webhook IDs in the same transaction as the order.
type Shop struct {
	cfg  Config
	wh   *standardwebhooks.Webhook
	http *http.Client

	mu     sync.Mutex
	orders map[string]*Order
	seen   map[string]bool // webhook-ids handled
}

// New returns the shop. Without a PlanID it creates the product's plan
// (fixed price, any asset the environment offers) in ProjectID.
func New(ctx context.Context, cfg Config) (*Shop, error) {
	wh, err := standardwebhooks.NewWebhook(cfg.WebhookSecret)
	if err != nil {
		return nil, fmt.Errorf("webhook secret: %w", err)
	}
	s := &Shop{cfg: cfg, wh: wh, http: http.DefaultClient, orders: map[string]*Order{}, seen: map[string]bool{}}
	if s.cfg.PlanID == "" {
		if s.cfg.PlanID, err = s.createPlan(ctx); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// PlanID is the plan the shop sells by.
func (s *Shop) PlanID() string { return s.cfg.PlanID }

// Handler serves the shop's pages and its webhook endpoint.
func (s *Shop) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.productPage)
	mux.HandleFunc("POST /orders", s.buy)
	mux.HandleFunc("GET /orders/mine", s.myOrder)
	mux.HandleFunc("GET /orders/{id}", s.orderPage)
	mux.HandleFunc("POST /webhooks", s.webhook)
	return mux
}

// call makes one request to paymentsd's REST API with the API key and
// decodes the envelope's data into out.
func (s *Shop) call(ctx context.Context, path, idempotencyKey string, body, out any) error {
	raw, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.cfg.PaymentsdURL+"/api/v1"+path, bytes.NewReader(raw))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+s.cfg.APIKey)
	if idempotencyKey != "" {
		req.Header.Set("Idempotency-Key", idempotencyKey)
	}
	res, err := s.http.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if res.StatusCode != http.StatusCreated && res.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s: %s: %s", path, res.Status, answer)
	}
	env := struct{ Data any }{out}
	return json.Unmarshal(answer, &env)
}

// createPlan creates the product's plan. Its redirectUrl brings the
// customer back from the hosted page to their order.
func (s *Shop) createPlan(ctx context.Context) (string, error) {
	if s.cfg.ProjectID == "" {
		return "", fmt.Errorf("set a plan ID, or the project ID to create the plan in")
	}
	in := map[string]any{"title": s.cfg.Product, "amountUsd": s.cfg.PriceUSD,
		"acceptedAssetPolicies": []any{map[string]any{"policyType": "any"}}}
	if s.cfg.ShopURL != "" {
		in["redirectUrl"] = strings.TrimSuffix(s.cfg.ShopURL, "/") + "/orders/mine"
	}
	var plan struct{ ID string }
	if err := s.call(ctx, "/projects/"+s.cfg.ProjectID+"/payment-plans", "", in, &plan); err != nil {
		return "", fmt.Errorf("create the plan: %w", err)
	}
	slog.Info("created the plan; set PAYMENTSD_PLAN_ID to reuse it", "plan", plan.ID)
	return plan.ID, nil
}

var page = template.Must(template.New("page").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>{{.Title}}</title>
{{if .Order}}{{if eq .Order.Status "awaiting_payment"}}<meta http-equiv="refresh" content="3">{{end}}{{end}}
<style>body{font:16px system-ui;max-width:32rem;margin:4rem auto}button{font-size:1rem;padding:.6rem 1.2rem}</style></head>
<body>{{if .Order}}<h1>Order {{.Order.ID}}</h1><p>Status: <strong id="status">{{.Order.Status}}</strong></p>
{{if .Order.PaidUSD}}<p>Paid: {{.Order.PaidUSD}} USD</p>{{end}}
{{else}}<h1>{{.Title}}</h1><p>{{.Price}} USD, paid in crypto.</p>
<form method="post" action="/orders"><button>Buy</button></form>{{end}}
</body></html>`))

func (s *Shop) productPage(w http.ResponseWriter, _ *http.Request) {
	_ = page.Execute(w, map[string]any{"Title": s.cfg.Product, "Price": s.cfg.PriceUSD})
}

// buy creates the order, then its checkout session on the server side:
// the API key never reaches the browser, the Idempotency-Key (the order's
// ID) makes a retry of this call return the same session rather than a
// second one, and the metadata carries the order's ID back in every
// webhook. The customer is sent to the session's hosted page (its url).
func (s *Shop) buy(w http.ResponseWriter, r *http.Request) {
	id := newOrderID()
	var session struct{ ID, URL string }
	err := s.call(r.Context(), "/checkout/sessions", id,
		map[string]any{"paymentPlanId": s.cfg.PlanID, "metadata": map[string]any{"orderId": id}}, &session)
	if err != nil {
		slog.Error("create checkout session", "order", id, "err", err)
		http.Error(w, "the payment could not be started; try again", http.StatusBadGateway)
		return
	}
	s.mu.Lock()
	s.orders[id] = &Order{ID: id, Status: "awaiting_payment", SessionID: session.ID}
	s.mu.Unlock()
	// The customer comes back to /orders/mine (the plan's redirectUrl);
	// the cookie remembers which order is theirs.
	http.SetCookie(w, &http.Cookie{Name: "order", Value: id, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, session.URL, http.StatusSeeOther)
}

// myOrder sends a customer back from the hosted page to their order.
func (s *Shop) myOrder(w http.ResponseWriter, r *http.Request) {
	c, err := r.Cookie("order")
	if err != nil {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, "/orders/"+c.Value, http.StatusSeeOther)
}

// orderPage shows an order as the webhooks left it; while it awaits the
// payment it refreshes itself.
func (s *Shop) orderPage(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	o, ok := s.orders[r.PathValue("id")]
	var snapshot Order
	if ok {
		snapshot = *o
	}
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	_ = page.Execute(w, map[string]any{"Title": "Order " + snapshot.ID, "Order": snapshot})
}

// event is what the shop reads of a webhook: the envelope, and of a
// checkout.session.* event's data (the session as the API returns it,
// plus its version) the fields the order needs.
type event struct {
	ID   string `json:"id"` // the same as the webhook-id header
	Type string `json:"type"`
	Data struct {
		ID            string         `json:"id"`
		Status        string         `json:"status"` // open, processing, completed, expired, canceled
		AmountPaidUSD string         `json:"amountPaidUsd"`
		Exception     *string        `json:"exception"` // underpaid, overpaid, paid_late, payment_reversed
		Metadata      map[string]any `json:"metadata"`
		Version       int            `json:"version"`
	} `json:"data"`
}

// webhook verifies the signature over the raw body first (refusing what
// does not verify: anyone can POST here), handles each webhook-id once,
// applies a session's events in version order, and answers at once.
func (s *Shop) webhook(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	if err != nil {
		http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
		return
	}
	// Verify checks webhook-signature (an HMAC of webhook-id,
	// webhook-timestamp and the body under the endpoint's secret) and
	// refuses a timestamp more than five minutes away: no replays.
	if err := s.wh.Verify(body, r.Header); err != nil {
		http.Error(w, "bad signature", http.StatusBadRequest)
		return
	}
	var ev event
	if err := json.Unmarshal(body, &ev); err != nil {
		http.Error(w, "bad event", http.StatusBadRequest)
		return
	}
	// The work here is a few map writes, so it is done before answering;
	// a shop with slower work (e-mails, stock) records the event and
	// answers, and does the work from a queue. paymentsd waits 15 seconds
	// for the answer and retries anything but a 2xx.
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen[ev.ID] {
		w.WriteHeader(http.StatusNoContent) // a retry or a redelivery: done already
		return
	}
	s.seen[ev.ID] = true
	if strings.HasPrefix(ev.Type, "checkout.session.") {
		s.applySession(ev)
	}
	w.WriteHeader(http.StatusNoContent)
}

// applySession brings the order up to the session's state in the event.
func (s *Shop) applySession(ev event) {
	orderID, _ := ev.Data.Metadata["orderId"].(string)
	o := s.orders[orderID]
	// The session must be the one the shop created for this order:
	// anyone can create a session for a plan from a browser, with any
	// metadata, so metadata.orderId alone proves nothing.
	if o == nil || o.SessionID != ev.Data.ID {
		return
	}
	// Events can arrive in any order (a retried checkout.session.processing
	// after checkout.session.completed): a version not above the one
	// applied is older news.
	if ev.Data.Version <= o.Version {
		return
	}
	o.Version = ev.Data.Version
	o.PaidUSD = ev.Data.AmountPaidUSD
	exception := ""
	if ev.Data.Exception != nil {
		exception = *ev.Data.Exception
	}
	switch {
	case ev.Data.Status == "completed" && (exception == "" || exception == "overpaid"):
		o.Status = "paid" // ship it (and refund what was overpaid)
	case exception != "":
		o.Status = "exception" // underpaid, paid late or reversed: settle with the customer
	case ev.Data.Status == "expired" || ev.Data.Status == "canceled":
		o.Status = ev.Data.Status
	}
}

func newOrderID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
