package evmrpc

import (
	"context"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
)

// lagging is a stub network of two providers: a 5 blocks behind b, and a
// receipt in a block only b has.
type lagging struct {
	chain   *stubChain
	a, b    *stubNode
	f       *Failover
	receipt common.Hash
}

func newLagging(t *testing.T) *lagging {
	l := &lagging{chain: newStubChain(120)}
	l.receipt = l.chain.addReceipt(103)
	l.a, l.b = newStubNode(t, l.chain, 100), newStubNode(t, l.chain, 105)
	l.f, _ = dialStubs(t, l.a, l.b)
	return l
}

// failOnce makes node fail its next call of method with HTTP 502.
func failOnce(node *stubNode, method string) {
	var done atomic.Bool
	node.setHook(func(m string, _ []json.RawMessage) *stubReply {
		if m == method && done.CompareAndSwap(false, true) {
			return &stubReply{status: http.StatusBadGateway}
		}
		return nil
	})
}

func down(node *stubNode) {
	node.setHook(func(string, []json.RawMessage) *stubReply { return &stubReply{status: http.StatusServiceUnavailable} })
}

// Once b's head was seen, BlockNumber does not go lower when b is down and
// a (5 blocks behind) answers; when b is back, calls go to it again.
func TestBlockNumberNeverGoesBackwards(t *testing.T) {
	ctx := context.Background()
	l := newLagging(t)
	failOnce(l.a, "eth_blockNumber")
	if n, err := l.f.BlockNumber(ctx); err != nil || n != 105 {
		t.Fatalf("BlockNumber from b: %d, %v", n, err)
	}
	down(l.b)
	for range 3 {
		if n, err := l.f.BlockNumber(ctx); err != nil || n != 105 {
			t.Fatalf("BlockNumber with b down: %d, %v; want 105, not a's 100", n, err)
		}
	}
	l.b.setHook(nil)
	l.b.head.Store(106)
	asked := l.a.count("eth_blockNumber")
	if n, err := l.f.BlockNumber(ctx); err != nil || n != 106 {
		t.Fatalf("BlockNumber with b back: %d, %v", n, err)
	}
	if n, err := l.f.BlockNumber(ctx); err != nil || n != 106 || l.a.count("eth_blockNumber") != asked {
		t.Errorf("BlockNumber: %d, %v; a asked %d more times, want calls at b, which is at the head",
			n, err, l.a.count("eth_blockNumber")-asked)
	}
}

// The endpoint that answered is asked first: one behind the other's head
// asks the others for theirs, and the calls move to the highest.
func TestBlockNumberPrefersTheHead(t *testing.T) {
	ctx := context.Background()
	l := newLagging(t)
	failOnce(l.a, "eth_blockNumber")
	if _, err := l.f.BlockNumber(ctx); err != nil { // b: 105
		t.Fatal(err)
	}
	failOnce(l.b, "eth_blockNumber")
	if n, err := l.f.BlockNumber(ctx); err != nil || n != 105 { // a: 100, then b again: 105
		t.Fatalf("BlockNumber: %d, %v", n, err)
	}
	if l.f.current.Load() != 1 {
		t.Errorf("calls go to endpoint %d, want b", l.f.current.Load())
	}
}

// A receipt a lagging endpoint does not have yet is not "not found": the
// call asks the endpoint at the head, even when the lagging one is the
// current one. A receipt no endpoint at the head has is not found; one
// only lagging endpoints were asked for is an error to retry.
func TestNotFoundFromALaggingEndpointIsNotBelieved(t *testing.T) {
	ctx := context.Background()
	l := newLagging(t)
	l.f.MaxLag = 10 // a is not far enough behind to be asked last
	failOnce(l.a, "eth_blockNumber")
	if _, err := l.f.BlockNumber(ctx); err != nil { // b: 105
		t.Fatal(err)
	}
	failOnce(l.b, "eth_blockNumber")
	if n, err := l.f.BlockNumber(ctx); err != nil || n != 105 { // a: 100, still the head returned
		t.Fatalf("BlockNumber: %d, %v", n, err)
	}
	if l.f.current.Load() != 0 {
		t.Fatalf("calls go to endpoint %d, want a", l.f.current.Load())
	}

	r, err := l.f.TransactionReceipt(ctx, l.receipt)
	if err != nil || r.BlockNumber.Uint64() != 103 {
		t.Fatalf("TransactionReceipt: %v, %v; want the receipt in block 103", r, err)
	}
	if l.a.count("eth_getTransactionReceipt") != 1 {
		t.Errorf("a asked %d times, want once (and not believed)", l.a.count("eth_getTransactionReceipt"))
	}

	failOnce(l.b, "eth_blockNumber")
	if _, err := l.f.BlockNumber(ctx); err != nil { // back to a
		t.Fatal(err)
	}
	h, err := l.f.HeaderByNumber(ctx, big.NewInt(103))
	if err != nil || h.Hash() != l.chain.headers[103].Hash() {
		t.Fatalf("HeaderByNumber(103): %v, %v", h, err)
	}

	unknown := common.HexToHash("0x1234")
	if _, err := l.f.TransactionReceipt(ctx, unknown); !errors.Is(err, ethereum.NotFound) {
		t.Errorf("a receipt no endpoint has: %v, want not found", err)
	}

	down(l.b)
	if _, err := l.f.TransactionReceipt(ctx, l.receipt); errors.Is(err, ethereum.NotFound) || !errors.Is(err, errBehind) {
		t.Errorf("with b down: %v, want an error, not a not found", err)
	}
}

// With the default MaxLag, an endpoint 5 blocks behind is asked last.
func TestLaggingEndpointIsAskedLast(t *testing.T) {
	ctx := context.Background()
	l := newLagging(t)
	if _, err := l.f.BlockNumber(ctx); err != nil { // a: 100, behind nothing known yet
		t.Fatal(err)
	}
	failOnce(l.a, "eth_blockNumber")
	if _, err := l.f.BlockNumber(ctx); err != nil { // b: 105
		t.Fatal(err)
	}
	l.f.current.Store(0)
	if _, err := l.f.TransactionReceipt(ctx, l.receipt); err != nil {
		t.Fatal(err)
	}
	if n := l.a.count("eth_getTransactionReceipt"); n != 0 {
		t.Errorf("a asked %d times before b", n)
	}
}
