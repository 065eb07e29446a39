// Package shop is an example shop integrated with paymentsd, the way a
// merchant's server does it: the server creates the checkout session with
// its API key, sends the customer to the hosted page, and marks the order
// paid when the signed webhook says the session completed. Read it top to
// bottom as the integration guide; examples/shop runs it.
package shop

import (
	"bytes"
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
	PlanID        string // the plan the product is sold by
	WebhookSecret string // the endpoint's whsec_… secret
	Product       string // shown on the page
	PriceUSD      string
}

// Order is one purchase.
type Order struct {
	ID        string
	Status    string // awaiting_payment, paid, expired, canceled, exception
	SessionID string
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

// New returns the shop.
func New(cfg Config) (*Shop, error) {
	wh, err := standardwebhooks.NewWebhook(cfg.WebhookSecret)
	if err != nil {
		return nil, fmt.Errorf("webhook secret: %w", err)
	}
	return &Shop{cfg: cfg, wh: wh, http: http.DefaultClient, orders: map[string]*Order{}, seen: map[string]bool{}}, nil
}

// Handler serves the shop's pages and its webhook endpoint.
func (s *Shop) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.productPage)
	mux.HandleFunc("POST /orders", s.buy)
	mux.HandleFunc("GET /orders/{id}", s.orderPage)
	mux.HandleFunc("POST /webhooks", s.webhook)
	return mux
}

var page = template.Must(template.New("page").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>{{.Title}}</title>
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
// ID) makes a retry return the same session, and the metadata carries the
// order's ID back in every webhook. The customer is sent to the session's
// hosted page.
func (s *Shop) buy(w http.ResponseWriter, r *http.Request) {
	id := newOrderID()
	body, _ := json.Marshal(map[string]any{"paymentPlanId": s.cfg.PlanID, "metadata": map[string]any{"orderId": id}})
	req, _ := http.NewRequestWithContext(r.Context(), http.MethodPost, s.cfg.PaymentsdURL+"/api/v1/checkout/sessions", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+s.cfg.APIKey)
	req.Header.Set("Idempotency-Key", "order-"+id)
	res, err := s.http.Do(req)
	if err != nil {
		http.Error(w, "the payment service is unreachable; try again", http.StatusBadGateway)
		return
	}
	defer res.Body.Close()
	var env struct {
		Data struct{ ID, URL string }
	}
	if err := json.NewDecoder(res.Body).Decode(&env); err != nil || res.StatusCode != http.StatusCreated {
		slog.Error("create checkout session", "status", res.StatusCode, "err", err)
		http.Error(w, "the payment could not be started; try again", http.StatusBadGateway)
		return
	}
	s.mu.Lock()
	s.orders[id] = &Order{ID: id, Status: "awaiting_payment", SessionID: env.Data.ID}
	s.mu.Unlock()
	// The customer comes back to /orders/{id} (the plan's redirectUrl can
	// point at the shop); the cookie remembers which order is theirs.
	http.SetCookie(w, &http.Cookie{Name: "order", Value: id, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, env.Data.URL, http.StatusSeeOther)
}

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

// event is what the shop reads of a webhook.
type event struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	Data struct {
		ID            string         `json:"id"`
		Status        string         `json:"status"`
		AmountPaidUSD string         `json:"amountPaidUsd"`
		Exception     *string        `json:"exception"`
		Metadata      map[string]any `json:"metadata"`
		Version       int            `json:"version"`
	} `json:"data"`
}

// webhook verifies the signature over the raw body first (refusing what
// does not verify), handles each webhook-id once, applies a session's
// events in version order, and answers at once.
func (s *Shop) webhook(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	if err != nil {
		http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
		return
	}
	if err := s.wh.Verify(body, r.Header); err != nil {
		http.Error(w, "bad signature", http.StatusBadRequest)
		return
	}
	var ev event
	if err := json.Unmarshal(body, &ev); err != nil {
		http.Error(w, "bad event", http.StatusBadRequest)
		return
	}
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

func (s *Shop) applySession(ev event) {
	orderID, _ := ev.Data.Metadata["orderId"].(string)
	o := s.orders[orderID]
	if o == nil || o.SessionID != ev.Data.ID || ev.Data.Version <= o.Version {
		return // not ours, or older than what the order shows
	}
	o.Version = ev.Data.Version
	o.PaidUSD = ev.Data.AmountPaidUSD
	switch {
	case ev.Data.Exception != nil:
		o.Status = "exception" // under- or overpaid, or paid late: settle with the customer
	case ev.Data.Status == "completed":
		o.Status = "paid" // ship it
	case ev.Data.Status == "expired" || ev.Data.Status == "canceled":
		o.Status = ev.Data.Status
	}
}

func newOrderID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
