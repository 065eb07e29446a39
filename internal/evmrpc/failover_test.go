package evmrpc

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/rpc"
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

// refusal is how a provider refuses an eth_getLogs over more than limit
// blocks (or, for the result-count wordings, with too many logs): the
// message is built from the refused range and the limit.
type refusal struct {
	provider string
	status   int // HTTP status, 200 when zero
	code     int
	message  func(from, to, limit uint64) string
	data     func(from, to, limit uint64) any
}

// The refusals as providers word them. Sources: go-ethereum's
// eth/filters (the range limit); ponder-sh/ponder's getLogsRetryHelper
// tests, which record live answers of Alchemy, Infura, QuickNode, Ankr,
// BlockPI, Chainstack, Cloudflare, Coinbase, PublicNode, LlamaRPC,
// Arbitrum, OP Mainnet, Hyperliquid, Blast, 1RPC, thirdweb, Merkle and
// Avalanche; INFURA/infura#237 (Infura's range limit);
// OffchainLabs/arbitrum-sdk#609 (QuickNode's HTTP 413);
// boundless-xyz/boundless#838 (Alchemy's HTTP 400); enviodev/hyperindex#605
// (Morph); moonbeam-foundation/moonbeam#3250 (Frontier);
// AlphaWallet/alpha-wallet-ios#5277 (Candle); scroll-tech/go-ethereum#529.
var refusals = []refusal{
	{provider: "geth --rpc.rangelimit", code: -32602,
		message: func(_, _, n uint64) string { return fmt.Sprintf("exceed maximum block range %d", n) }},
	{provider: "Infura, result count", code: -32005,
		message: func(from, _, n uint64) string {
			return fmt.Sprintf("query returned more than 10000 results. Try with this block range [0x%X, 0x%X].", from, from+n-1)
		},
		data: func(from, to, _ uint64) any {
			return map[string]any{"from": hexutil.EncodeUint64(from), "limit": 10000, "to": hexutil.EncodeUint64(to)}
		}},
	{provider: "Infura, block range", code: -32602,
		message: func(from, to, n uint64) string { return fmt.Sprintf("range %d exceeds limit of %d", to-from, n) }},
	{provider: "Alchemy, response size", code: -32602,
		message: func(from, _, n uint64) string {
			return fmt.Sprintf("Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, "+
				"or you can request any block range with a cap of 10K logs in the response. Based on your parameters and the response size limit, "+
				"this block range should work: [0x%x, 0x%x]", from, from+n-1)
		}},
	{provider: "Alchemy, block range over HTTP 400", status: http.StatusBadRequest, code: -32600,
		message: func(from, _, n uint64) string {
			return fmt.Sprintf("You can make eth_getLogs requests with up to a %d block range. Based on your parameters, this block range should work: [0x%x, 0x%x]",
				n, from, from+n-1)
		}},
	{provider: "QuickNode over HTTP 413", status: http.StatusRequestEntityTooLarge, code: -32614,
		message: func(_, _, n uint64) string { return fmt.Sprintf("eth_getLogs is limited to a %d range", n) }},
	{provider: "1RPC", code: -32000,
		message: func(_, _, n uint64) string { return fmt.Sprintf("eth_getLogs is limited to a %d blocks range", n) }},
	{provider: "BlockPI", code: -32602,
		message: func(_, _, n uint64) string { return fmt.Sprintf("eth_getLogs is limited to %d block range", n) }},
	{provider: "Ankr", code: -32600, message: func(_, _, _ uint64) string { return "block range is too wide" }},
	{provider: "Frontier (Moonbeam)", code: -32603,
		message: func(_, _, n uint64) string { return fmt.Sprintf("block range is too wide (maximum %d)", n) }},
	{provider: "Chainstack", code: -32602, message: func(_, _, _ uint64) string { return "Block range limit exceeded." }},
	{provider: "PublicNode, BSC", code: -32000,
		message: func(_, _, n uint64) string { return fmt.Sprintf("exceed maximum block range: %d", n) }},
	{provider: "LlamaRPC", code: -32602,
		message: func(from, _, n uint64) string {
			return fmt.Sprintf("query exceeds max results 20000, retry with the range %d-%d", from, from+n-1)
		}},
	{provider: "Cloudflare", code: -32047,
		message: func(_, _, n uint64) string {
			return fmt.Sprintf("Invalid eth_getLogs request. 'fromBlock'-'toBlock' range too large. Max range: %d", n)
		}},
	{provider: "Coinbase (Base), a -32005 that is no rate limit", code: -32005,
		message: func(_, _, n uint64) string { return fmt.Sprintf("please limit the query to at most %d blocks", n) }},
	{provider: "Arbitrum", code: -32000, message: func(_, _, _ uint64) string { return "logs matched by query exceeds limit of 10000" }},
	{provider: "OP Mainnet", code: -32000, message: func(_, _, _ uint64) string { return "Block range is too large" }},
	{provider: "Base", code: -32000, message: func(_, _, _ uint64) string { return "block range too large" }},
	{provider: "Hyperliquid", code: -32000,
		message: func(_, _, n uint64) string { return fmt.Sprintf("query exceeds max block range %d", n) }},
	{provider: "Blast API, paid plan", code: -32000,
		message: func(from, to, n uint64) string {
			return fmt.Sprintf("exceeds the range allowed for your plan (%d > %d)", to-from+1, n)
		}},
	{provider: "thirdweb, reason in data", code: -32602, message: func(_, _, _ uint64) string { return "invalid params" },
		data: func(from, to, n uint64) any { return fmt.Sprintf("range %d is bigger than range limit %d", to-from, n) }},
	{provider: "dRPC free tier", code: 35,
		message: func(_, _, n uint64) string {
			return fmt.Sprintf("ranges over %d blocks are not supported on freetier", n)
		}},
	{provider: "Avalanche C-Chain", code: -32000,
		message: func(from, to, n uint64) string {
			return fmt.Sprintf("requested too many blocks from %d to %d, maximum is set to %d", from, to, n)
		}},
	{provider: "Morph", code: -32000,
		message: func(from, to, n uint64) string {
			return fmt.Sprintf("block range is larger than max block range, block range = %d, max block range = %d", to-from, n)
		}},
	{provider: "Candle", code: -32600, message: func(_, _, _ uint64) string { return "block range too high" }},
	{provider: "Scroll", code: -32000, message: func(_, _, _ uint64) string { return "block range is bigger than maxBlockRange" }},
	{provider: "1RPC, response size", code: -32000,
		message: func(_, _, _ uint64) string { return "response size should not greater than 10000000 bytes" }},
}

// refuseOver makes node refuse, in r's words, every eth_getLogs over more
// than limit blocks while refusing is true; it counts the calls, the
// refusals and the widest range asked.
type refuser struct {
	calls, refused, widest atomic.Uint64
	refusing               atomic.Bool
}

func refuseOver(node *stubNode, r refusal, limit uint64) *refuser {
	rf := &refuser{}
	rf.refusing.Store(true)
	node.setHook(func(method string, params []json.RawMessage) *stubReply {
		if method != "eth_getLogs" {
			return nil
		}
		rf.calls.Add(1)
		from, to := logRangeOf(params)
		for w := rf.widest.Load(); to-from+1 > w && !rf.widest.CompareAndSwap(w, to-from+1); w = rf.widest.Load() {
		}
		if !rf.refusing.Load() || to-from+1 <= limit {
			return nil
		}
		rf.refused.Add(1)
		e := &stubError{Code: r.code, Message: r.message(from, to, limit)}
		if r.data != nil {
			e.Data = r.data(from, to, limit)
		}
		return &stubReply{status: r.status, err: e}
	})
	return rf
}

// A provider that refuses eth_getLogs over more than 10 blocks, in any of
// the wordings providers use, still yields every log of a 100-block range,
// in order, in a bounded number of calls; the next range is asked in
// parts that provider accepts from the start.
func TestFilterLogsSplitsRefusedRanges(t *testing.T) {
	const limit = 10
	chain := newStubChain(130)
	for _, r := range refusals {
		t.Run(r.provider, func(t *testing.T) {
			node := newStubNode(t, chain, 130)
			rf := refuseOver(node, r, limit)
			f, _ := dialStubs(t, node)
			f.LogSpanGrowAfter = 1000 // see TestFilterLogsSpanGrowsBack
			ctx := context.Background()

			logs, err := f.FilterLogs(ctx, logQuery(1, 100))
			if err != nil {
				t.Fatalf("FilterLogs: %v", err)
			}
			if err := sameLogs(logs, chain.logsIn(1, 100)); err != nil {
				t.Fatal(err)
			}
			// Halving finds a span of at least limit/2 in log2(100/limit)+1
			// refusals; a stated limit takes one.
			if calls := rf.calls.Load(); calls > 5+100/(limit/2) {
				t.Errorf("%d eth_getLogs calls (%d refused) for 100 blocks", calls, rf.refused.Load())
			}
			if counted(t, f, "range_refused") != float64(rf.refused.Load()) || counted(t, f, "rate_limited") != 0 {
				t.Errorf("metrics: %v range_refused, %v rate_limited; %d refusals", counted(t, f, "range_refused"),
					counted(t, f, "rate_limited"), rf.refused.Load())
			}

			refused := rf.refused.Load()
			logs, err = f.FilterLogs(ctx, logQuery(101, 130))
			if err != nil {
				t.Fatalf("the next range: %v", err)
			}
			if err := sameLogs(logs, chain.logsIn(101, 130)); err != nil {
				t.Fatalf("the next range: %v", err)
			}
			if rf.refused.Load() != refused {
				t.Errorf("the next range was refused %d more times: the span that works is not remembered", rf.refused.Load()-refused)
			}
		})
	}
}

// A span cut for the result count grows back, doubling after
// LogSpanGrowAfter successes, but never past the range asked; one cut to a
// block-range limit the provider stated never grows past it.
func TestFilterLogsSpanGrowsBack(t *testing.T) {
	chain := newStubChain(100)
	ctx := context.Background()

	t.Run("a result-count refusal", func(t *testing.T) {
		node := newStubNode(t, chain, 100)
		rf := refuseOver(node, refusals[1], 10) // Infura's "query returned more than 10000 results"
		f, _ := dialStubs(t, node)
		f.LogSpanGrowAfter = 2
		if _, err := f.FilterLogs(ctx, logQuery(1, 100)); err != nil {
			t.Fatal(err)
		}
		rf.refusing.Store(false) // the busy blocks are past
		prev := rf.calls.Load()
		var per []uint64
		for range 6 {
			rf.widest.Store(0)
			logs, err := f.FilterLogs(ctx, logQuery(1, 100))
			if err != nil {
				t.Fatal(err)
			}
			if err := sameLogs(logs, chain.logsIn(1, 100)); err != nil {
				t.Fatal(err)
			}
			per = append(per, rf.calls.Load()-prev)
			prev = rf.calls.Load()
			if rf.widest.Load() > 100 {
				t.Fatalf("a call spanned %d blocks, more than the 100 asked", rf.widest.Load())
			}
		}
		if per[len(per)-1] != 1 || per[0] <= per[1] {
			t.Errorf("calls per 100-block range as the span grows back: %v, want fewer each time down to 1", per)
		}
	})

	t.Run("a stated block-range limit", func(t *testing.T) {
		node := newStubNode(t, chain, 100)
		rf := refuseOver(node, refusals[13], 10) // Cloudflare's "Max range: 10"
		f, _ := dialStubs(t, node)
		f.LogSpanGrowAfter = 1
		for range 3 {
			if _, err := f.FilterLogs(ctx, logQuery(1, 100)); err != nil {
				t.Fatal(err)
			}
		}
		if rf.refused.Load() != 1 {
			t.Errorf("%d refusals: the span grew past the limit the provider stated", rf.refused.Load())
		}
	})
}

// A single block refused is an error, not an endless split; the caller
// sees the provider's words.
func TestFilterLogsSingleBlockRefused(t *testing.T) {
	chain := newStubChain(10)
	node := newStubNode(t, chain, 10)
	rf := refuseOver(node, refusals[1], 0)
	f, _ := dialStubs(t, node)
	_, err := f.FilterLogs(context.Background(), logQuery(1, 8))
	if err == nil || !strings.Contains(err.Error(), "block 1 alone") || !strings.Contains(err.Error(), "query returned more than 10000 results") {
		t.Fatalf("FilterLogs: %v", err)
	}
	if rf.calls.Load() != 4 { // 8, 4, 2, 1 blocks
		t.Errorf("%d calls, want 4", rf.calls.Load())
	}
}

// tooMany answers the first n calls of method with HTTP 429, Retry-After
// retryAfter (none when empty) and Alchemy's JSON-RPC error.
func tooMany(node *stubNode, method string, n int, retryAfter func() string) *atomic.Int64 {
	var seen atomic.Int64
	node.setHook(func(m string, _ []json.RawMessage) *stubReply {
		if m != method || seen.Add(1) > int64(n) {
			return nil
		}
		rep := &stubReply{status: http.StatusTooManyRequests, err: &stubError{Code: 429,
			Message: "Your app has exceeded its compute units per second capacity. If you have retries enabled, you can safely ignore this message. If not, check out https://docs.alchemy.com/reference/throughput"}}
		if v := retryAfter(); v != "" {
			rep.header = http.Header{"Retry-After": {v}}
		}
		return rep
	})
	return &seen
}

// An endpoint that answers 429 is benched until its Retry-After and the
// call moves to the next one; the benched endpoint is not asked again
// before its time, even when the other fails; with one endpoint the call
// waits for it, and without a Retry-After it backs off exponentially.
func TestRateLimitedEndpointIsBenched(t *testing.T) {
	ctx := context.Background()
	chain := newStubChain(50)

	t.Run("the call moves on, and the benched endpoint waits for its time", func(t *testing.T) {
		a, b := newStubNode(t, chain, 50), newStubNode(t, chain, 50)
		tooMany(a, "eth_blockNumber", 1, func() string { return "5" })
		f, clock := dialStubs(t, a, b)
		start := clock.Now()
		if n, err := f.BlockNumber(ctx); err != nil || n != 50 {
			t.Fatalf("BlockNumber: %d, %v", n, err)
		}
		if a.count("eth_blockNumber") != 1 || b.count("eth_blockNumber") != 1 {
			t.Fatalf("calls: a %d, b %d", a.count("eth_blockNumber"), b.count("eth_blockNumber"))
		}
		if counted(t, f, "rate_limited") != 1 {
			t.Errorf("rate_limited counted %v times", counted(t, f, "rate_limited"))
		}
		// b fails now: the call waits for a's Retry-After rather than
		// asking it early or failing.
		var mu sync.Mutex
		var aAsked []time.Time
		a.setHook(func(m string, _ []json.RawMessage) *stubReply {
			if m == "eth_blockNumber" {
				mu.Lock()
				aAsked = append(aAsked, clock.Now())
				mu.Unlock()
			}
			return nil
		})
		b.setHook(func(string, []json.RawMessage) *stubReply {
			return &stubReply{status: http.StatusBadGateway}
		})
		if n, err := f.BlockNumber(ctx); err != nil || n != 50 {
			t.Fatalf("BlockNumber with b failing: %d, %v", n, err)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(aAsked) != 1 || aAsked[0].Before(start.Add(5*time.Second)) {
			t.Errorf("a asked at %v, want once, 5s after %v", aAsked, start)
		}
		if p := clock.slept(); len(p) != 1 || p[0] != 5*time.Second {
			t.Errorf("waited %v, want 5s", p)
		}
	})

	t.Run("one endpoint: the call waits and succeeds", func(t *testing.T) {
		for _, form := range []string{"seconds", "HTTP-date"} {
			a := newStubNode(t, chain, 50)
			f, clock := dialStubs(t, a)
			tooMany(a, "eth_blockNumber", 1, func() string {
				if form == "seconds" {
					return "3"
				}
				return clock.Now().Add(3 * time.Second).UTC().Format(http.TimeFormat)
			})
			if n, err := f.BlockNumber(ctx); err != nil || n != 50 {
				t.Fatalf("%s: BlockNumber: %d, %v", form, n, err)
			}
			if p := clock.slept(); len(p) != 1 || p[0] != 3*time.Second {
				t.Errorf("%s: waited %v, want 3s", form, p)
			}
			if a.count("eth_blockNumber") != 2 {
				t.Errorf("%s: %d calls, want 2", form, a.count("eth_blockNumber"))
			}
		}
	})

	t.Run("a 503 with a Retry-After benches the endpoint too", func(t *testing.T) {
		a := newStubNode(t, chain, 50)
		var seen atomic.Int64
		a.setHook(func(m string, _ []json.RawMessage) *stubReply {
			if m == "eth_blockNumber" && seen.Add(1) == 1 {
				return &stubReply{status: http.StatusServiceUnavailable, header: http.Header{"Retry-After": {"4"}}}
			}
			return nil
		})
		f, clock := dialStubs(t, a)
		if n, err := f.BlockNumber(ctx); err != nil || n != 50 {
			t.Fatalf("BlockNumber: %d, %v", n, err)
		}
		if p := clock.slept(); len(p) != 1 || p[0] != 4*time.Second {
			t.Errorf("waited %v, want 4s", p)
		}
	})

	t.Run("no Retry-After: exponential backoff with jitter", func(t *testing.T) {
		a := newStubNode(t, chain, 50)
		tooMany(a, "eth_blockNumber", 4, func() string { return "" })
		f, clock := dialStubs(t, a)
		if n, err := f.BlockNumber(ctx); err != nil || n != 50 {
			t.Fatalf("BlockNumber: %d, %v", n, err)
		}
		p := clock.slept()
		if len(p) != 4 {
			t.Fatalf("waited %v, want 4 times", p)
		}
		for i, d := range p {
			nominal := time.Second << i
			if d > nominal || d < nominal*3/4 {
				t.Errorf("wait %d: %v, want within [%v, %v]", i+1, d, nominal*3/4, nominal)
			}
		}
		// A success starts the backoff over.
		tooMany(a, "eth_blockNumber", 1, func() string { return "" })
		if _, err := f.BlockNumber(ctx); err != nil {
			t.Fatal(err)
		}
		if p := clock.slept(); p[len(p)-1] > time.Second {
			t.Errorf("after a success the backoff is %v, want 1s again", p[len(p)-1])
		}
	})

	t.Run("JSON-RPC rate-limit errors count too", func(t *testing.T) {
		cases := []struct {
			name string
			err  stubError
			want time.Duration // 0: the backoff
		}{
			{"Infura's backoff_seconds", stubError{Code: -32005, Message: "project ID request rate exceeded",
				Data: map[string]any{"see": "https://infura.io/dashboard", "current_rps": 13.333, "allowed_rps": 10.0, "backoff_seconds": 30.0}}, 30 * time.Second},
			{"Infura's, nested", stubError{Code: -32005, Message: "exceeded project rate limit",
				Data: map[string]any{"rate": map[string]any{"allowed_rps": 5, "backoff_seconds": 7, "current_rps": 5.2}, "see": "https://infura.io/dashboard"}}, 7 * time.Second},
			{"Base's public node", stubError{Code: -32016, Message: "over rate limit"}, 0},
			{"Tenderly", stubError{Code: -32005, Message: "rate limit exceeded"}, 0},
			{"QuickNode", stubError{Code: -32007, Message: "15/second request limit reached - reduce calls per second or upgrade your account at quicknode.com"}, 0},
		}
		for _, c := range cases {
			a := newStubNode(t, chain, 50)
			var seen atomic.Int64
			a.setHook(func(m string, _ []json.RawMessage) *stubReply {
				if m == "eth_blockNumber" && seen.Add(1) == 1 {
					e := c.err
					return &stubReply{err: &e}
				}
				return nil
			})
			f, clock := dialStubs(t, a)
			if _, err := f.BlockNumber(ctx); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			p := clock.slept()
			if len(p) != 1 || c.want != 0 && p[0] != c.want || c.want == 0 && p[0] > time.Second {
				t.Errorf("%s: waited %v, want %v", c.name, p, c.want)
			}
		}
	})

	t.Run("a bench past the deadline fails the call at once", func(t *testing.T) {
		a := newStubNode(t, chain, 50)
		tooMany(a, "eth_blockNumber", 1, func() string { return "60" })
		f, clock := dialStubs(t, a)
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_, err := f.BlockNumber(ctx)
		var he rpc.HTTPError
		if !errors.As(err, &he) || he.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("BlockNumber: %v, want the 429", err)
		}
		if p := clock.slept(); len(p) != 0 {
			t.Errorf("waited %v", p)
		}
		// Meanwhile the endpoint is not asked.
		if _, err := f.BlockNumber(ctx); !errors.Is(err, errAllBenched) || a.count("eth_blockNumber") != 1 {
			t.Errorf("while benched: %v after %d calls", err, a.count("eth_blockNumber"))
		}
	})
}

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

// eth_getLogs goes only to an endpoint that has the range's last block: a
// lagging node answers without the logs of the blocks it lacks.
func TestFilterLogsSkipsAnEndpointWithoutTheBlocks(t *testing.T) {
	ctx := context.Background()
	l := newLagging(t)
	l.f.MaxLag = 10
	failOnce(l.a, "eth_blockNumber")
	if _, err := l.f.BlockNumber(ctx); err != nil { // b: 105
		t.Fatal(err)
	}
	l.f.current.Store(0)
	logs, err := l.f.FilterLogs(ctx, logQuery(96, 105))
	if err != nil {
		t.Fatal(err)
	}
	if err := sameLogs(logs, l.chain.logsIn(96, 105)); err != nil {
		t.Fatalf("%v: the logs of blocks 101-105 are missing", err)
	}
	if l.a.count("eth_getLogs") != 0 {
		t.Errorf("a was asked for logs of blocks it does not have")
	}
	down(l.b)
	if _, err := l.f.FilterLogs(ctx, logQuery(96, 105)); !errors.Is(err, errLogsBehind) {
		t.Errorf("with b down: %v, want an error", err)
	}
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

// jsonRPCError is a JSON-RPC error as go-ethereum's client returns it.
type jsonRPCError struct {
	code int
	msg  string
	data any
}

func (e jsonRPCError) Error() string  { return e.msg }
func (e jsonRPCError) ErrorCode() int { return e.code }
func (e jsonRPCError) ErrorData() any { return e.data }

// The refusals are told apart from rate limits and from other errors, and
// the span they state or suggest is read.
func TestRefusalWordings(t *testing.T) {
	alchemy := "Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, " +
		"or you can request any block range with a cap of 10K logs in the response. Based on your parameters and the response size limit, " +
		"this block range should work: [0x0, 0xd043b8]"
	cases := []struct {
		name        string
		err         error
		refused     bool
		span, limit uint64
		rateLimited bool
	}{
		{"Alchemy, response size", jsonRPCError{-32602, alchemy, nil}, true, 0xd043b8 + 1, 0, false},
		{"Alchemy, block range", rpc.HTTPError{StatusCode: 400, Status: "400 Bad Request",
			Body: []byte(`{"jsonrpc":"2.0","id":13518,"error":{"code":-32600,"message":"You can make eth_getLogs requests with up to a 500 block range. Based on your parameters, this block range should work: [0x1a30dfd, 0x1a30ff0]"}}`)},
			true, 500, 500, false},
		{"Infura, results", jsonRPCError{-32005, "query returned more than 10000 results. Try with this block range [0xBDE5F8, 0x102DBCC].",
			map[string]any{"from": "0xBDE5F8", "limit": 10000.0, "to": "0x102DBCC"}}, true, 0x102DBCC - 0xBDE5F8 + 1, 0, false},
		{"Infura, range", jsonRPCError{-32602, "range 1000000 exceeds limit of 10000", nil}, true, 10000, 10000, false},
		{"QuickNode over HTTP 413", rpc.HTTPError{StatusCode: 413, Status: "413 Payload Too Large",
			Body: []byte(`{"jsonrpc":"2.0","id":56,"error":{"code":-32614,"message":"eth_getLogs is limited to a 10,000 range"}}`)}, true, 10000, 10000, false},
		{"Merkle", jsonRPCError{-32000, "eth_getLogs range is too large, max is 1k blocks", nil}, true, 1000, 1000, false},
		{"Coinbase", jsonRPCError{-32005, "please limit the query to at most 1000 blocks", nil}, true, 1000, 1000, false},
		{"thirdweb", jsonRPCError{-32602, "invalid params", "range 20000 is bigger than range limit 2000"}, true, 2000, 2000, false},
		{"Arbitrum", jsonRPCError{-32000, "logs matched by query exceeds limit of 10000", nil}, true, 0, 0, false},
		{"Ankr", jsonRPCError{-32600, "block range is too wide", nil}, true, 0, 0, false},
		{"LlamaRPC", jsonRPCError{-32602, "query exceeds max results 20000, retry with the range 24383075-24383096", nil}, true, 22, 0, false},

		{"geth, a range past the head", jsonRPCError{-32602, "block range extends beyond current head block", nil}, false, 0, 0, false},
		{"geth, a reversed range", jsonRPCError{-32602, "invalid block range params", nil}, false, 0, 0, false},
		{"a node down", errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), false, 0, 0, false},

		{"HTTP 429", rpc.HTTPError{StatusCode: 429, Status: "429 Too Many Requests"}, false, 0, 0, true},
		{"Alchemy, code 429", jsonRPCError{429, "Your app has exceeded its compute units per second capacity. If you have retries enabled, you can safely ignore this message.", nil}, false, 0, 0, true},
		{"Infura, daily", jsonRPCError{-32005, "daily request count exceeded, request rate limited", nil}, false, 0, 0, true},
		{"Moralis", errors.New("Too Many Requests"), false, 0, 0, true},
		{"Base in a 200", jsonRPCError{-32000, `429 Too Many Requests: {"jsonrpc":"2.0","error":{"code":-32016,"message":"over rate limit"},"id":2239375}`, nil}, false, 0, 0, true},
		{"HTTP 503", rpc.HTTPError{StatusCode: 503, Status: "503 Service Unavailable"}, false, 0, 0, false},
	}
	for _, c := range cases {
		span, limit, refused := logRangeRefusal(c.err)
		if refused != c.refused || span != c.span || limit != c.limit {
			t.Errorf("%s: refused %v, span %d, limit %d; want %v, %d, %d", c.name, refused, span, limit, c.refused, c.span, c.limit)
		}
		if _, limited := rateLimitRefusal(c.err); limited != c.rateLimited {
			t.Errorf("%s: rate limited %v, want %v", c.name, limited, c.rateLimited)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		v    string
		want time.Duration
		ok   bool
	}{
		{"120", 2 * time.Minute, true},
		{" 1 ", time.Second, true},
		{"0", 0, false},
		{"Tue, 01 Sep 2026 12:00:30 GMT", 30 * time.Second, true},
		{"Tue, 01 Sep 2026 11:59:00 GMT", 0, false}, // past
		{"soon", 0, false},
		{"", 0, false},
	}
	for _, c := range cases {
		if d, ok := parseRetryAfter(c.v, now); d != c.want && c.ok || ok != c.ok {
			t.Errorf("%q: %v, %v; want %v, %v", c.v, d, ok, c.want, c.ok)
		}
	}
}

// transferTopic is the topic of ERC-20 Transfer(address,address,uint256),
// which the stub chain's logs carry.
var transferTopic = crypto.Keccak256Hash([]byte("Transfer(address,address,uint256)"))
