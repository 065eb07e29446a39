package api

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"connectrpc.com/connect"

	v1 "github.com/paymentsd/paymentsd/api/gen/paymentsd/v1"
	"github.com/paymentsd/paymentsd/api/gen/paymentsd/v1/paymentsdv1connect"
	"github.com/paymentsd/paymentsd/service"
)

// Behind a trusted proxy, REST and Connect calls count against the client
// the proxy names, not against the proxy; a client that is not behind one
// cannot pick its counter with the header.
func TestRateLimitsCountTheClientBehindTrustedProxies(t *testing.T) {
	// The test server's peer address is the loopback: the proxy.
	s, err := New(service.New(service.Deps{}), Config{Limits: map[Tier]uint64{Relaxed: 1, Standard: 1},
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()

	rest := func(xff string) int {
		req, err := http.NewRequest(http.MethodGet, srv.URL+"/api/v1/assets", nil)
		if err != nil {
			t.Fatal(err)
		}
		if xff != "" {
			req.Header.Set("X-Forwarded-For", xff)
		}
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		return res.StatusCode
	}
	// A bad key is refused without the engine; the client's budget of
	// failures (Standard, 1) decides between unauthenticated and
	// resource_exhausted.
	payments := paymentsdv1connect.NewPaymentsServiceClient(srv.Client(), srv.URL)
	rpc := func(xff string) connect.Code {
		req := connect.NewRequest(&v1.GetProjectRequest{ProjectId: "proj_x"})
		req.Header().Set("Authorization", "Bearer nope")
		req.Header().Set("X-Forwarded-For", xff)
		_, err := payments.GetProject(context.Background(), req)
		var ce *connect.Error
		if !errors.As(err, &ce) {
			t.Fatalf("GetProject: %v", err)
		}
		return ce.Code()
	}

	steps := []struct {
		name string
		call func() any
		want any
	}{
		{"REST: first client", func() any { return rest("203.0.113.5") }, http.StatusOK},
		{"REST: first client again", func() any { return rest("203.0.113.5") }, http.StatusTooManyRequests},
		{"REST: second client behind the same proxy", func() any { return rest("198.51.100.7") }, http.StatusOK},
		{"REST: first client's spoofed hop is not believed", func() any { return rest("192.0.2.99, 203.0.113.5") }, http.StatusTooManyRequests},
		{"REST: an IPv6 client", func() any { return rest("2001:db8:1:2::1") }, http.StatusOK},
		{"REST: another address in its /64", func() any { return rest("2001:db8:1:2::2") }, http.StatusTooManyRequests},
		{"Connect: first client", func() any { return rpc("203.0.113.5") }, connect.CodeUnauthenticated},
		{"Connect: first client again", func() any { return rpc("203.0.113.5") }, connect.CodeResourceExhausted},
		{"Connect: second client behind the same proxy", func() any { return rpc("198.51.100.7") }, connect.CodeUnauthenticated},
	}
	for _, st := range steps {
		if got := st.call(); got != st.want {
			t.Fatalf("%s: %v, want %v", st.name, got, st.want)
		}
	}

	// Without trusted proxies the same header changes nothing: every call
	// counts against the peer.
	direct, err := New(service.New(service.Deps{}), Config{Limits: map[Tier]uint64{Relaxed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	srv2 := httptest.NewServer(direct.Handler())
	defer srv2.Close()
	for i, want := range []int{http.StatusOK, http.StatusTooManyRequests} {
		req, _ := http.NewRequest(http.MethodGet, srv2.URL+"/api/v1/assets", nil)
		req.Header.Set("X-Forwarded-For", []string{"203.0.113.1", "203.0.113.2"}[i])
		res, err := srv2.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		if res.StatusCode != want {
			t.Fatalf("untrusted peer, call %d with a new forwarded address: %d, want %d", i+1, res.StatusCode, want)
		}
	}
}
