package webhook_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/webhook"
)

// countingServer is a live loopback server that counts the TCP connections
// it accepts and the requests it serves, so tests can show that a refused
// request never reached it, not even as a connection.
type countingServer struct {
	*httptest.Server
	conns, hits atomic.Int64
}

func newCountingServer(t *testing.T, h http.HandlerFunc) *countingServer {
	t.Helper()
	s := &countingServer{}
	if h == nil {
		h = func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }
	}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		h(w, r)
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func (s *countingServer) port(t *testing.T) string {
	t.Helper()
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Port()
}

func get(t *testing.T, c *http.Client, target string) (*http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return resp, err
}

func TestClientRefusesForbiddenDestinations(t *testing.T) {
	srv := newCountingServer(t, nil)
	port := srv.port(t)
	guarded := webhook.NewClient(webhook.ClientOptions{Timeout: 2 * time.Second})

	// Only the loopback targets point at a live server. The others are
	// never contacted: the guard refuses them before connect(2), which is
	// why these return at once rather than waiting for the timeout.
	for _, target := range []string{
		srv.URL + "/hook",                             // http://127.0.0.1:PORT
		"http://localhost:" + port + "/hook",          // a name: refused by the dial-time check, after DNS
		"http://[::1]:" + port + "/hook",              // IPv6 loopback
		"http://[::ffff:127.0.0.1]:" + port + "/hook", // IPv4-mapped loopback
		"http://0.0.0.0:" + port + "/hook",            // unspecified, which Linux routes to loopback
		"http://10.0.0.1/",                            // private
		"http://169.254.169.254/latest/meta-data",     // cloud metadata
		"http://192.168.1.1/",                         // private
		"http://[fd00:ec2::254]/latest/meta-data",     // AWS IPv6 metadata, unique-local
		"https://100.64.0.1/",                         // CGNAT, over TLS
	} {
		start := time.Now()
		resp, err := get(t, guarded, target)
		if !errors.Is(err, webhook.ErrForbiddenDestination) {
			t.Errorf("%s: response %v, err %v; want ErrForbiddenDestination", target, resp, err)
			continue
		}
		var uerr *url.Error
		if !errors.As(err, &uerr) {
			t.Errorf("%s: err %T is not a *url.Error", target, err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s: refusal took %s; the guard should refuse before dialing", target, d)
		}
		t.Logf("%s: %v", target, err)
	}

	// The same live server is reachable when the guard is off, and that is
	// the first connection it has ever seen.
	open := webhook.NewClient(webhook.ClientOptions{AllowPrivate: true, Timeout: 2 * time.Second})
	resp, err := get(t, open, srv.URL+"/hook")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("AllowPrivate: response %v, err %v", resp, err)
	}
	if c, h := srv.conns.Load(), srv.hits.Load(); c != 1 || h != 1 {
		t.Fatalf("server saw %d connections and %d requests, want 1 and 1", c, h)
	}
}

func TestClientAllowPrivateReachesLocalhostName(t *testing.T) {
	srv := newCountingServer(t, nil)
	open := webhook.NewClient(webhook.ClientOptions{AllowPrivate: true, Timeout: 2 * time.Second})
	resp, err := get(t, open, "http://localhost:"+srv.port(t)+"/")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("response %v, err %v", resp, err)
	}
}

func TestClientDoesNotFollowRedirects(t *testing.T) {
	final := newCountingServer(t, nil)
	first := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, final.URL+"/moved", http.StatusFound)
	})
	c := webhook.NewClient(webhook.ClientOptions{AllowPrivate: true, Timeout: 2 * time.Second})
	resp, err := get(t, c, first.URL+"/hook")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != final.URL+"/moved" {
		t.Fatalf("got %d Location %q, want the 302 itself", resp.StatusCode, resp.Header.Get("Location"))
	}
	if n := final.conns.Load(); n != 0 {
		t.Fatalf("redirect target saw %d connections, want 0", n)
	}
}

func TestClientUsesNoProxy(t *testing.T) {
	t.Setenv("HTTP_PROXY", "http://127.0.0.1:1")
	t.Setenv("HTTPS_PROXY", "http://127.0.0.1:1")
	for _, allow := range []bool{false, true} {
		tr, ok := webhook.NewClient(webhook.ClientOptions{AllowPrivate: allow}).Transport.(*http.Transport)
		if !ok {
			t.Fatal("transport is not an *http.Transport")
		}
		if tr.Proxy != nil {
			t.Fatal("transport has a proxy function")
		}
	}
}

func TestClientDefaultTimeout(t *testing.T) {
	if got := webhook.NewClient(webhook.ClientOptions{}).Timeout; got != 15*time.Second {
		t.Fatalf("default timeout %s, want 15s", got)
	}
	if got := webhook.NewClient(webhook.ClientOptions{Timeout: time.Second}).Timeout; got != time.Second {
		t.Fatalf("timeout %s, want 1s", got)
	}
}
