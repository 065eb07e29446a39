package stacktest

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/api"
	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/dev/devstack"
	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
)

// A stack that cannot start returns the error that stopped it, having
// closed what it had started (no panic on the parts it had not).
func TestAFailingStartReturnsItsError(t *testing.T) {
	other := func(key string, chainID int64) chainwatch.Network {
		return chainwatch.Network{Key: key, ChainID: chainID, RPCURLs: []string{"http://127.0.0.1:1"}}
	}
	for name, c := range map[string]struct {
		networks []chainwatch.Network
		want     string
	}{
		"two networks of one chain": {[]chainwatch.Network{other("a", 5), other("b", 5)}, `networks "a" and "b" have the same chainId 5`},
		"the dev chain's ID taken":  {[]chainwatch.Network{other("c", 1337)}, `networks "c" and "devnet" have the same chainId 1337`},
	} {
		t.Run(name, func(t *testing.T) {
			s, stop, err := Start(devstack.StackConfig{Networks: c.networks})
			if err == nil {
				stop()
				t.Fatal("the stack started")
			}
			if s != nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Start = %v, %v; want the error %q", s, err, c.want)
			}
		})
	}
	// Nothing started, nothing to close.
	(&devstack.Stack{}).Close()
}

// The dev stack's /metrics has the Temporal SDK's series beside the
// engine's, as production's processes do.
func TestTheStacksMetricsHaveTheTemporalSDKs(t *testing.T) {
	s, stop, err := Start(devstack.StackConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	a, err := api.New(s.Service(0), api.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ts := httptest.NewServer(a.Handler())
	defer ts.Close()
	testwait.Until(t, 30*time.Second, func() (bool, string) {
		metrics := scrape(t, ts.URL+"/metrics")
		return strings.Contains(metrics, "\ntemporal_request") && strings.Contains(metrics, "\ntemporal_workflow_task_"),
			fmt.Sprintf("no temporal_request and temporal_workflow_task_ series on /metrics:\n%s", metrics)
	})
}

func scrape(t *testing.T, url string) string {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, res.StatusCode, err)
	}
	return string(b)
}

// A Temporal port another listener holds stops the start with an error
// that says so, where the server, left to itself, would go on without its
// listener and crash the process.
func TestATakenTemporalPortIsAnError(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	tc, err := devstack.StartTemporal(devstack.TemporalConfig{Port: port})
	if err == nil {
		tc.Stop()
		t.Fatalf("Temporal started on port %d, which another listener holds", port)
	}
	t.Log(err)
	if !strings.Contains(err.Error(), "gRPC listener") || !strings.Contains(err.Error(), fmt.Sprint(port)) {
		t.Fatalf("StartTemporal = %v; want an error on the gRPC listener of port %d", err, port)
	}
}
