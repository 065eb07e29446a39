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

func TestClientKey(t *testing.T) {
	proxies := []netip.Prefix{
		netip.MustParsePrefix("10.0.0.0/8"),
		netip.MustParsePrefix("192.0.2.10/32"),
		netip.MustParsePrefix("fd00::/8"),
	}
	cases := []struct {
		name    string
		remote  string
		xff     []string // one element per header line
		trusted []netip.Prefix
		want    string // clientKey
		addr    string // clientAddress, when it is not want
	}{
		{name: "direct IPv4 client", remote: "203.0.113.5:52100", want: "203.0.113.5"},
		{name: "no trusted proxies: the header is ignored", remote: "10.1.2.3:4000", xff: []string{"203.0.113.5"}, trusted: []netip.Prefix{}, want: "10.1.2.3"},
		{name: "spoofed header from an untrusted peer", remote: "203.0.113.5:52100", xff: []string{"198.51.100.1"}, want: "203.0.113.5"},
		{name: "spoofed header from an untrusted IPv6 peer", remote: "[2001:db8:1:2::7]:443", xff: []string{"10.0.0.1, 198.51.100.1"}, want: "2001:db8:1:2::/64", addr: "2001:db8:1:2::7"},
		{name: "one trusted proxy", remote: "10.0.0.2:8000", xff: []string{"203.0.113.5"}, want: "203.0.113.5"},
		{name: "trusted proxy without a header", remote: "10.0.0.2:8000", want: "10.0.0.2"},
		{name: "client writes a spoofed hop before the proxy's", remote: "10.0.0.2:8000", xff: []string{"1.1.1.1, 203.0.113.5"}, want: "203.0.113.5"},
		{name: "chain of trusted proxies", remote: "10.0.0.2:8000", xff: []string{"203.0.113.5, 192.0.2.10, 10.9.9.9"}, want: "203.0.113.5"},
		{name: "chain over several header lines", remote: "10.0.0.2:8000", xff: []string{"1.1.1.1, 203.0.113.5", "192.0.2.10", "10.9.9.9"}, want: "203.0.113.5"},
		{name: "untrusted hop in the chain ends the walk", remote: "10.0.0.2:8000", xff: []string{"203.0.113.5, 198.51.100.9, 10.9.9.9"}, want: "198.51.100.9"},
		{name: "every hop trusted: the farthest", remote: "10.0.0.2:8000", xff: []string{"10.3.3.3, 10.4.4.4"}, want: "10.3.3.3"},
		{name: "garbage right after the proxy: the proxy", remote: "10.0.0.2:8000", xff: []string{"203.0.113.5, not-an-ip"}, want: "10.0.0.2"},
		{name: "garbage after a trusted hop: that hop", remote: "10.0.0.2:8000", xff: []string{"203.0.113.5, unknown, 10.9.9.9"}, want: "10.9.9.9"},
		{name: "garbage left of the client is never read", remote: "10.0.0.2:8000", xff: []string{"<script>, 203.0.113.5"}, want: "203.0.113.5"},
		{name: "empty entry", remote: "10.0.0.2:8000", xff: []string{"203.0.113.5,,"}, want: "10.0.0.2"},
		{name: "CIDR in the header is not an address", remote: "10.0.0.2:8000", xff: []string{"203.0.113.0/24"}, want: "10.0.0.2"},
		{name: "hops with ports", remote: "10.0.0.2:8000", xff: []string{"203.0.113.5:61000, 10.9.9.9:80"}, want: "203.0.113.5", addr: "203.0.113.5"},
		{name: "IPv6 client behind an IPv6 proxy", remote: "[fd00::1]:8000", xff: []string{"2001:db8:aa:bb:1:2:3:4"}, want: "2001:db8:aa:bb::/64", addr: "2001:db8:aa:bb:1:2:3:4"},
		{name: "IPv6 hop in brackets with a port", remote: "10.0.0.2:8000", xff: []string{"[2001:db8:aa:bb::9]:443"}, want: "2001:db8:aa:bb::/64", addr: "2001:db8:aa:bb::9"},
		{name: "IPv6 hop in brackets without a port", remote: "10.0.0.2:8000", xff: []string{"[2001:db8:aa:bb::9]"}, want: "2001:db8:aa:bb::/64", addr: "2001:db8:aa:bb::9"},
		{name: "one /64 is one client", remote: "[2001:db8:1:2:ffff:ffff:ffff:ffff]:1", want: "2001:db8:1:2::/64", addr: "2001:db8:1:2:ffff:ffff:ffff:ffff"},
		{name: "IPv6 peer with a zone", remote: "[fe80::1%eth0]:1", want: "fe80::/64", addr: "fe80::1"},
		{name: "IPv4-mapped IPv6 peer is IPv4", remote: "[::ffff:203.0.113.5]:52100", want: "203.0.113.5"},
		{name: "IPv4-mapped IPv6 proxy is trusted as IPv4", remote: "[::ffff:10.0.0.2]:8000", xff: []string{"203.0.113.5"}, want: "203.0.113.5"},
		{name: "IPv4-mapped IPv6 hop is IPv4", remote: "10.0.0.2:8000", xff: []string{"::ffff:203.0.113.5"}, want: "203.0.113.5"},
		{name: "peer without a port", remote: "203.0.113.5", want: "203.0.113.5"},
		{name: "peer that is not an address", remote: "@", xff: []string{"203.0.113.5"}, want: "@"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.RemoteAddr = c.remote
			for _, v := range c.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			trusted := proxies
			if c.trusted != nil {
				trusted = c.trusted
			}
			s := &Edge{Proxies: trusted}
			if got := s.ClientIP(r); got != c.want {
				t.Errorf("clientIP = %q, want %q", got, c.want)
			}
			want := c.want
			if c.addr != "" {
				want = c.addr
			}
			if got := s.ClientAddress(r); got != want {
				t.Errorf("clientAddress = %q, want %q", got, want)
			}
		})
	}
}

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
