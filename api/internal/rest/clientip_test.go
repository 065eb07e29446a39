package rest

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
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
		addr    string // ClientAddress, when it is not want
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
