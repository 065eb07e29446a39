package chainwatch

// A JSON-RPC stub node serving the fixtures in testdata/networks: blocks,
// receipts, logs and call traces in each network's published format, for
// tests of the chain reader against OP-stack, Arbitrum, Ethereum and Polygon
// payloads. testdata/networks/README.md describes the fixture files.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
)

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
