package evmrpc

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"
)

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

// jsonRPCError is a JSON-RPC error as go-ethereum's client returns it.
type jsonRPCError struct {
	code int
	msg  string
	data any
}

func (e jsonRPCError) Error() string { return e.msg }

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
