package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
	"github.com/paymentsd/paymentsd/internal/version"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service"
	"github.com/paymentsd/paymentsd/store/storetest"
)

// healthyTemporal is a Temporal client whose server answers.
type healthyTemporal struct{ client.Client }

func (healthyTemporal) CheckHealth(context.Context, *client.CheckHealthRequest) (*client.CheckHealthResponse, error) {
	return &client.CheckHealthResponse{}, nil
}

// /readyz says which release answers.
func TestReadinessNamesTheVersion(t *testing.T) {
	s, err := New(service.New(service.Deps{Store: storetest.NewStore(t), Temporal: healthyTemporal{}}), Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	var body struct {
		Data struct{ Status, Version string }
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("GET /readyz: %d %s", rec.Code, rec.Body)
	}
	if body.Data.Status != "ready" || body.Data.Version != version.Version || version.Version == "" {
		t.Fatalf("GET /readyz: %s; want status ready and version %s", rec.Body, version.Version)
	}
}

// rpcNode is a JSON-RPC node of chain chainID at head 0x10 that counts
// the eth_blockNumber calls it answers.
func rpcNode(t *testing.T, chainID int64) (url string, heads *atomic.Int64) {
	heads = new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage
			Method string
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		result := fmt.Sprintf(`"0x%x"`, chainID)
		if req.Method == "eth_blockNumber" {
			heads.Add(1)
			time.Sleep(50 * time.Millisecond) // not a wait: a node that takes its time, so that probes overlap
			result = `"0x10"`
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, result)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, heads
}

// A flood of readiness probes asks each network's node once per
// service.ReadyCacheFor, and every probe still gets the network's head.
func TestReadinessProbesShareOneNodeCall(t *testing.T) {
	url1, heads1 := rpcNode(t, 1337)
	url2, heads2 := rpcNode(t, 1338)
	chains, err := chainwatch.Connect(context.Background(), []chainwatch.Network{
		{Key: "one", ChainID: 1337, RPCURLs: []string{url1}}, {Key: "two", ChainID: 1338, RPCURLs: []string{url2}}}, payment.Catalog{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(service.New(service.Deps{Store: storetest.NewStore(t), Temporal: healthyTemporal{}, Chains: chains}),
		Config{Limits: map[Tier]uint64{Relaxed: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	heads1.Store(0)
	heads2.Store(0)
	start := time.Now()
	var wg sync.WaitGroup
	bad := make(chan string, 200)
	for range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec := httptest.NewRecorder()
			s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
			if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"head":16`) {
				bad <- fmt.Sprintf("%d %s", rec.Code, rec.Body)
			}
		}()
	}
	wg.Wait()
	close(bad)
	for b := range bad {
		t.Fatalf("a probe answered %s; want 200 with both networks' heads", b)
	}
	if time.Since(start) >= service.ReadyCacheFor {
		t.Skip("the probes took longer than the cache window on this machine: the count would prove nothing")
	}
	if n1, n2 := heads1.Load(), heads2.Load(); n1 != 1 || n2 != 1 {
		t.Errorf("200 probes asked the nodes for their head %d and %d times; want once each", n1, n2)
	}
}

// Past its budget, an address's probes are refused with 429 and a
// Retry-After; another address is still answered.
func TestReadinessProbesAreRateLimitedPerAddress(t *testing.T) {
	s, err := New(service.New(service.Deps{Store: storetest.NewStore(t), Temporal: healthyTemporal{}}),
		Config{Limits: map[Tier]uint64{Relaxed: 3}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	probe := func(addr string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, "/readyz", nil)
		req.RemoteAddr = addr
		s.Handler().ServeHTTP(rec, req)
		return rec
	}
	for i := range 3 {
		if rec := probe("192.0.2.7:4000"); rec.Code != http.StatusOK {
			t.Fatalf("probe %d: %d %s; want 200 within the budget", i+1, rec.Code, rec.Body)
		}
	}
	rec := probe("192.0.2.7:4001")
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" ||
		!strings.Contains(rec.Body.String(), "RATE_LIMIT") {
		t.Fatalf("probe 4: %d %q %s; want 429 with Retry-After", rec.Code, rec.Header().Get("Retry-After"), rec.Body)
	}
	if rec := probe("192.0.2.8:4000"); rec.Code != http.StatusOK {
		t.Fatalf("another address: %d; want 200", rec.Code)
	}
}

// With METRICS_ADDR set, /metrics is served there and not on the API's
// address; without it, on the API's address (the dev stack).
func TestMetricsOnTheirOwnAddress(t *testing.T) {
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	metricsAddr := free.Addr().String()
	free.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Deps{Service: service.Deps{Store: storetest.NewStore(t), Temporal: healthyTemporal{}},
			Config: Config{MetricsAddr: metricsAddr}, Listener: ln})
	}()
	defer func() {
		cancel()
		<-done
	}()
	get := func(url string) int {
		code := 0
		testwait.Until(t, 5*time.Second, func() (bool, string) {
			res, err := http.Get(url)
			if err != nil {
				return false, fmt.Sprintf("GET %s: %v", url, err)
			}
			res.Body.Close()
			code = res.StatusCode
			return true, ""
		})
		return code
	}
	if code := get("http://" + metricsAddr + "/metrics"); code != http.StatusOK {
		t.Errorf("GET /metrics on METRICS_ADDR: %d; want 200", code)
	}
	if code := get("http://" + ln.Addr().String() + "/metrics"); code != http.StatusNotFound {
		t.Errorf("GET /metrics on the API's address with METRICS_ADDR set: %d; want 404", code)
	}
	if code := get("http://" + ln.Addr().String() + "/healthz"); code != http.StatusOK {
		t.Errorf("GET /healthz on the API's address: %d; want 200", code)
	}
	s, err := New(nil, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Errorf("GET /metrics on the API's address without METRICS_ADDR: %d; want 200", rec.Code)
	}
}
