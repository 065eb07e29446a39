package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/jackc/pgx/v5/pgconn"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	v1 "github.com/paymentsd/paymentsd/api/gen/paymentsd/v1"
	"github.com/paymentsd/paymentsd/api/gen/paymentsd/v1/paymentsdv1connect"
	"github.com/paymentsd/paymentsd/api/internal/rest"
	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/store/storetest"
)

// A process serving as many requests as it may refuses the next at once:
// 503 with Retry-After in the spec's envelope, code unavailable with
// Retry-After to a Connect or gRPC-Web client; the probes are still
// answered, and once a slot frees the next request is served.
func TestAFullProcessRefusesWith503AndRetryAfter(t *testing.T) {
	s, err := New(service.New(service.Deps{Store: storetest.NewStore(t)}), Config{MaxInflight: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()

	// The one slot is held by a creation whose body is still arriving.
	body, feed := io.Pipe()
	defer feed.Close() // a failing test lets the held request end, so the server can close
	held := make(chan int, 1)
	go func() {
		res, err := http.Post(ts.URL+"/api/v1/checkout/sessions", "application/json", body)
		if err != nil {
			held <- 0
			return
		}
		res.Body.Close()
		held <- res.StatusCode
	}()
	// Wait for the slot itself: polling a route would spend the caller's
	// rate limit before the creation arrives.
	testwait.Until(t, 10*time.Second, func() (bool, string) {
		return len(s.inflight.slots) == 1, "the creation has not taken the slot"
	})
	refused, err := http.Get(ts.URL + "/api/v1/assets")
	if err != nil {
		t.Fatal(err)
	}
	defer refused.Body.Close()
	if refused.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("GET /api/v1/assets: %d while the slot is taken, want 503", refused.StatusCode)
	}
	var env rest.Envelope
	if err := json.NewDecoder(refused.Body).Decode(&env); err != nil {
		t.Fatal(err)
	}
	if env.Success || env.StatusCode != 503 || env.Error == nil || env.Error.Code != "SERVICE_UNAVAILABLE" || env.Meta.RequestID == "" {
		t.Fatalf("refusal: %+v; want the spec's error envelope, SERVICE_UNAVAILABLE", env)
	}
	if got := refused.Header.Get("Retry-After"); got != "1" {
		t.Errorf("refusal's Retry-After %q, want 1", got)
	}

	for name, opt := range map[string]connect.ClientOption{"Connect": nil, "gRPC-Web": connect.WithGRPCWeb()} {
		var opts []connect.ClientOption
		if opt != nil {
			opts = append(opts, opt)
		}
		c := paymentsdv1connect.NewCheckoutServiceClient(http.DefaultClient, ts.URL, opts...)
		_, err := c.ListAssets(context.Background(), connect.NewRequest(&v1.ListAssetsRequest{}))
		var ce *connect.Error
		if !errors.As(err, &ce) || ce.Code() != connect.CodeUnavailable || ce.Meta().Get("Retry-After") != "1" {
			t.Errorf("%s ListAssets while full: %v (meta %v); want unavailable with Retry-After 1", name, err, metaOf(ce))
		}
	}
	for _, probe := range []string{"/healthz", "/metrics"} {
		res, err := http.Get(ts.URL + probe)
		if err != nil || res.StatusCode != http.StatusOK {
			t.Errorf("GET %s while full: %v %v; want it answered", probe, res.StatusCode, err)
		}
		if res != nil {
			res.Body.Close()
		}
	}

	// The held request finishes; the slot is free again.
	_, _ = io.WriteString(feed, `{"paymentPlanId": "plan_nothere"}`)
	feed.Close()
	if code := <-held; code != http.StatusUnprocessableEntity {
		t.Errorf("the held creation: %d, want 422 (no such plan)", code)
	}
	res, err := http.Get(ts.URL + "/api/v1/assets")
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/v1/assets once the slot is free: %v %v", res.StatusCode, err)
	}
	res.Body.Close()
}

func metaOf(ce *connect.Error) http.Header {
	if ce == nil {
		return nil
	}
	return ce.Meta()
}

// A database that stops answering is a 503 with Retry-After, not a 500:
// the client retries after the pause, and the answer names no internals.
// Connect says unavailable, with the same Retry-After.
func TestAnUnreachableDatabaseIs503WithRetryAfter(t *testing.T) {
	url := storetest.NewDB(t)
	fwd := forward(t, url)
	st, err := store.Open(context.Background(), fwd.url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := New(service.New(service.Deps{Store: st}), Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	token := payment.NewSessionToken()

	get := func() (*http.Response, rest.Envelope) {
		res, err := http.Get(ts.URL + "/api/v1/checkout/sessions/" + token)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var env rest.Envelope
		_ = json.NewDecoder(res.Body).Decode(&env)
		return res, env
	}
	if res, _ := get(); res.StatusCode != http.StatusNotFound {
		t.Fatalf("GET a session no one opened, database up: %d, want 404", res.StatusCode)
	}

	fwd.stop()
	res, env := get()
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") != rest.RetryAfterUnavailable ||
		env.Error == nil || env.Error.Code != "SERVICE_UNAVAILABLE" {
		t.Fatalf("GET with the database unreachable: %d, Retry-After %q, %+v; want 503 SERVICE_UNAVAILABLE with Retry-After %s",
			res.StatusCode, res.Header.Get("Retry-After"), env.Error, rest.RetryAfterUnavailable)
	}
	if strings.Contains(env.Message, "127.0.0.1") || strings.Contains(env.Message, "dial") {
		t.Errorf("the answer names internals: %q", env.Message)
	}
	c := paymentsdv1connect.NewCheckoutServiceClient(http.DefaultClient, ts.URL)
	_, err = c.GetCheckoutSession(context.Background(), connect.NewRequest(&v1.GetCheckoutSessionRequest{Token: token}))
	var ce *connect.Error
	if !errors.As(err, &ce) || ce.Code() != connect.CodeUnavailable || ce.Meta().Get("Retry-After") != rest.RetryAfterUnavailable {
		t.Errorf("Connect GetCheckoutSession with the database unreachable: %v (meta %v); want unavailable with Retry-After", err, metaOf(ce))
	}
}

// What counts as a dependency unavailable for a while (a 503 to retry)
// and what stays the server's own failure (a 500).
func TestDependencyUnavailable(t *testing.T) {
	// Temporal's client, for real, against a port no server listens on.
	tc, err := client.NewLazyClient(client.Options{HostPort: freePort(t), Logger: quiet{}})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, noTemporal := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "w", TaskQueue: "q"}, "Workflow")

	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"Temporal unreachable (the SDK's own error)", fmt.Errorf("start: %w", noTemporal), true},
		{"Temporal's rate limit", fmt.Errorf("update: %w", serviceerror.NewResourceExhausted(0, "namespace rate limit exceeded")), true},
		{"Temporal unavailable", serviceerror.NewUnavailable("frontend is shutting down"), true},
		{"Postgres: too many clients", fmt.Errorf("load plan: %w", &pgconn.PgError{Code: "53300"}), true},
		{"Postgres: shutting down", &pgconn.PgError{Code: "57P01"}, true},
		{"Postgres: a query canceled on purpose", &pgconn.PgError{Code: "57014"}, false},
		{"Postgres: a constraint", &pgconn.PgError{Code: "23505"}, false},
		{"a connection broken under a statement", fmt.Errorf("load session: %w", io.ErrUnexpectedEOF), true},
		{"a wait past its deadline", fmt.Errorf("acquire: %w", context.DeadlineExceeded), true},
		{"the client went away", context.Canceled, false},
		{"a bug", errors.New("nil map"), false},
	} {
		if got := service.Unavailable(c.err); got != c.want {
			t.Errorf("%s (%v): %v, want %v", c.name, c.err, got, c.want)
		}
	}
}

type quiet struct{}

func (quiet) Debug(string, ...any) {}
func (quiet) Info(string, ...any)  {}
func (quiet) Warn(string, ...any)  {}
func (quiet) Error(string, ...any) {}

func freePort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// forwarder passes TCP connections to the database through, until stop
// closes them all and refuses new ones: the database gone, as a client
// sees it.
type forwarder struct {
	url, addr, target string
	mu                sync.Mutex
	ln                net.Listener
	open              []net.Conn
}

func forward(t *testing.T, dbURL string) *forwarder {
	cfg, err := pgconn.ParseConfig(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	f := &forwarder{target: net.JoinHostPort(cfg.Host, fmt.Sprint(cfg.Port)), addr: "127.0.0.1:0"}
	if err := f.listen(); err != nil {
		t.Fatal(err)
	}
	f.addr = f.ln.Addr().String()
	_, port, _ := net.SplitHostPort(f.addr)
	f.url = strings.Replace(dbURL, f.target, "127.0.0.1:"+port, 1)
	if f.url == dbURL {
		t.Fatalf("the database URL does not name %s", f.target)
	}
	t.Cleanup(f.stop)
	return f
}

// listen passes the connections made to f.addr through, until stop.
func (f *forwarder) listen() error {
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return err
	}
	f.mu.Lock()
	f.ln = ln
	f.mu.Unlock()
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", f.target)
			if err != nil {
				in.Close()
				continue
			}
			f.mu.Lock()
			f.open = append(f.open, in, out)
			f.mu.Unlock()
			go func() { _, _ = io.Copy(out, in); out.Close() }()
			go func() { _, _ = io.Copy(in, out); in.Close() }()
		}
	}()
	return nil
}

func (f *forwarder) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ln.Close()
	for _, c := range f.open {
		c.Close()
	}
	f.open = nil
}

// A request that failed because the database did not answer has its
// Idempotency-Key's claim released even when the database fails the
// release too: it is tried again until the database is back, and the
// key is then free for the client's retry (not a 409 for a day).
func TestAClaimIsReleasedOnceTheDatabaseIsBack(t *testing.T) {
	url := storetest.NewDB(t)
	fwd := forward(t, url)
	st, err := store.Open(context.Background(), fwd.url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := New(service.New(service.Deps{Store: st}), Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	id := recordID("key:k1", "retry-me")
	if prev, err := s.Svc.ClaimIdempotencyKey(ctx, id, "body"); err != nil || prev != nil {
		t.Fatalf("claim: %v %v", prev, err)
	}

	fwd.stop() // the database goes away under the request
	s.release(ctx, id)
	own, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	direct := service.New(service.Deps{Store: own})
	if prev, err := direct.ClaimIdempotencyKey(ctx, id, "body"); err != nil || prev == nil || prev.StatusCode != 0 {
		t.Fatalf("with the database away from the API, the claim is still held: %+v %v", prev, err)
	}
	if err := fwd.listen(); err != nil { // and comes back
		t.Fatal(err)
	}
	testwait.Until(t, 15*time.Second, func() (bool, string) {
		prev, err := direct.ClaimIdempotencyKey(ctx, id, "body")
		return err == nil && prev == nil, fmt.Sprintf("the claim is still held: %+v %v", prev, err)
	})
}
