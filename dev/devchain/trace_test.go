package devchain

import (
	"context"
	"encoding/json"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/paymentsd/paymentsd/dev/contracts/bindings"
)

// callFrame is the part of a callTracer frame the tests read.
type callFrame struct {
	Type  string          `json:"type"`
	From  common.Address  `json:"from"`
	To    *common.Address `json:"to"`
	Value *hexutil.Big    `json:"value"`
	Error string          `json:"error"`
	Calls []callFrame     `json:"calls"`
}

// blockTrace is one transaction's entry in debug_traceBlockByNumber.
type blockTrace struct {
	TxHash common.Hash `json:"txHash"`
	Result callFrame   `json:"result"`
	Error  string      `json:"error"`
}

var callTracer = map[string]any{"tracer": "callTracer"}

// dialRPC connects to the chain's HTTP endpoint with a bare JSON-RPC
// client, as the engine reads traces.
func dialRPC(t *testing.T, ctx context.Context, c *Chain) *rpc.Client {
	t.Helper()
	rc, err := rpc.DialContext(ctx, c.URL)
	if err != nil {
		t.Fatalf("dial %s: %v", c.URL, err)
	}
	t.Cleanup(rc.Close)
	return rc
}

// checkInternalPayment checks, over HTTP, that the mined transaction r
// called contract, which paid wei to to by an internal CALL: in the
// transaction's trace and in its block's, and in to's balance.
func checkInternalPayment(t *testing.T, ctx context.Context, rc *rpc.Client, r *types.Receipt, contract, to common.Address, wei *big.Int) {
	t.Helper()
	ec := ethclient.NewClient(rc)
	before, err := ec.BalanceAt(ctx, to, new(big.Int).Sub(r.BlockNumber, big.NewInt(1)))
	if err != nil {
		t.Fatal(err)
	}
	after, err := ec.BalanceAt(ctx, to, r.BlockNumber)
	if err != nil {
		t.Fatal(err)
	}
	if rose := new(big.Int).Sub(after, before); rose.Cmp(wei) != 0 {
		t.Errorf("%s's balance rose by %s wei in block %s, want %s", to, rose, r.BlockNumber, wei)
	}

	var top callFrame
	if err := rc.CallContext(ctx, &top, "debug_traceTransaction", r.TxHash, callTracer); err != nil {
		t.Fatalf("debug_traceTransaction: %v", err)
	}
	checkFrame(t, "debug_traceTransaction", top, contract, to, wei)

	var raw json.RawMessage
	if err := rc.CallContext(ctx, &raw, "debug_traceBlockByNumber", hexutil.EncodeBig(r.BlockNumber), callTracer); err != nil {
		t.Fatalf("debug_traceBlockByNumber: %v", err)
	}
	t.Logf("debug_traceBlockByNumber(%s): %s", hexutil.EncodeBig(r.BlockNumber), raw)
	var block []blockTrace
	if err := json.Unmarshal(raw, &block); err != nil {
		t.Fatalf("debug_traceBlockByNumber: %v", err)
	}
	var found bool
	for _, tr := range block {
		if tr.TxHash == r.TxHash {
			if tr.Error != "" {
				t.Fatalf("debug_traceBlockByNumber: %s: %s", tr.TxHash, tr.Error)
			}
			checkFrame(t, "debug_traceBlockByNumber", tr.Result, contract, to, wei)
			found = true
		}
	}
	if !found {
		t.Errorf("debug_traceBlockByNumber: no trace of %s among %d", r.TxHash, len(block))
	}
}

// checkFrame checks that top is a call of contract with a CALL paying wei
// to to among its calls.
func checkFrame(t *testing.T, method string, top callFrame, contract, to common.Address, wei *big.Int) {
	t.Helper()
	if top.Type != "CALL" || top.To == nil || *top.To != contract || top.Error != "" {
		t.Fatalf("%s: top call is %s to %v (%q), want a CALL to %s", method, top.Type, top.To, top.Error, contract)
	}
	for _, in := range top.Calls {
		if in.Type == "CALL" && in.From == contract && in.To != nil && *in.To == to &&
			in.Value != nil && in.Value.ToInt().Cmp(wei) == 0 && in.Error == "" {
			return
		}
	}
	t.Errorf("%s: no CALL of %s paying %s wei to %s among %+v", method, contract, wei, to, top.Calls)
}

// Native coin paid to an address by a contract wallet's internal call
// shows in the debug tracing API's callTracer frames served over HTTP,
// both for the transaction and for its block.
func TestTraceInternalNativePayments(t *testing.T) {
	t.Parallel()
	c, ctx := startChain(t, Config{Accounts: 2})
	owner, other := c.Accounts[0], c.Accounts[1]
	fw := bindings.NewDevForwarder()
	rc := dialRPC(t, ctx, c)

	wallet, h, err := c.Deploy(ctx, owner, common.FromHex(bindings.DevForwarderMetaData.Bin))
	if err != nil {
		t.Fatal(err)
	}
	mustReceipt(t, ctx, c, h)

	t.Run("forward", func(t *testing.T) {
		to, wei := freshAddress(t), big.NewInt(1_234_567_890_000)
		// Anyone may forward.
		h, err := c.Transact(ctx, other, wallet, wei, fw.PackForward(to))
		if err != nil {
			t.Fatal(err)
		}
		checkInternalPayment(t, ctx, rc, mustReceipt(t, ctx, c, h), wallet, to, wei)
	})

	t.Run("execute", func(t *testing.T) {
		to, wei := freshAddress(t), big.NewInt(7e15)
		h, err := c.TransferNative(ctx, owner, wallet, ether(1))
		if err != nil {
			t.Fatal(err)
		}
		mustReceipt(t, ctx, c, h)
		if _, err := c.Transact(ctx, other, wallet, nil, fw.PackExecute(to, wei, nil)); err == nil ||
			!strings.Contains(err.Error(), "not the owner") {
			t.Fatalf("execute by another account = %v, want refused", err)
		}
		h, err = c.Transact(ctx, owner, wallet, nil, fw.PackExecute(to, wei, nil))
		if err != nil {
			t.Fatal(err)
		}
		checkInternalPayment(t, ctx, rc, mustReceipt(t, ctx, c, h), wallet, to, wei)
		if bal, err := c.Client().BalanceAt(ctx, wallet, nil); err != nil || bal.Cmp(new(big.Int).Sub(ether(1), wei)) != 0 {
			t.Errorf("the wallet holds %v wei (%v), want 1 ETH less what it paid", bal, err)
		}
	})
}
