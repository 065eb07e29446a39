package rest

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// clientAddr is the address of the client that sent r. It is the peer's,
// unless the peer is one of the trusted proxies: then X-Forwarded-For is
// read from the right, each trusted proxy's entry skipped, and the first
// address that is not a trusted proxy's is the client's. A client can
// write anything on the left of the header but nothing on the right of
// what a trusted proxy appended, so nothing left of that first untrusted
// entry is believed. A malformed entry ends the walk at the last good hop.
// The second result is false when RemoteAddr is not an IP address (a
// listener of another kind).
func clientAddr(r *http.Request, trusted []netip.Prefix) (netip.Addr, bool) {
	peer, ok := parseHop(r.RemoteAddr)
	if !ok {
		return netip.Addr{}, false
	}
	if !isTrusted(peer, trusted) {
		return peer, true
	}
	addr := peer
	hops := r.Header.Values("X-Forwarded-For")
	for i := len(hops) - 1; i >= 0; i-- {
		entries := strings.Split(hops[i], ",")
		for j := len(entries) - 1; j >= 0; j-- {
			hop, ok := parseHop(strings.TrimSpace(entries[j]))
			if !ok {
				return addr, true
			}
			addr = hop
			if !isTrusted(hop, trusted) {
				return addr, true
			}
		}
	}
	return addr, true // every hop a trusted proxy: the farthest one
}

// clientKey is the client's counter for rate limits: its IPv4 address, or
// its IPv6 /64, which one subscriber usually holds whole (RFC 6177), so
// that walking through the addresses of one's own network does not buy
// more requests.
func clientKey(r *http.Request, trusted []netip.Prefix) string {
	addr, ok := clientAddr(r, trusted)
	switch {
	case !ok:
		return r.RemoteAddr
	case addr.Is4():
		return addr.String()
	}
	return netip.PrefixFrom(addr, 64).Masked().String()
}

// ClientAddress is the address of the client that sent r, behind the
// trusted proxies, whole: for the audit log and the idempotency scopes of
// public routes, where one IPv6 /64 is several callers.
func (s *Edge) ClientAddress(r *http.Request) string {
	if addr, ok := clientAddr(r, s.Proxies); ok {
		return addr.String()
	}
	return r.RemoteAddr
}

// parseHop reads an address as RemoteAddr and X-Forwarded-For carry it:
// with or without a port, IPv6 with or without brackets. IPv4-mapped IPv6
// becomes IPv4, and a zone is dropped.
func parseHop(s string) (netip.Addr, bool) {
	if len(s) > 2 && s[0] == '[' && s[len(s)-1] == ']' {
		s = s[1 : len(s)-1] // IPv6 in brackets, without a port
	}
	addr, err := netip.ParseAddr(s)
	if err != nil {
		host, _, splitErr := net.SplitHostPort(s)
		if splitErr != nil {
			return netip.Addr{}, false
		}
		if addr, err = netip.ParseAddr(host); err != nil {
			return netip.Addr{}, false
		}
	}
	return addr.Unmap().WithZone(""), true
}

func isTrusted(addr netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// ClientIP is the counter of the client that sent r for rate limits: its
// address behind the trusted proxies, or an IPv6 client's /64 (clientKey).
func (s *Edge) ClientIP(r *http.Request) string {
	return clientKey(r, s.Proxies)
}
