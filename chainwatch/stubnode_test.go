package chainwatch

// A JSON-RPC stub node serving the fixtures in testdata/networks: blocks,
// receipts, logs and call traces in each network's published format, for
// tests of the chain reader against OP-stack, Arbitrum, Ethereum and Polygon
// payloads. testdata/networks/README.md describes the fixture files.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"
)

// stubFixture is a network fixture as the stub node serves it.
type stubFixture struct {
	Network string
	ChainID uint64
	// Source says where the payloads come from and what was adjusted.
	Source string
	// Tokens are the listed ERC-20 contracts; Watched the payment addresses.
	Tokens  []common.Address
	Watched []common.Address
	// Expect lists the transfers a scan of all the blocks must report.
	Expect []stubExpect
	// Calls counts the RPC calls the stub answered, per method.
	Calls *stubCalls

	blocks   []*stubBlock
	byHash   map[common.Hash]*stubBlock
	txs      map[common.Hash]json.RawMessage
	receipts map[common.Hash]json.RawMessage
	logs     []stubLog
	// traces are debug_traceBlockByNumber results by block number; nil when
	// the fixture has none and the node answers as one without the debug API.
	traces map[uint64]json.RawMessage
}

// stubExpect is a transfer chainwatch must find: an ERC-20 Transfer log
// (Token set, LogIndex ≥ 0) or native value (Token zero, LogIndex -1).
// Internal native transfers are seen only in call traces.
type stubExpect struct {
	TxHash      common.Hash
	LogIndex    int
	From, To    common.Address
	Token       common.Address
	Amount      *big.Int
	BlockNumber uint64
	Internal    bool
}

// stubCalls counts RPC calls per method; a batch counts each of its calls.
type stubCalls struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *stubCalls) add(method string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[method]++
}

// Of returns how many calls of method were answered.
func (c *stubCalls) Of(method string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[method]
}

// Total returns how many calls were answered, all methods together.
func (c *stubCalls) Total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	total := 0
	for _, n := range c.n {
		total += n
	}
	return total
}

// Reset sets every counter back to zero.
func (c *stubCalls) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n = map[string]int{}
}

type stubBlock struct {
	number   uint64
	hash     common.Hash
	parent   common.Hash
	fields   []stubField // the block object as stored, in its key order
	txHashes []common.Hash
	full     json.RawMessage
}

type stubLog struct {
	address  common.Address
	topics   []common.Hash
	block    uint64
	hash     common.Hash // block hash
	logIndex uint64
	raw      json.RawMessage
}

type stubField struct {
	key string
	val json.RawMessage
}

// stubSplitObject returns an object's fields in order, values compacted.
func stubSplitObject(raw json.RawMessage) ([]stubField, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object")
	}
	var fields []stubField
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		var c bytes.Buffer
		if err := json.Compact(&c, v); err != nil {
			return nil, err
		}
		fields = append(fields, stubField{tok.(string), c.Bytes()})
	}
	return fields, nil
}

func stubJoinObject(fields []stubField) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(f.val)
	}
	b.WriteByte('}')
	return b.Bytes()
}

func stubCompact(raw json.RawMessage) (json.RawMessage, error) {
	var c bytes.Buffer
	if err := json.Compact(&c, raw); err != nil {
		return nil, err
	}
	return c.Bytes(), nil
}

// loadStubFixture reads testdata/networks/<name>.json.
func loadStubFixture(name string) (*stubFixture, error) {
	data, err := os.ReadFile(filepath.Join("testdata", "networks", name+".json"))
	if err != nil {
		return nil, err
	}
	var file struct {
		Network  string                          `json:"network"`
		ChainID  uint64                          `json:"chainId"`
		Source   string                          `json:"source"`
		Tokens   []common.Address                `json:"tokens"`
		Watched  []common.Address                `json:"watched"`
		Blocks   []json.RawMessage               `json:"blocks"`
		Receipts map[common.Hash]json.RawMessage `json:"receipts"`
		Traces   map[string]json.RawMessage      `json:"traces"`
		Expect   []struct {
			TxHash      common.Hash    `json:"txHash"`
			LogIndex    int            `json:"logIndex"`
			From        common.Address `json:"from"`
			To          common.Address `json:"to"`
			Token       string         `json:"token"`
			Amount      string         `json:"amount"`
			BlockNumber uint64         `json:"blockNumber"`
			Internal    bool           `json:"internal"`
		} `json:"expect"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	fx := &stubFixture{
		Network: file.Network, ChainID: file.ChainID, Source: file.Source,
		Tokens: file.Tokens, Watched: file.Watched,
		Calls:    &stubCalls{n: map[string]int{}},
		byHash:   map[common.Hash]*stubBlock{},
		txs:      map[common.Hash]json.RawMessage{},
		receipts: map[common.Hash]json.RawMessage{},
	}
	for _, e := range file.Expect {
		amount, ok := new(big.Int).SetString(e.Amount, 10)
		if !ok {
			return nil, fmt.Errorf("%s: expect %s: amount %q", name, e.TxHash, e.Amount)
		}
		var token common.Address
		if e.Token != "" {
			if !common.IsHexAddress(e.Token) {
				return nil, fmt.Errorf("%s: expect %s: token %q", name, e.TxHash, e.Token)
			}
			token = common.HexToAddress(e.Token)
		}
		fx.Expect = append(fx.Expect, stubExpect{TxHash: e.TxHash, LogIndex: e.LogIndex, From: e.From, To: e.To,
			Token: token, Amount: amount, BlockNumber: e.BlockNumber, Internal: e.Internal})
	}
	for i, raw := range file.Blocks {
		fields, err := stubSplitObject(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: block %d: %w", name, i, err)
		}
		var head struct {
			Number       hexutil.Uint64    `json:"number"`
			Hash         common.Hash       `json:"hash"`
			ParentHash   common.Hash       `json:"parentHash"`
			Transactions []json.RawMessage `json:"transactions"`
		}
		if err := json.Unmarshal(raw, &head); err != nil {
			return nil, fmt.Errorf("%s: block %d: %w", name, i, err)
		}
		b := &stubBlock{number: uint64(head.Number), hash: head.Hash, parent: head.ParentHash, fields: fields, full: stubJoinObject(fields)}
		for _, txRaw := range head.Transactions {
			var tx struct {
				Hash common.Hash `json:"hash"`
			}
			if err := json.Unmarshal(txRaw, &tx); err != nil {
				return nil, fmt.Errorf("%s: block %d: %w", name, b.number, err)
			}
			c, err := stubCompact(txRaw)
			if err != nil {
				return nil, err
			}
			b.txHashes = append(b.txHashes, tx.Hash)
			fx.txs[tx.Hash] = c
		}
		fx.blocks = append(fx.blocks, b)
		fx.byHash[b.hash] = b
	}
	for h, raw := range file.Receipts {
		c, err := stubCompact(raw)
		if err != nil {
			return nil, err
		}
		fx.receipts[h] = c
		var r struct {
			Logs []json.RawMessage `json:"logs"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, fmt.Errorf("%s: receipt %s: %w", name, h, err)
		}
		for _, lraw := range r.Logs {
			var l struct {
				Address     common.Address `json:"address"`
				Topics      []common.Hash  `json:"topics"`
				BlockNumber hexutil.Uint64 `json:"blockNumber"`
				BlockHash   common.Hash    `json:"blockHash"`
				LogIndex    hexutil.Uint64 `json:"logIndex"`
			}
			if err := json.Unmarshal(lraw, &l); err != nil {
				return nil, fmt.Errorf("%s: receipt %s: %w", name, h, err)
			}
			c, err := stubCompact(lraw)
			if err != nil {
				return nil, err
			}
			fx.logs = append(fx.logs, stubLog{l.Address, l.Topics, uint64(l.BlockNumber), l.BlockHash, uint64(l.LogIndex), c})
		}
	}
	sort.Slice(fx.logs, func(i, j int) bool {
		if fx.logs[i].block != fx.logs[j].block {
			return fx.logs[i].block < fx.logs[j].block
		}
		return fx.logs[i].logIndex < fx.logs[j].logIndex
	})
	if file.Traces != nil {
		fx.traces = map[uint64]json.RawMessage{}
		for k, raw := range file.Traces {
			n, err := hexutil.DecodeUint64(k)
			if err != nil {
				return nil, fmt.Errorf("%s: traces key %q: %w", name, k, err)
			}
			c, err := stubCompact(raw)
			if err != nil {
				return nil, err
			}
			fx.traces[n] = c
		}
	}
	if len(fx.blocks) == 0 {
		return nil, fmt.Errorf("%s: no blocks", name)
	}
	return fx, nil
}

// startStubNode serves testdata/networks/<name>.json as a JSON-RPC 2.0 node
// over HTTP POST (single and batch requests) until the test ends.
func startStubNode(t testing.TB, name string) (url string, fx *stubFixture) {
	t.Helper()
	fx, err := loadStubFixture(name)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(fx)
	t.Cleanup(srv.Close)
	return srv.URL, fx
}

type stubRPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *stubRPCError) Error() string { return e.Message }

func stubNotAvailable(method string) *stubRPCError {
	return &stubRPCError{-32601, "the method " + method + " does not exist/is not available"}
}

func stubInvalidParams(format string, args ...any) *stubRPCError {
	return &stubRPCError{-32602, fmt.Sprintf(format, args...)}
}

var stubNull = json.RawMessage("null")

func (fx *stubFixture) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		var reqs []json.RawMessage
		if err := json.Unmarshal(body, &reqs); err != nil {
			w.Write(stubResponse(stubNull, nil, &stubRPCError{-32700, "parse error"}))
			return
		}
		if len(reqs) == 0 {
			w.Write(stubResponse(stubNull, nil, &stubRPCError{-32600, "empty batch"}))
			return
		}
		var out [][]byte
		for _, req := range reqs {
			if resp := fx.handle(req); resp != nil {
				out = append(out, resp)
			}
		}
		w.Write(append(append([]byte{'['}, bytes.Join(out, []byte{','})...), ']'))
		return
	}
	if resp := fx.handle(body); resp != nil {
		w.Write(resp)
	}
}

// handle answers one request; nil for a notification.
func (fx *stubFixture) handle(raw json.RawMessage) []byte {
	var req struct {
		Version string            `json:"jsonrpc"`
		ID      json.RawMessage   `json:"id"`
		Method  string            `json:"method"`
		Params  []json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		return stubResponse(stubNull, nil, &stubRPCError{-32700, "parse error"})
	}
	if req.Version != "2.0" || req.Method == "" {
		return stubResponse(stubNull, nil, &stubRPCError{-32600, "invalid request"})
	}
	fx.Calls.add(req.Method)
	result, rerr := fx.call(req.Method, req.Params)
	if req.ID == nil {
		return nil
	}
	return stubResponse(req.ID, result, rerr)
}

func stubResponse(id, result json.RawMessage, err *stubRPCError) []byte {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(id)
	if err != nil {
		e, _ := json.Marshal(err)
		b.WriteString(`,"error":`)
		b.Write(e)
	} else {
		if result == nil {
			result = stubNull
		}
		b.WriteString(`,"result":`)
		b.Write(result)
	}
	b.WriteByte('}')
	return b.Bytes()
}

func stubParam(params []json.RawMessage, i int) json.RawMessage {
	if i < len(params) {
		return params[i]
	}
	return nil
}

func (fx *stubFixture) head() *stubBlock { return fx.blocks[len(fx.blocks)-1] }

// blockNumber resolves a block tag or a hex number; the tags "latest",
// "pending", "safe" and "finalized" name the last block.
func (fx *stubFixture) blockNumber(raw json.RawMessage) (uint64, *stubRPCError) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return 0, stubInvalidParams("invalid argument 0: %v", err)
	}
	switch s {
	case "latest", "pending", "safe", "finalized", "":
		return fx.head().number, nil
	case "earliest":
		return 0, nil
	}
	n, err := hexutil.DecodeUint64(s)
	if err != nil {
		return 0, stubInvalidParams("invalid argument 0: %v", err)
	}
	return n, nil
}

func (fx *stubFixture) byNumber(n uint64) *stubBlock {
	for _, b := range fx.blocks {
		if b.number == n {
			return b
		}
	}
	return nil
}

func (fx *stubFixture) renderBlock(b *stubBlock, fullRaw json.RawMessage) json.RawMessage {
	var full bool
	if fullRaw != nil {
		json.Unmarshal(fullRaw, &full)
	}
	if full {
		return b.full
	}
	hashes, _ := json.Marshal(b.txHashes)
	if b.txHashes == nil {
		hashes = []byte("[]")
	}
	fields := slices.Clone(b.fields)
	for i := range fields {
		if fields[i].key == "transactions" {
			fields[i].val = hashes
		}
	}
	return stubJoinObject(fields)
}

func (fx *stubFixture) call(method string, params []json.RawMessage) (json.RawMessage, *stubRPCError) {
	marshal := func(v any) (json.RawMessage, *stubRPCError) {
		b, _ := json.Marshal(v)
		return b, nil
	}
	switch method {
	case "eth_chainId":
		return marshal(hexutil.Uint64(fx.ChainID))
	case "eth_blockNumber":
		return marshal(hexutil.Uint64(fx.head().number))
	case "eth_getBlockByNumber":
		n, err := fx.blockNumber(stubParam(params, 0))
		if err != nil {
			return nil, err
		}
		b := fx.byNumber(n)
		if b == nil {
			return stubNull, nil
		}
		return fx.renderBlock(b, stubParam(params, 1)), nil
	case "eth_getBlockByHash":
		var h common.Hash
		if err := json.Unmarshal(stubParam(params, 0), &h); err != nil {
			return nil, stubInvalidParams("invalid argument 0: %v", err)
		}
		b := fx.byHash[h]
		if b == nil {
			return stubNull, nil
		}
		return fx.renderBlock(b, stubParam(params, 1)), nil
	case "eth_getTransactionByHash", "eth_getTransactionReceipt":
		var h common.Hash
		if err := json.Unmarshal(stubParam(params, 0), &h); err != nil {
			return nil, stubInvalidParams("invalid argument 0: %v", err)
		}
		src := fx.txs
		if method == "eth_getTransactionReceipt" {
			src = fx.receipts
		}
		if v, ok := src[h]; ok {
			return v, nil
		}
		return stubNull, nil
	case "eth_getLogs":
		return fx.getLogs(stubParam(params, 0))
	case "debug_traceBlockByNumber", "debug_traceTransaction":
		if fx.traces == nil {
			return nil, stubNotAvailable(method)
		}
		if err := stubCallTracerOnly(stubParam(params, 1)); err != nil {
			return nil, err
		}
		if method == "debug_traceBlockByNumber" {
			n, err := fx.blockNumber(stubParam(params, 0))
			if err != nil {
				return nil, err
			}
			if tr, ok := fx.traces[n]; ok {
				return tr, nil
			}
			return nil, &stubRPCError{-32000, fmt.Sprintf("block #%d not found", n)}
		}
		var h common.Hash
		if err := json.Unmarshal(stubParam(params, 0), &h); err != nil {
			return nil, stubInvalidParams("invalid argument 0: %v", err)
		}
		for _, tr := range fx.traces {
			var results []struct {
				TxHash common.Hash     `json:"txHash"`
				Result json.RawMessage `json:"result"`
			}
			json.Unmarshal(tr, &results)
			for _, r := range results {
				if r.TxHash == h {
					return r.Result, nil
				}
			}
		}
		return nil, &stubRPCError{-32000, "transaction " + h.Hex() + " not found"}
	}
	return nil, stubNotAvailable(method)
}

func stubCallTracerOnly(raw json.RawMessage) *stubRPCError {
	if raw == nil || string(raw) == "null" {
		return nil
	}
	var cfg struct {
		Tracer *string `json:"tracer"`
	}
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return stubInvalidParams("invalid argument 1: %v", err)
	}
	if cfg.Tracer != nil && *cfg.Tracer != "callTracer" {
		return &stubRPCError{-32000, "the stub node serves callTracer results only"}
	}
	return nil
}

// getLogs filters the receipts' logs as a node's eth_getLogs does.
func (fx *stubFixture) getLogs(raw json.RawMessage) (json.RawMessage, *stubRPCError) {
	var arg struct {
		BlockHash *common.Hash      `json:"blockHash"`
		FromBlock json.RawMessage   `json:"fromBlock"`
		ToBlock   json.RawMessage   `json:"toBlock"`
		Address   json.RawMessage   `json:"address"`
		Topics    []json.RawMessage `json:"topics"`
	}
	if raw == nil {
		return nil, stubInvalidParams("missing value for required argument 0")
	}
	if err := json.Unmarshal(raw, &arg); err != nil {
		return nil, stubInvalidParams("invalid argument 0: %v", err)
	}
	isSet := func(r json.RawMessage) bool { return r != nil && string(r) != "null" }
	var match func(l stubLog) bool
	if arg.BlockHash != nil {
		if isSet(arg.FromBlock) || isSet(arg.ToBlock) {
			return nil, stubInvalidParams("invalid argument 0: cannot specify both BlockHash and FromBlock/ToBlock, choose one or the other")
		}
		if fx.byHash[*arg.BlockHash] == nil {
			return nil, &stubRPCError{-32000, "unknown block"}
		}
		h := *arg.BlockHash
		match = func(l stubLog) bool { return l.hash == h }
	} else {
		from, to := fx.head().number, fx.head().number
		var err *stubRPCError
		if isSet(arg.FromBlock) {
			if from, err = fx.blockNumber(arg.FromBlock); err != nil {
				return nil, err
			}
		}
		if isSet(arg.ToBlock) {
			if to, err = fx.blockNumber(arg.ToBlock); err != nil {
				return nil, err
			}
		}
		if to > fx.head().number {
			return nil, stubInvalidParams("block range extends beyond current head block")
		}
		if from > to {
			return nil, stubInvalidParams("invalid block range params")
		}
		match = func(l stubLog) bool { return l.block >= from && l.block <= to }
	}

	var addrs []common.Address
	if isSet(arg.Address) {
		var one common.Address
		if err := json.Unmarshal(arg.Address, &one); err == nil {
			addrs = []common.Address{one}
		} else if err := json.Unmarshal(arg.Address, &addrs); err != nil {
			return nil, stubInvalidParams("invalid argument 0: invalid addresses in query")
		}
	}
	topics := make([][]common.Hash, len(arg.Topics)) // nil: any topic at that position
	for i, t := range arg.Topics {
		if !isSet(t) {
			continue
		}
		var one common.Hash
		if err := json.Unmarshal(t, &one); err == nil {
			topics[i] = []common.Hash{one}
			continue
		}
		var alts []*common.Hash
		if err := json.Unmarshal(t, &alts); err != nil {
			return nil, stubInvalidParams("invalid argument 0: invalid topic(s)")
		}
		for _, a := range alts {
			if a == nil {
				return nil, stubInvalidParams("invalid argument 0: invalid topic(s)")
			}
			topics[i] = append(topics[i], *a)
		}
	}

	out := []json.RawMessage{}
	for _, l := range fx.logs {
		if !match(l) {
			continue
		}
		if len(addrs) > 0 && !slices.Contains(addrs, l.address) {
			continue
		}
		if len(topics) > len(l.topics) {
			continue
		}
		ok := true
		for i, alts := range topics {
			if len(alts) > 0 && !slices.Contains(alts, l.topics[i]) {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, l.raw)
		}
	}
	b, _ := json.Marshal(out)
	return b, nil
}

// ---------- the test ----------

var stubNetworks = []string{"base", "optimism", "arbitrum", "ethereum", "polygon"}

// stubTx is the small transaction struct the chain reader decodes.
type stubTx struct {
	Hash             common.Hash     `json:"hash"`
	From             common.Address  `json:"from"`
	To               *common.Address `json:"to"`
	Value            *hexutil.Big    `json:"value"`
	Type             hexutil.Uint64  `json:"type"`
	Input            hexutil.Bytes   `json:"input"`
	BlockHash        *common.Hash    `json:"blockHash"`
	BlockNumber      *hexutil.Big    `json:"blockNumber"`
	TransactionIndex *hexutil.Uint64 `json:"transactionIndex"`
}

type stubBlockView struct {
	Hash         common.Hash    `json:"hash"`
	ParentHash   common.Hash    `json:"parentHash"`
	Number       hexutil.Uint64 `json:"number"`
	Timestamp    hexutil.Uint64 `json:"timestamp"`
	Transactions []stubTx       `json:"transactions"`
}

type stubLogView struct {
	Address          common.Address `json:"address"`
	Topics           []common.Hash  `json:"topics"`
	Data             hexutil.Bytes  `json:"data"`
	BlockHash        common.Hash    `json:"blockHash"`
	BlockNumber      hexutil.Uint64 `json:"blockNumber"`
	TransactionHash  common.Hash    `json:"transactionHash"`
	TransactionIndex hexutil.Uint64 `json:"transactionIndex"`
	LogIndex         hexutil.Uint64 `json:"logIndex"`
	Removed          *bool          `json:"removed"`
}

type stubReceiptView struct {
	Status      hexutil.Uint64 `json:"status"`
	BlockHash   common.Hash    `json:"blockHash"`
	BlockNumber hexutil.Uint64 `json:"blockNumber"`
	TxHash      common.Hash    `json:"transactionHash"`
	Logs        []stubLogView  `json:"logs"`
}

type stubFrame struct {
	From  common.Address  `json:"from"`
	To    *common.Address `json:"to"`
	Value *hexutil.Big    `json:"value"`
	Type  string          `json:"type"`
	Error string          `json:"error"`
	Calls []stubFrame     `json:"calls"`
}

func (f stubFrame) pays(from, to common.Address, amount *big.Int) bool {
	if f.Type == "CALL" && f.Error == "" && f.From == from && f.To != nil && *f.To == to && f.Value != nil && f.Value.ToInt().Cmp(amount) == 0 {
		return true
	}
	for _, c := range f.Calls {
		if c.pays(from, to, amount) {
			return true
		}
	}
	return false
}

func TestStubNodeServesNetworkFormats(t *testing.T) {
	for _, name := range stubNetworks {
		t.Run(name, func(t *testing.T) {
			url, fx := startStubNode(t, name)
			if fx.Network != name {
				t.Fatalf("fixture network %q", fx.Network)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c, err := rpc.DialContext(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			checkStubChain(ctx, t, c, fx)
			checkStubLogs(ctx, t, c, fx)
			checkStubExpect(ctx, t, c, fx)
			checkStubTraces(ctx, t, c, fx)
			checkStubCalls(ctx, t, c, fx)
			checkStubGethDecoding(ctx, t, c, fx)
		})
	}
}

func checkStubChain(ctx context.Context, t *testing.T, c *rpc.Client, fx *stubFixture) {
	var id hexutil.Uint64
	if err := c.CallContext(ctx, &id, "eth_chainId"); err != nil || uint64(id) != fx.ChainID {
		t.Fatalf("eth_chainId = %d, %v; want %d", id, err, fx.ChainID)
	}
	var headN hexutil.Uint64
	if err := c.CallContext(ctx, &headN, "eth_blockNumber"); err != nil || uint64(headN) != fx.head().number {
		t.Fatalf("eth_blockNumber = %d, %v; want %d", headN, err, fx.head().number)
	}
	if len(fx.blocks) < 2 || len(fx.blocks) > 4 {
		t.Errorf("%d blocks, want 2 to 4", len(fx.blocks))
	}

	var prev *stubBlockView
	for _, sb := range fx.blocks {
		var b stubBlockView
		if err := c.CallContext(ctx, &b, "eth_getBlockByNumber", hexutil.Uint64(sb.number), true); err != nil {
			t.Fatalf("block %d: %v", sb.number, err)
		}
		if uint64(b.Number) != sb.number || b.Hash != sb.hash {
			t.Fatalf("block %d: got number %d hash %s", sb.number, b.Number, b.Hash)
		}
		// The stored header hashes to the block hash: keccak(rlp(header)).
		var h types.Header
		if err := json.Unmarshal(sb.full, &h); err != nil {
			t.Fatalf("block %d header: %v", sb.number, err)
		}
		if h.Hash() != b.Hash {
			t.Errorf("block %d: header hashes to %s, block says %s", sb.number, h.Hash(), b.Hash)
		}
		if prev != nil {
			if b.ParentHash != prev.Hash || uint64(b.Number) != uint64(prev.Number)+1 || b.Timestamp < prev.Timestamp {
				t.Errorf("block %d does not follow block %d", b.Number, prev.Number)
			}
		}
		for i, tx := range b.Transactions {
			if tx.BlockHash == nil || *tx.BlockHash != b.Hash || tx.BlockNumber == nil || tx.BlockNumber.ToInt().Uint64() != sb.number ||
				tx.TransactionIndex == nil || uint64(*tx.TransactionIndex) != uint64(i) || tx.Value == nil {
				t.Errorf("block %d tx %d (%s): location fields %+v", sb.number, i, tx.Hash, tx)
			}
			var byHash stubTx
			if err := c.CallContext(ctx, &byHash, "eth_getTransactionByHash", tx.Hash); err != nil || byHash.Hash != tx.Hash || byHash.BlockHash == nil || *byHash.BlockHash != b.Hash {
				t.Errorf("eth_getTransactionByHash(%s) = %+v, %v", tx.Hash, byHash, err)
			}
			var r stubReceiptView
			if err := c.CallContext(ctx, &r, "eth_getTransactionReceipt", tx.Hash); err != nil || r.TxHash != tx.Hash || r.BlockHash != b.Hash || uint64(r.BlockNumber) != sb.number {
				t.Errorf("eth_getTransactionReceipt(%s) = %+v, %v", tx.Hash, r, err)
			}
			for _, l := range r.Logs {
				if l.BlockHash != b.Hash || uint64(l.BlockNumber) != sb.number || l.TransactionHash != tx.Hash || uint64(l.TransactionIndex) != uint64(i) || l.Removed == nil || *l.Removed {
					t.Errorf("tx %s: log %d: %+v", tx.Hash, l.LogIndex, l)
				}
				bloom := types.BytesToBloom(hexutil.MustDecode(stubBlockField(t, sb, "logsBloom")))
				if !types.BloomLookup(bloom, l.Address) {
					t.Errorf("block %d: logsBloom misses log address %s", sb.number, l.Address)
				}
			}
			// Standard transaction types decode with go-ethereum and hash to their hash.
			if tx.Type <= types.SetCodeTxType {
				var gtx types.Transaction
				if err := json.Unmarshal(fx.txs[tx.Hash], &gtx); err != nil {
					t.Errorf("tx %s: %v", tx.Hash, err)
				} else if gtx.Hash() != tx.Hash {
					t.Errorf("tx %s hashes to %s", tx.Hash, gtx.Hash())
				}
			}
		}

		// Hashes only, and by hash.
		var light struct {
			Hash         common.Hash   `json:"hash"`
			Transactions []common.Hash `json:"transactions"`
		}
		if err := c.CallContext(ctx, &light, "eth_getBlockByNumber", hexutil.Uint64(sb.number), false); err != nil || light.Hash != sb.hash || !slices.Equal(light.Transactions, sb.txHashes) {
			t.Errorf("block %d without transactions: %+v, %v", sb.number, light, err)
		}
		var byHash json.RawMessage
		if err := c.CallContext(ctx, &byHash, "eth_getBlockByHash", sb.hash, true); err != nil || !bytes.Equal(byHash, sb.full) {
			t.Errorf("eth_getBlockByHash(%s) differs from the stored block: %v", sb.hash, err)
		}
		bb := b
		prev = &bb
	}

	if len(fx.receipts) != len(fx.txs) {
		t.Errorf("%d receipts for %d transactions", len(fx.receipts), len(fx.txs))
	}
	for _, tag := range []string{"latest", "safe", "finalized"} {
		var b stubBlockView
		if err := c.CallContext(ctx, &b, "eth_getBlockByNumber", tag, true); err != nil || b.Hash != fx.head().hash {
			t.Errorf("eth_getBlockByNumber(%s) = %s, %v", tag, b.Hash, err)
		}
	}
	unknownHash := common.HexToHash("0x00000000000000000000000000000000000000000000000000000000deadbeef")
	for _, q := range []struct {
		method string
		args   []any
	}{
		{"eth_getBlockByNumber", []any{hexutil.Uint64(fx.head().number + 1), true}},
		{"eth_getBlockByHash", []any{unknownHash, false}},
		{"eth_getTransactionByHash", []any{unknownHash}},
		{"eth_getTransactionReceipt", []any{unknownHash}},
	} {
		var raw json.RawMessage
		if err := c.CallContext(ctx, &raw, q.method, q.args...); err != nil || string(raw) != "null" {
			t.Errorf("%s(unknown) = %s, %v; want null", q.method, raw, err)
		}
	}
	var raw json.RawMessage
	err := c.CallContext(ctx, &raw, "eth_sendRawTransaction", "0x00")
	var rerr rpc.Error
	if !errors.As(err, &rerr) || rerr.ErrorCode() != -32601 {
		t.Errorf("eth_sendRawTransaction: %v, want -32601", err)
	}
}

func stubBlockField(t *testing.T, b *stubBlock, key string) string {
	for _, f := range b.fields {
		if f.key == key {
			var s string
			if err := json.Unmarshal(f.val, &s); err != nil {
				t.Fatalf("block %d %s: %v", b.number, key, err)
			}
			return s
		}
	}
	t.Fatalf("block %d has no %s", b.number, key)
	return ""
}

func checkStubLogs(ctx context.Context, t *testing.T, c *rpc.Client, fx *stubFixture) {
	first, last := fx.blocks[0], fx.head()
	client := ethclient.NewClient(c)

	// Chainwatch's query: Transfer logs of the listed tokens to watched addresses.
	var watchedTopics []common.Hash
	for _, w := range fx.Watched {
		watchedTopics = append(watchedTopics, common.BytesToHash(w.Bytes()))
	}
	logs, err := client.FilterLogs(ctx, ethereum.FilterQuery{
		FromBlock: new(big.Int).SetUint64(first.number), ToBlock: new(big.Int).SetUint64(last.number),
		Addresses: fx.Tokens, Topics: [][]common.Hash{{TransferTopic}, nil, watchedTopics},
	})
	if err != nil {
		t.Fatalf("eth_getLogs: %v", err)
	}
	var got, want []string
	for _, l := range logs {
		got = append(got, fmt.Sprintf("%s/%d", l.TxHash, l.Index))
	}
	for _, e := range fx.Expect {
		if e.Token != (common.Address{}) {
			want = append(want, fmt.Sprintf("%s/%d", e.TxHash, e.LogIndex))
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("token transfers to watched addresses:\n got %v\nwant %v", got, want)
	}

	// Everything in the range, in chain order, equals the receipts' logs.
	all, err := client.FilterLogs(ctx, ethereum.FilterQuery{FromBlock: new(big.Int).SetUint64(first.number), ToBlock: new(big.Int).SetUint64(last.number)})
	if err != nil || len(all) != len(fx.logs) {
		t.Fatalf("all logs: %d, %v; want %d", len(all), err, len(fx.logs))
	}
	for i := 1; i < len(all); i++ {
		if all[i].BlockNumber < all[i-1].BlockNumber || (all[i].BlockNumber == all[i-1].BlockNumber && all[i].Index <= all[i-1].Index) {
			t.Errorf("logs out of order at %d", i)
		}
	}

	// By block hash, a single address as a string, and a topic list longer than the log.
	for _, b := range fx.blocks {
		var byHash []stubLogView
		if err := c.CallContext(ctx, &byHash, "eth_getLogs", map[string]any{"blockHash": b.hash}); err != nil {
			t.Fatalf("eth_getLogs(blockHash): %v", err)
		}
		n := 0
		for _, l := range fx.logs {
			if l.hash == b.hash {
				n++
			}
		}
		if len(byHash) != n {
			t.Errorf("block %d: %d logs by hash, want %d", b.number, len(byHash), n)
		}
		for _, l := range byHash {
			if l.BlockHash != b.hash {
				t.Errorf("block %d: log of block %s", b.number, l.BlockHash)
			}
		}
	}
	for _, tok := range fx.Tokens {
		var one []stubLogView
		if err := c.CallContext(ctx, &one, "eth_getLogs", map[string]any{"fromBlock": hexutil.Uint64(first.number), "toBlock": "latest", "address": tok}); err != nil {
			t.Fatal(err)
		}
		for _, l := range one {
			if l.Address != tok {
				t.Errorf("address filter %s returned a log of %s", tok, l.Address)
			}
		}
	}
	var none json.RawMessage
	if err := c.CallContext(ctx, &none, "eth_getLogs", map[string]any{"fromBlock": hexutil.Uint64(first.number), "toBlock": "latest",
		"topics": []any{TransferTopic, nil, nil, nil}}); err != nil || string(none) != "[]" {
		t.Errorf("Transfer with a fourth topic: %s, %v; want []", none, err)
	}
	// Errors as geth gives them.
	for _, q := range []map[string]any{
		{"fromBlock": hexutil.Uint64(last.number), "toBlock": hexutil.Uint64(first.number)},
		{"fromBlock": hexutil.Uint64(first.number), "toBlock": hexutil.Uint64(last.number + 5)},
		{"blockHash": first.hash, "fromBlock": hexutil.Uint64(first.number)},
	} {
		var rerr rpc.Error
		if err := c.CallContext(ctx, &none, "eth_getLogs", q); !errors.As(err, &rerr) || rerr.ErrorCode() != -32602 {
			t.Errorf("eth_getLogs(%v): %v, want -32602", q, err)
		}
	}
}

func checkStubExpect(ctx context.Context, t *testing.T, c *rpc.Client, fx *stubFixture) {
	if len(fx.Expect) == 0 {
		t.Fatal("no expected transfers")
	}
	// The native payments to watched addresses that succeeded are exactly the
	// expected top-level native transfers.
	var paid, want []common.Hash
	for _, b := range fx.blocks {
		for _, h := range b.txHashes {
			var tx stubTx
			var r stubReceiptView
			json.Unmarshal(fx.txs[h], &tx)
			json.Unmarshal(fx.receipts[h], &r)
			if tx.To != nil && slices.Contains(fx.Watched, *tx.To) && tx.Value.ToInt().Sign() > 0 && r.Status == 1 {
				paid = append(paid, h)
			}
		}
	}
	for _, e := range fx.Expect {
		if e.Token == (common.Address{}) && !e.Internal {
			want = append(want, e.TxHash)
		}
	}
	if !slices.Equal(paid, want) {
		t.Errorf("native payments to watched addresses:\n got %v\nwant %v", paid, want)
	}
	for _, e := range fx.Expect {
		if !slices.Contains(fx.Watched, e.To) {
			t.Errorf("expect %s: %s is not watched", e.TxHash, e.To)
		}
		var tx stubTx
		if err := c.CallContext(ctx, &tx, "eth_getTransactionByHash", e.TxHash); err != nil || tx.BlockNumber == nil {
			t.Errorf("expect %s: no such transaction (%v)", e.TxHash, err)
			continue
		}
		if tx.BlockNumber.ToInt().Uint64() != e.BlockNumber {
			t.Errorf("expect %s: in block %d, not %d", e.TxHash, tx.BlockNumber.ToInt(), e.BlockNumber)
		}
		var r stubReceiptView
		if err := c.CallContext(ctx, &r, "eth_getTransactionReceipt", e.TxHash); err != nil || r.Status != 1 {
			t.Errorf("expect %s: receipt status %d (%v), want 1", e.TxHash, r.Status, err)
			continue
		}
		switch {
		case e.Token != (common.Address{}):
			if !slices.Contains(fx.Tokens, e.Token) {
				t.Errorf("expect %s: token %s is not listed", e.TxHash, e.Token)
			}
			i := slices.IndexFunc(r.Logs, func(l stubLogView) bool { return int(l.LogIndex) == e.LogIndex })
			if i < 0 {
				t.Errorf("expect %s: no log %d", e.TxHash, e.LogIndex)
				continue
			}
			l := r.Logs[i]
			if l.Address != e.Token || len(l.Topics) != 3 || l.Topics[0] != TransferTopic ||
				common.BytesToAddress(l.Topics[1].Bytes()) != e.From || common.BytesToAddress(l.Topics[2].Bytes()) != e.To ||
				new(big.Int).SetBytes(l.Data).Cmp(e.Amount) != 0 {
				t.Errorf("expect %s: log %d is %+v", e.TxHash, e.LogIndex, l)
			}
		case e.Internal:
			if fx.traces == nil {
				t.Errorf("expect %s: internal transfer without traces", e.TxHash)
				continue
			}
			var f stubFrame
			if err := c.CallContext(ctx, &f, "debug_traceTransaction", e.TxHash, map[string]any{"tracer": "callTracer"}); err != nil || !f.pays(e.From, e.To, e.Amount) {
				t.Errorf("expect %s: no internal call %s → %s of %s (%v)", e.TxHash, e.From, e.To, e.Amount, err)
			}
		default:
			if e.LogIndex != -1 || tx.To == nil || *tx.To != e.To || tx.From != e.From || tx.Value.ToInt().Cmp(e.Amount) != 0 {
				t.Errorf("expect %s: transaction %+v does not pay %s %s", e.TxHash, tx, e.To, e.Amount)
			}
		}
	}
}

func checkStubTraces(ctx context.Context, t *testing.T, c *rpc.Client, fx *stubFixture) {
	b := fx.head()
	cfg := map[string]any{"tracer": "callTracer"}
	var res []struct {
		TxHash common.Hash `json:"txHash"`
		Result stubFrame   `json:"result"`
	}
	err := c.CallContext(ctx, &res, "debug_traceBlockByNumber", hexutil.Uint64(b.number), cfg)
	if fx.traces == nil {
		var rerr rpc.Error
		if !errors.As(err, &rerr) || rerr.ErrorCode() != -32601 || rerr.Error() != "the method debug_traceBlockByNumber does not exist/is not available" {
			t.Errorf("debug_traceBlockByNumber without traces: %v", err)
		}
		err = c.CallContext(ctx, &res, "debug_traceTransaction", b.txHashes[0], cfg)
		if !errors.As(err, &rerr) || rerr.ErrorCode() != -32601 {
			t.Errorf("debug_traceTransaction without traces: %v", err)
		}
		return
	}
	for _, sb := range fx.blocks {
		if err := c.CallContext(ctx, &res, "debug_traceBlockByNumber", hexutil.Uint64(sb.number), cfg); err != nil || len(res) != len(sb.txHashes) {
			t.Fatalf("block %d: %d traces, %v; want %d", sb.number, len(res), err, len(sb.txHashes))
		}
		for i, r := range res {
			var tx stubTx
			json.Unmarshal(fx.txs[sb.txHashes[i]], &tx)
			if r.TxHash != sb.txHashes[i] || r.Result.From != tx.From {
				t.Errorf("block %d trace %d: %s from %s", sb.number, i, r.TxHash, r.Result.From)
			}
		}
	}
}

func checkStubCalls(ctx context.Context, t *testing.T, c *rpc.Client, fx *stubFixture) {
	fx.Calls.Reset()
	batch := []rpc.BatchElem{
		{Method: "eth_blockNumber", Result: new(hexutil.Uint64)},
		{Method: "eth_getBlockByNumber", Args: []any{hexutil.Uint64(fx.blocks[0].number), true}, Result: new(stubBlockView)},
		{Method: "eth_getBlockByNumber", Args: []any{"latest", false}, Result: new(json.RawMessage)},
		{Method: "eth_getTransactionReceipt", Args: []any{fx.blocks[0].txHashes[0]}, Result: new(stubReceiptView)},
		{Method: "web3_clientVersion", Result: new(string)},
	}
	if err := c.BatchCallContext(ctx, batch); err != nil {
		t.Fatal(err)
	}
	for i, el := range batch[:4] {
		if el.Error != nil {
			t.Errorf("batch %d (%s): %v", i, el.Method, el.Error)
		}
	}
	var rerr rpc.Error
	if !errors.As(batch[4].Error, &rerr) || rerr.ErrorCode() != -32601 {
		t.Errorf("batched unknown method: %v", batch[4].Error)
	}
	if b := batch[1].Result.(*stubBlockView); b.Hash != fx.blocks[0].hash {
		t.Errorf("batched block: %s", b.Hash)
	}
	if fx.Calls.Of("eth_getBlockByNumber") != 2 || fx.Calls.Of("eth_blockNumber") != 1 || fx.Calls.Total() != 5 {
		t.Errorf("calls counted: %d getBlockByNumber, %d blockNumber, %d in all", fx.Calls.Of("eth_getBlockByNumber"), fx.Calls.Of("eth_blockNumber"), fx.Calls.Total())
	}
}

// checkStubGethDecoding shows the failure the raw reader avoids: go-ethereum's
// BlockByNumber rejects the networks' own transaction types, while the small
// struct decodes every block.
func checkStubGethDecoding(ctx context.Context, t *testing.T, c *rpc.Client, fx *stubFixture) {
	client := ethclient.NewClient(c)
	ownTypes := false
	for _, sb := range fx.blocks {
		var b stubBlockView
		if err := c.CallContext(ctx, &b, "eth_getBlockByNumber", hexutil.Uint64(sb.number), true); err != nil || len(b.Transactions) != len(sb.txHashes) {
			t.Fatalf("block %d as the small struct: %v", sb.number, err)
		}
		own := slices.ContainsFunc(b.Transactions, func(tx stubTx) bool { return tx.Type > types.SetCodeTxType })
		ownTypes = ownTypes || own
		gb, err := client.BlockByNumber(ctx, new(big.Int).SetUint64(sb.number))
		switch {
		case own:
			if err == nil || !strings.Contains(err.Error(), "transaction type not supported") {
				t.Errorf("ethclient.BlockByNumber(%d) = %v; want transaction type not supported", sb.number, err)
			}
		case err != nil:
			t.Errorf("ethclient.BlockByNumber(%d): %v", sb.number, err)
		case gb.Hash() != sb.hash || len(gb.Transactions()) != len(sb.txHashes):
			t.Errorf("ethclient.BlockByNumber(%d): hash %s, %d transactions", sb.number, gb.Hash(), len(gb.Transactions()))
		}
	}
	switch fx.Network {
	case "base", "optimism", "arbitrum", "polygon":
		if !ownTypes {
			t.Errorf("%s: no network-specific transaction type", fx.Network)
		}
	}
}
