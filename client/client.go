// Package client is the Go client of paymentsd's Connect API: the
// generated service clients with the base URL and the API key set once.
//
//	c := client.New("https://payments.example.com", os.Getenv("PAYMENTSD_API_KEY"))
//	plan, err := c.Payments.CreatePaymentPlan(ctx, connect.NewRequest(&paymentsdv1.CreatePaymentPlanRequest{...}))
//
// Every call of Payments carries the key; Checkout's calls (the customer's
// side) carry it too, which makes CreateCheckoutSession a server-side
// creation counted per key and limited to the key's plans. Use
// NewPublic for a client without a key.
package client

import (
	"context"
	"net/http"
	"strings"

	"connectrpc.com/connect"

	"github.com/paymentsd/paymentsd/api/gen/paymentsd/v1/paymentsdv1connect"
)

// Client holds the two services of the API.
type Client struct {
	// Payments is the merchant's service: projects, plans, sessions and
	// transactions. It needs an API key.
	Payments paymentsdv1connect.PaymentsServiceClient
	// Checkout is the customer's service: opening a session, reading it by
	// its token, the assets accepted.
	Checkout paymentsdv1connect.CheckoutServiceClient
}

// Option configures New.
type Option func(*options)

type options struct {
	http    connect.HTTPClient
	connect []connect.ClientOption
}

// WithHTTPClient sends the calls through c (default http.DefaultClient).
func WithHTTPClient(c connect.HTTPClient) Option { return func(o *options) { o.http = c } }

// WithConnectOptions passes options to the generated clients, e.g.
// connect.WithGRPC() or connect.WithProtoJSON().
func WithConnectOptions(opts ...connect.ClientOption) Option {
	return func(o *options) { o.connect = append(o.connect, opts...) }
}

// New returns a client of the API at baseURL (e.g. https://payments.example.com,
// without /api/v1) that authenticates with apiKey.
func New(baseURL, apiKey string, opts ...Option) *Client {
	return newClient(baseURL, apiKey, opts)
}

// NewPublic returns a client without an API key: only Checkout's calls
// and the public lookups work.
func NewPublic(baseURL string, opts ...Option) *Client {
	return newClient(baseURL, "", opts)
}

func newClient(baseURL, apiKey string, opts []Option) *Client {
	o := options{http: http.DefaultClient}
	for _, opt := range opts {
		opt(&o)
	}
	copts := o.connect
	if apiKey != "" {
		copts = append(copts, connect.WithInterceptors(bearer(apiKey)))
	}
	baseURL = strings.TrimRight(baseURL, "/")
	return &Client{
		Payments: paymentsdv1connect.NewPaymentsServiceClient(o.http, baseURL, copts...),
		Checkout: paymentsdv1connect.NewCheckoutServiceClient(o.http, baseURL, copts...),
	}
}

// bearer sets the API key on every call, unary or streaming.
type bearer string

func (b bearer) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		req.Header().Set("Authorization", "Bearer "+string(b))
		return next(ctx, req)
	}
}

func (b bearer) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return func(ctx context.Context, spec connect.Spec) connect.StreamingClientConn {
		conn := next(ctx, spec)
		conn.RequestHeader().Set("Authorization", "Bearer "+string(b))
		return conn
	}
}

// WrapStreamingHandler is the server side: nothing to do.
func (b bearer) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}
