package evmrpc

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	dto "github.com/prometheus/client_model/go"

	"github.com/paymentsd/paymentsd/internal/observability"
)

// The tests below run Failover against stub providers: HTTP servers that
// speak JSON-RPC the way geth does (blocks, receipts and logs encoded by
// go-ethereum's own types), with each provider's refusals and lags.

// stubChain is the chain the stub providers serve: headers 0..len-1 linked
// by hash, Transfer logs in every block, and receipts.
type stubChain struct {
	headers  []*types.Header
	logs     map[uint64][]types.Log
	receipts map[common.Hash]*types.Receipt
}

var stubToken = common.HexToAddress("0x00000000000000000000000000000000000000aa")

func newStubChain(last uint64) *stubChain {
	c := &stubChain{logs: map[uint64][]types.Log{}, receipts: map[common.Hash]*types.Receipt{}}
	parent := common.Hash{}
	for n := range last + 1 {
		h := &types.Header{ParentHash: parent, Number: new(big.Int).SetUint64(n), Time: 1_700_000_000 + 12*n,
			Difficulty: new(big.Int), GasLimit: 30_000_000, BaseFee: big.NewInt(1_000_000_000),
			UncleHash: types.EmptyUncleHash, TxHash: types.EmptyTxsHash, ReceiptHash: types.EmptyReceiptsHash}
		c.headers = append(c.headers, h)
		parent = h.Hash()
		// One Transfer in odd blocks, two in even ones, none in genesis.
		for k := range (1 + n%2) * min(n, 1) {
			var id [16]byte
			binary.BigEndian.PutUint64(id[:8], n)
			binary.BigEndian.PutUint64(id[8:], k)
			amount := common.BigToHash(big.NewInt(int64(1000*n + k)))
			c.logs[n] = append(c.logs[n], types.Log{Address: stubToken,
				Topics: []common.Hash{transferTopic, common.BytesToHash([]byte{1}), common.BytesToHash([]byte{2})},
				Data:   amount.Bytes(), BlockNumber: n, TxHash: crypto.Keccak256Hash(id[:]), TxIndex: uint(k),
				BlockHash: h.Hash(), BlockTimestamp: h.Time, Index: uint(k)})
		}
	}
	return c
}

// logsIn returns the logs of blocks from..to, in order.
func (c *stubChain) logsIn(from, to uint64) []types.Log {
	var out []types.Log
	for n := from; n <= to; n++ {
		out = append(out, c.logs[n]...)
	}
	return out
}

// addReceipt records a successful transaction mined in block n.
func (c *stubChain) addReceipt(n uint64) common.Hash {
	h := crypto.Keccak256Hash([]byte(fmt.Sprintf("tx in block %d", n)))
	c.receipts[h] = &types.Receipt{Type: types.DynamicFeeTxType, Status: types.ReceiptStatusSuccessful,
		CumulativeGasUsed: 21000, Logs: []*types.Log{}, TxHash: h, GasUsed: 21000, EffectiveGasPrice: big.NewInt(1_000_000_000),
		BlockHash: c.headers[n].Hash(), BlockNumber: new(big.Int).SetUint64(n)}
	return h
}

// stubReply is a stub provider's answer: an HTTP status (200 when zero),
// headers, and a JSON-RPC result or error.
type stubReply struct {
	status int
	header http.Header
	result any
	err    *stubError
}

type stubError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

// stubNode is one provider over a stubChain, at head. A hook sees every
// request first and answers those it returns a reply for.
type stubNode struct {
	chain *stubChain
	srv   *httptest.Server
	head  atomic.Uint64

	mu    sync.Mutex
	calls map[string]int
	hook  func(method string, params []json.RawMessage) *stubReply
}

func newStubNode(t *testing.T, chain *stubChain, head uint64) *stubNode {
	n := &stubNode{chain: chain, calls: map[string]int{}}
	n.head.Store(head)
	n.srv = httptest.NewServer(n)
	t.Cleanup(n.srv.Close)
	return n
}

func (n *stubNode) setHook(h func(method string, params []json.RawMessage) *stubReply) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.hook = h
}

func (n *stubNode) count(method string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.calls[method]
}

func (n *stubNode) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ID     json.RawMessage   `json:"id"`
		Method string            `json:"method"`
		Params []json.RawMessage `json:"params"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	n.mu.Lock()
	n.calls[req.Method]++
	hook := n.hook
	n.mu.Unlock()
	var rep *stubReply
	if hook != nil {
		rep = hook(req.Method, req.Params)
	}
	if rep == nil {
		rep = n.answer(req.Method, req.Params)
	}
	for k, v := range rep.header {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(max(rep.status, http.StatusOK))
	msg := map[string]any{"jsonrpc": "2.0", "id": req.ID}
	if rep.err != nil {
		msg["error"] = rep.err
	} else {
		msg["result"] = rep.result
	}
	_ = json.NewEncoder(w).Encode(msg)
}

// answer is what a node at head answers, as geth would: null for a block
// or receipt it does not have, and only the logs of the blocks it has.
func (n *stubNode) answer(method string, params []json.RawMessage) *stubReply {
	head := n.head.Load()
	switch method {
	case "eth_chainId":
		return &stubReply{result: hexutil.Uint64(1337)}
	case "eth_blockNumber":
		return &stubReply{result: hexutil.Uint64(head)}
	case "eth_getBlockByNumber":
		var arg string
		_ = json.Unmarshal(params[0], &arg)
		num := head
		if arg != "latest" {
			v, err := hexutil.DecodeUint64(arg)
			if err != nil {
				return &stubReply{err: &stubError{Code: -32602, Message: err.Error()}}
			}
			num = v
		}
		if num > head || num >= uint64(len(n.chain.headers)) {
			return &stubReply{}
		}
		return &stubReply{result: blockJSON(n.chain.headers[num])}
	case "eth_getTransactionReceipt":
		var h common.Hash
		_ = json.Unmarshal(params[0], &h)
		if r, ok := n.chain.receipts[h]; ok && r.BlockNumber.Uint64() <= head {
			return &stubReply{result: r}
		}
		return &stubReply{}
	case "eth_getLogs":
		from, to := logRangeOf(params)
		return &stubReply{result: orEmpty(n.chain.logsIn(from, min(to, head)))}
	}
	return &stubReply{err: &stubError{Code: -32601, Message: fmt.Sprintf("the method %s does not exist/is not available", method)}}
}

// blockJSON is a block without transactions as eth_getBlockByNumber
// returns it: the header's fields (absent ones left out) and its hash.
func blockJSON(h *types.Header) map[string]any {
	b, _ := json.Marshal(h)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	for k, v := range m {
		if v == nil {
			delete(m, k)
		}
	}
	m["transactions"] = []any{}
	m["uncles"] = []any{}
	m["size"] = "0x220"
	return m
}

func orEmpty(logs []types.Log) []types.Log {
	if logs == nil {
		return []types.Log{}
	}
	return logs
}

// logRangeOf reads an eth_getLogs call's fromBlock and toBlock.
func logRangeOf(params []json.RawMessage) (from, to uint64) {
	var q struct {
		FromBlock hexutil.Uint64 `json:"fromBlock"`
		ToBlock   hexutil.Uint64 `json:"toBlock"`
	}
	_ = json.Unmarshal(params[0], &q)
	return uint64(q.FromBlock), uint64(q.ToBlock)
}

// fakeClock is the Failover's clock in the tests: a pause moves it on at
// once and is recorded.
type fakeClock struct {
	mu     sync.Mutex
	t      time.Time
	pauses []time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	c.pauses = append(c.pauses, d)
	return nil
}

func (c *fakeClock) slept() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.pauses...)
}

// dialStubs dials the nodes in order, on a fake clock, with its own
// network name in the metrics.
func dialStubs(t *testing.T, nodes ...*stubNode) (*Failover, *fakeClock) {
	t.Helper()
	var urls []string
	for _, n := range nodes {
		urls = append(urls, n.srv.URL)
	}
	f, err := Dial(context.Background(), 1337, urls, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	f.now, f.sleep = clock.Now, clock.Sleep
	f.Network = fmt.Sprintf("test/%s/%d", t.Name(), testNetworks.Add(1))
	return f, clock
}

// testNetworks numbers the tests' networks, so that each reads its own
// metrics when the tests run again (-count).
var testNetworks atomic.Int64

// counted reads paymentsd_rpc_requests_total for a network and outcome.
func counted(t *testing.T, f *Failover, outcome string) float64 {
	t.Helper()
	var m dto.Metric
	if err := observability.RPCRequests.WithLabelValues(f.Network, outcome).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// sameLogs compares logs by block, hash, index and transaction.
func sameLogs(got, want []types.Log) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d logs, want %d", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.BlockNumber != w.BlockNumber || g.BlockHash != w.BlockHash || g.Index != w.Index || g.TxHash != w.TxHash {
			return fmt.Errorf("log %d is block %d #%d, want block %d #%d", i, g.BlockNumber, g.Index, w.BlockNumber, w.Index)
		}
	}
	return nil
}

func logQuery(from, to uint64) ethereum.FilterQuery {
	return ethereum.FilterQuery{FromBlock: new(big.Int).SetUint64(from), ToBlock: new(big.Int).SetUint64(to),
		Addresses: []common.Address{stubToken}, Topics: [][]common.Hash{{transferTopic}}}
}

// Calls made at once over rate-limited, refusing and lagging endpoints
// share the Failover's state safely (run with -race).
func TestFailoverConcurrentCalls(t *testing.T) {
	ctx := context.Background()
	l := newLagging(t)
	if _, err := l.f.BlockNumber(ctx); err != nil { // both heads known
		t.Fatal(err)
	}
	var n atomic.Int64
	l.b.setHook(func(m string, params []json.RawMessage) *stubReply {
		switch {
		case n.Add(1)%7 == 0:
			return &stubReply{status: http.StatusTooManyRequests, header: http.Header{"Retry-After": {"1"}}}
		case m == "eth_getLogs":
			if from, to := logRangeOf(params); to-from+1 > 8 {
				return &stubReply{err: &stubError{Code: -32005, Message: "query returned more than 10000 results"}}
			}
		}
		return nil
	})
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for range 8 {
		wg.Go(func() {
			for range 5 {
				if _, err := l.f.BlockNumber(ctx); err != nil {
					errs <- err
				}
				if _, err := l.f.TransactionReceipt(ctx, l.receipt); err != nil {
					errs <- err
				}
				if _, err := l.f.FilterLogs(ctx, logQuery(1, 60)); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// transferTopic is the topic of ERC-20 Transfer(address,address,uint256),
// which the stub chain's logs carry.
var transferTopic = crypto.Keccak256Hash([]byte("Transfer(address,address,uint256)"))
