package btcrpc_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"

	"github.com/paymentsd/paymentsd/dev/btcnode"
	"github.com/paymentsd/paymentsd/dev/btcnode/btcnodetest"
	"github.com/paymentsd/paymentsd/internal/btcrpc"
)

// On a real node (btcd in regtest): calls go on to the next node while one
// is down, hangs or refuses the credentials, and stay with the node that
// answered; an error the node answers is the call's answer, not a reason
// to move on; a node of another network is refused at start, by its URL
// and never its password.
func TestFailoverOnARealNode(t *testing.T) {
	ctx := context.Background()
	n, _ := btcnodetest.Start(t)
	release := make(chan struct{})
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select { // takes the call and never answers
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer hung.Close()
	defer close(release) // before the server's Close, which waits for its handlers
	down := "http://u:p@127.0.0.1:1"
	wrongPassword := "http://" + n.User + ":not-the-password@" + n.RPCAddr

	f, err := btcrpc.Dial(ctx, []string{down, strings.Replace(hung.URL, "http://", "http://u:p@", 1), wrongPassword, n.URL()}, btcnode.Params)
	if err != nil {
		t.Fatalf("nodes down or hung at start are checked later: %v", err)
	}
	f.CallTimeout = 300 * time.Millisecond
	start := time.Now()
	height, err := f.BlockCount(ctx)
	if err != nil || height < btcnode.SegWitActive {
		t.Fatalf("the block count from the node that answers: %d, %v", height, err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("passing a hung node took %s; the call timeout is 300ms", took)
	}
	calls := f.Calls.Load()
	if _, err := f.BlockHash(ctx, height); err != nil {
		t.Fatal(err)
	}
	if got := f.Calls.Load() - calls; got != 1 {
		t.Errorf("the next call took %d calls; want 1, on the node that answered", got)
	}
	calls = f.Calls.Load()
	if _, err := f.BlockHash(ctx, height+1000); !btcrpc.OutOfRange(err) {
		t.Errorf("a height above the best block: %v; want the node's out-of-range answer", err)
	}
	if got := f.Calls.Load() - calls; got != 1 {
		t.Errorf("the node's own error cost %d calls; want 1: it is the answer, not a reason to ask another node", got)
	}

	alone, err := btcrpc.Dial(ctx, []string{wrongPassword}, btcnode.Params)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alone.BlockCount(ctx); err == nil || !strings.Contains(err.Error(), "refused the credentials") ||
		strings.Contains(err.Error(), "not-the-password") {
		t.Errorf("wrong credentials: %v; want them named as refused, the password not shown", err)
	}

	_, err = btcrpc.Dial(ctx, []string{n.URL()}, &chaincfg.MainNetParams)
	if err == nil || !strings.Contains(err.Error(), "is not on mainnet") || !strings.Contains(err.Error(), n.RPCAddr) ||
		strings.Contains(err.Error(), n.Pass) {
		t.Errorf("a regtest node for mainnet: %v; want it refused by its address, without its password", err)
	}
	if _, err := btcrpc.Dial(ctx, []string{"ftp://node"}, btcnode.Params); err == nil || !strings.Contains(err.Error(), "http(s)://") {
		t.Errorf("an ftp URL: %v", err)
	}
}

// Bitcoin Core answers an error with HTTP 500 (or 404 for an unknown
// method) and the JSON-RPC error in the body: it is the node's answer, with
// its code.
func TestAnErrorInAnHTTP500IsTheNodesAnswer(t *testing.T) {
	core := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"result":null,"error":{"code":-8,"message":"Block height out of range"},"id":1}` + "\n"))
	}))
	defer core.Close()
	c, err := btcrpc.New(core.URL)
	if err != nil {
		t.Fatal(err)
	}
	var hash string
	err = c.Call(context.Background(), &hash, "getblockhash", 1_000_000)
	if !btcrpc.OutOfRange(err) || !strings.Contains(err.Error(), "Block height out of range") {
		t.Errorf("Core's out-of-range answer: %v", err)
	}
}
