package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// DefaultTimeout bounds one delivery attempt (dial, TLS, request, response
// headers and body) when ClientOptions.Timeout is zero. A merchant endpoint
// that hangs must not hold a delivery worker for long; the retry schedule
// gives slow endpoints further chances.
const DefaultTimeout = 15 * time.Second

// MaxIdleConnsPerHost is how many idle connections the client keeps to
// one receiver: as many as the dispatcher has deliveries in flight, so
// that the connections of one batch of deliveries to a receiver serve the
// next batch rather than closing (the standard library keeps 2 a host).
const MaxIdleConnsPerHost = 64

// ErrForbiddenDestination is the error behind a refused connection: the
// webhook URL resolved to an address inside a private, loopback, link-local
// or otherwise non-public range. The *url.Error returned by http.Client.Do
// wraps it, so errors.Is(err, ErrForbiddenDestination) identifies it; a
// delivery should record it as a permanent, configuration-side failure.
var ErrForbiddenDestination = errors.New("forbidden webhook destination")

// ClientOptions configures NewClient.
type ClientOptions struct {
	// AllowPrivate turns the destination guard off so that deliveries can
	// reach loopback and private addresses. Only for development and tests,
	// where the receiver runs on localhost.
	AllowPrivate bool
	// Timeout for a whole delivery attempt; zero means DefaultTimeout.
	Timeout time.Duration
	// Resolver, when set, resolves host names in place of the system's
	// (tests use one that maps names to private addresses).
	Resolver *net.Resolver
}

// NewClient returns the HTTP client for delivering webhooks to
// merchant-supplied URLs.
//
// Webhook URLs are chosen by merchants, so without care they are a
// server-side request forgery vector: a URL pointing at 169.254.169.254 (the
// cloud metadata service), at localhost or at an internal host would make
// paymentsd send requests inside our network. The client therefore refuses,
// unless AllowPrivate is set, to connect to:
//
//   - loopback 127.0.0.0/8 and ::1, unspecified 0.0.0.0/8 and ::;
//   - private 10/8, 172.16/12, 192.168/16, carrier-grade NAT 100.64/10,
//     unique-local fc00::/7 (includes AWS's fd00:ec2::254 metadata address);
//   - link-local 169.254/16 and fe80::/10 (includes 169.254.169.254);
//   - multicast, reserved 240/4 and broadcast, 192.0.0/24, 198.18/15,
//     deprecated site-local fec0::/10 and IPv4-compatible ::/96, 100::/64,
//     local-use NAT64 64:ff9b:1::/48;
//   - any of the IPv4 ranges written as IPv6: IPv4-mapped ::ffff:a.b.c.d,
//     NAT64 64:ff9b::a.b.c.d and 6to4 2002:AABB:CCDD::.
//
// The check runs at dial time, on the resolved IP address the socket is
// about to connect to (net.Dialer.Control runs after DNS resolution and
// socket creation but before connect, so a refused address never receives a
// packet; a URL with an IP literal host is refused even before the socket).
// Checking the URL's host instead would be defeated by DNS names
// that resolve to internal addresses, and checking a separate DNS lookup
// would be defeated by DNS rebinding between the check and the dial. Every
// address the dialer tries, including Happy Eyeballs fallbacks, is checked.
//
// Redirects are not followed: Do returns the 3xx response itself with a nil
// error, and delivery must count any non-2xx status, 3xx included, as a
// failed attempt. Following would re-send a signed payload to a URL the
// merchant never registered (an open redirect on their site would let anyone
// divert it), 301/302/303 would turn the POST into a GET, and a merchant
// who moved their endpoint should update the URL rather than rely on us
// chasing it.
//
// No proxy is used, whatever HTTP_PROXY and HTTPS_PROXY say: through a proxy
// the guard would see only the proxy's address while the proxy, usually
// inside our network, connects wherever the URL says.
//
// The guard lives in the client's transport; do not replace Transport.
func NewClient(opts ClientOptions) *http.Client {
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	dialer := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second, Resolver: opts.Resolver}
	dial := dialer.DialContext
	if !opts.AllowPrivate {
		dialer.Control = guardDial
		dial = guardedDial(dialer)
	}
	transport := &http.Transport{
		Proxy:                  nil,
		DialContext:            dial,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           256,
		MaxIdleConnsPerHost:    MaxIdleConnsPerHost,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
		ExpectContinueTimeout:  1 * time.Second,
		MaxResponseHeaderBytes: 64 << 10, // the receiver is untrusted
	}
	return &http.Client{
		Transport: transport,
		Timeout:   timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// guardedDial refuses a URL whose host is an IP literal before the dialer
// even creates a socket, so the refusal does not depend on the host
// supporting that address family. Names go on to the dialer, whose Control
// hook (guardDial) checks each address they resolve to.
func guardedDial(d *net.Dialer) func(ctx context.Context, network, address string) (net.Conn, error) {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		if ap, err := netip.ParseAddrPort(address); err == nil {
			if err := checkAddr(ap.Addr()); err != nil {
				return nil, &net.OpError{Op: "dial", Net: network, Addr: net.TCPAddrFromAddrPort(ap), Err: err}
			}
		}
		return d.DialContext(ctx, network, address)
	}
}

// guardDial is a net.Dialer.Control hook: address is the resolved "ip:port"
// about to be connected. This is the check that matters, as it sees the
// address actually dialed. Anything it cannot parse is refused, so the guard
// fails closed.
func guardDial(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: unparsable address %q", ErrForbiddenDestination, address)
	}
	return checkAddr(ap.Addr())
}

func checkAddr(ip netip.Addr) error {
	if why := forbiddenReason(ip); why != "" {
		return fmt.Errorf("%w: %s is %s", ErrForbiddenDestination, ip.WithZone(""), why)
	}
	return nil
}

type forbiddenNet struct {
	prefix netip.Prefix
	why    string
}

// forbiddenNets are the ranges that are not reachable on the public internet
// or that address our own infrastructure. More specific prefixes come first
// so that the reason given is the most precise one.
var forbiddenNets = []forbiddenNet{
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified (this network)"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade NAT"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local (cloud metadata)"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignment"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved or broadcast"},

	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("::/96"), "IPv4-compatible (deprecated)"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local-use NAT64"},
	{netip.MustParsePrefix("100::/64"), "discard-only"},
	{netip.MustParsePrefix("fc00::/7"), "unique-local (private)"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("fec0::/10"), "site-local (deprecated)"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
}

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// forbiddenReason says why ip must not be dialed, or returns "" if it may.
func forbiddenReason(ip netip.Addr) string {
	if !ip.IsValid() {
		return "invalid"
	}
	// A zone (fe80::1%eth0) makes Prefix.Contains report false; the zone
	// does not change which range the address is in.
	ip = ip.WithZone("")
	// ::ffff:127.0.0.1 is 127.0.0.1 to the kernel.
	ip = ip.Unmap()
	for _, f := range forbiddenNets {
		if f.prefix.Contains(ip) {
			return f.why
		}
	}
	// Addresses that embed an IPv4 address and, through a NAT64 gateway or
	// a 6to4 relay, reach it: judge them by the embedded address.
	b := ip.As16()
	switch {
	case nat64.Contains(ip):
		if why := forbiddenReason(netip.AddrFrom4([4]byte(b[12:16]))); why != "" {
			return "NAT64 of " + why
		}
	case sixToFour.Contains(ip):
		if why := forbiddenReason(netip.AddrFrom4([4]byte(b[2:6]))); why != "" {
			return "6to4 of " + why
		}
	}
	return ""
}
