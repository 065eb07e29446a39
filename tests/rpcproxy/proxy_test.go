package rpcproxy

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/rpc"
)

// node answers eth_blockNumber with 0x10, as a JSON-RPC node would.
func node(t *testing.T) *httptest.Server {
	t.Helper()
	srv := rpc.NewServer()
	if err := srv.RegisterName("eth", ethAPI{}); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return ts
}

type ethAPI struct{}

func (ethAPI) BlockNumber() string { return "0x10" }

func blockNumber(ctx context.Context, url string) (string, error) {
	c, err := rpc.DialContext(ctx, url)
	if err != nil {
		return "", err
	}
	defer c.Close()
	var n string
	err = c.CallContext(ctx, &n, "eth_blockNumber")
	return n, err
}

func TestProxyForwardsFailsAndGoesDown(t *testing.T) {
	p, err := Start(node(t).URL, "", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx := context.Background()

	if n, err := blockNumber(ctx, p.URL); err != nil || n != "0x10" {
		t.Fatalf("through the proxy: %q, %v", n, err)
	}

	p.SetFaults(1, 0, 0)
	for range 10 {
		if _, err := blockNumber(ctx, p.URL); err == nil || !strings.Contains(err.Error(), "injected") &&
			!strings.Contains(err.Error(), "503") {
			t.Fatalf("with every request failing: %v", err)
		}
	}

	p.SetFaults(0, 1, time.Minute)
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := blockNumber(short, p.URL); err == nil {
		t.Fatal("a held request was answered")
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("the held request outlived its caller")
	}

	p.SetFaults(0, 0, 0)
	if err := p.Down(); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(p.URL, "application/json", strings.NewReader(`{}`))
	if err == nil {
		resp.Body.Close()
		t.Fatal("a down proxy answered")
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("down: %v, want connection refused", err)
	}
	if err := p.Up(); err != nil {
		t.Fatal(err)
	}
	if n, err := blockNumber(ctx, p.URL); err != nil || n != "0x10" {
		t.Fatalf("after Up: %q, %v", n, err)
	}

	s := p.Stats()
	if s.Errors != 10 || s.Timeouts != 1 || s.Outages != 1 || s.Down <= 0 || s.Forwarded != 2 {
		t.Fatalf("stats = %+v", s)
	}
}

func TestRPCErrorAnswersEachCallOfABatch(t *testing.T) {
	w := httptest.NewRecorder()
	writeRPCError(w, []byte(`[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","id":"x","method":"b"}]`))
	body, _ := io.ReadAll(w.Result().Body)
	if !strings.Contains(string(body), `"id":1`) || !strings.Contains(string(body), `"id":"x"`) ||
		strings.Count(string(body), "injected") != 2 {
		t.Fatalf("batch answer = %s", body)
	}
}
