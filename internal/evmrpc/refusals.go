// How providers word a refusal: for a call's rate, for an eth_getLogs
// range; read from go-ethereum's errors, which carry the JSON-RPC
// error's code and data or the HTTP status and body.

package evmrpc

import (
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/rpc"
)

// rateLimitWords are how providers word a rate-limit refusal (lower
// case): "rate limit exceeded" (Tenderly), "over rate limit" (Base's
// public node, -32016), "exceeded project rate limit" and "daily request
// count exceeded, request rate limited" (Infura), "project ID request rate
// exceeded" (Infura), "Your app has exceeded its compute units per second
// capacity" (Alchemy, code 429), "request limit reached" (QuickNode,
// -32007), "Too Many Requests" (many, and the HTTP status text).
var rateLimitWords = []string{
	"rate limit", "rate-limit", "too many requests", "request rate exceeded",
	"compute units per second", "request limit reached", "daily request count exceeded",
}

// rateLimitRefusal reports whether err says the endpoint refuses calls
// for its rate limit: an HTTP 429, a JSON-RPC error coded 429 (Alchemy) or
// -32005 (EIP-1474's "limit exceeded", Infura's rate limits), or one of
// rateLimitWords. -32005 also carries Infura's "query returned more than
// 10000 results", which is about the call, not the rate: eth_getLogs
// refusals never count. hint is the backoff the error names (Infura's
// data.backoff_seconds), zero when none.
func rateLimitRefusal(err error) (hint time.Duration, ok bool) {
	if err == nil || errors.Is(err, ethereum.NotFound) {
		return 0, false
	}
	if _, _, refused := logRangeRefusal(err); refused {
		return 0, false
	}
	var he rpc.HTTPError
	var re rpc.Error
	text := errText(err)
	switch {
	case errors.As(err, &he) && he.StatusCode == http.StatusTooManyRequests:
	case errors.As(err, &re) && (re.ErrorCode() == http.StatusTooManyRequests || re.ErrorCode() == -32005):
	case containsAny(text, rateLimitWords):
	default:
		return 0, false
	}
	return backoffHint(err), true
}

// backoffHint reads the backoff_seconds an Infura rate-limit error carries
// in its data (as data.backoff_seconds or data.rate.backoff_seconds), from
// a JSON-RPC error or from the body of an HTTP 429.
func backoffHint(err error) time.Duration {
	var data any
	var de rpc.DataError
	var he rpc.HTTPError
	if errors.As(err, &de) {
		data = de.ErrorData()
	} else if errors.As(err, &he) {
		var body struct {
			Error struct {
				Data any `json:"data"`
			} `json:"error"`
		}
		if json.Unmarshal(he.Body, &body) == nil {
			data = body.Error.Data
		}
	}
	var find func(v any, depth int) float64
	find = func(v any, depth int) float64 {
		m, ok := v.(map[string]any)
		if !ok || depth > 2 {
			return 0
		}
		if s, ok := m["backoff_seconds"].(float64); ok {
			return s
		}
		for _, sub := range m {
			if s := find(sub, depth+1); s > 0 {
				return s
			}
		}
		return 0
	}
	s := find(data, 0)
	if s <= 0 {
		return 0
	}
	return min(time.Duration(s*float64(time.Second)), maxRetryAfter)
}

// errText is an error's message with its JSON-RPC data (where providers
// such as thirdweb put the reason) and, for an HTTP error, its body, in
// lower case.
func errText(err error) string {
	s := err.Error()
	var de rpc.DataError
	if errors.As(err, &de) {
		switch d := de.ErrorData().(type) {
		case nil:
		case string:
			s += " " + d
		default:
			if b, err := json.Marshal(d); err == nil {
				s += " " + string(b)
			}
		}
	}
	return strings.ToLower(s)
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// logRangeWords are how providers word an eth_getLogs refusal for its
// block range or its result count (lower case), with where they come
// from:
var logRangeWords = []string{
	"query returned more than",                // Infura (-32005), zkSync, Polygon zkEVM, thirdweb: "query returned more than 10000 results. Try with this block range [0x…, 0x…]."
	"log response size exceeded",              // Alchemy (-32602): "Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range … this block range should work: [0x…, 0x…]"
	"eth_getlogs requests with up to a",       // Alchemy (-32600, HTTP 400): "You can make eth_getLogs requests with up to a 500 block range. Based on your parameters, this block range should work: [0x…, 0x…]"
	"eth_getlogs is limited to",               // QuickNode (-32614, HTTP 413) and Blast: "eth_getLogs is limited to a 10,000 range"; 1RPC: "… to a 1000 blocks range"; BlockPI: "… to 1024 block range"
	"eth_getlogs range is too large",          // Merkle: "eth_getLogs range is too large, max is 1k blocks"
	"block range is too wide",                 // Ankr (-32600); Frontier/Moonbeam: "block range is too wide (maximum 1024)"
	"exceed maximum block range",              // geth --rpc.rangelimit (-32602): "exceed maximum block range 1000"; BSC, PublicNode: "exceed maximum block range: 50000"
	"block range limit exceeded",              // Chainstack: "Block range limit exceeded."
	"range too large",                         // Cloudflare (-32047): "'fromBlock'-'toBlock' range too large. Max range: 800"; Base: "block range too large"
	"block range is too large",                // OP Mainnet: "Block range is too large"
	"query exceeds max results",               // LlamaRPC, Ankr: "query exceeds max results 20000, retry with the range 24383075-24383096"
	"query exceeds max block range",           // Hyperliquid, dRPC: "query exceeds max block range 100000"
	"logs matched by query exceeds limit",     // Arbitrum (Nitro): "logs matched by query exceeds limit of 10000"
	"exceeds the range allowed for your plan", // Blast API, paid plans: "… exceeds the range allowed for your plan (5000 > 500)"
	"please limit the query to at most",       // Coinbase (Base nodes, -32005): "please limit the query to at most 1000 blocks"
	"is bigger than range limit",              // thirdweb (-32602, in data): "range 20000 is bigger than range limit 2000"
	"response size should not greater than",   // 1RPC: "response size should not greater than 10000000 bytes"
	"backend response too large",              // OP Mainnet
	"block range too high",                    // Candle (-32600)
	"block range is bigger than",              // Scroll's geth: "block range is bigger than maxBlockRange"
	"larger than max block range",             // Morph: "block range is larger than max block range, block range = 5120, max block range = 5000"
	"blocks are not supported",                // dRPC free tier (code 35): "ranges over 10000 blocks are not supported on freetier"
	"requested too many blocks",               // Avalanche C-Chain (-32000): "requested too many blocks from 0 to 4095, maximum is set to 2048"
	"too many logs requested",                 // "Too many logs requested. Max logs per response is 10000"
	"maximum allowed is",                      // "Block range too large: maximum allowed is 1000 blocks"
	"max range",                               // Cloudflare, above
}

var (
	// infuraRangeLimit is Infura's block-range refusal (-32602): "range
	// 1000000 exceeds limit of 10000" (the phrase alone would also match
	// Arbitrum's result-count one).
	infuraRangeLimit = regexp.MustCompile(`range \d+ exceeds limit of ([\d,]+)`)
	// suggestedRange is the range Infura, Alchemy, thirdweb and zkSync say
	// would work: "[0x112a880, 0x112a908]".
	suggestedRange = regexp.MustCompile(`\[\s*0x([0-9a-f]+)\s*,\s*0x([0-9a-f]+)\s*\]`)
	// retryRange is LlamaRPC's and Ankr's: "retry with the range 1-2".
	retryRange = regexp.MustCompile(`retry with the range (\d+)-(\d+)`)
	// statedLimits are the block-range limits the refusals above state.
	statedLimits = []*regexp.Regexp{
		infuraRangeLimit,
		regexp.MustCompile(`eth_getlogs is limited to (?:a )?([\d,]+k?)`),
		regexp.MustCompile(`up to a ([\d,]+k?) block range`),
		regexp.MustCompile(`max is ([\d,]+k?) blocks`),
		regexp.MustCompile(`maximum block range:? ?([\d,]+)`),
		regexp.MustCompile(`max block range(?: is| =)? ?([\d,]+)`),
		regexp.MustCompile(`max range:? ?([\d,]+)`),
		regexp.MustCompile(`at most ([\d,]+) blocks`),
		regexp.MustCompile(`range limit ([\d,]+)`),
		regexp.MustCompile(`allowed for your plan \(\d+ > (\d+)\)`),
		regexp.MustCompile(`\(maximum ([\d,]+)\)`),
		regexp.MustCompile(`maximum is set to ([\d,]+)`),
		regexp.MustCompile(`ranges over ([\d,]+) blocks`),
		regexp.MustCompile(`maximum allowed is ([\d,]+) blocks`),
	}
)

// logRangeRefusal reports whether err is an endpoint refusing an
// eth_getLogs call for its block range or its result count. span is the
// number of blocks the refusal suggests asking for (Infura's and Alchemy's
// "[0x…, 0x…]", LlamaRPC's "retry with the range a-b") or else states, zero
// when it names none; limit is a block-range limit the endpoint states,
// which holds for every query, unlike a suggestion fitted to this query's
// result count.
func logRangeRefusal(err error) (span, limit uint64, ok bool) {
	if err == nil {
		return 0, 0, false
	}
	text := errText(err)
	if !containsAny(text, logRangeWords) && !infuraRangeLimit.MatchString(text) {
		return 0, 0, false
	}
	// In Alchemy's response-size refusal, "up to a 2K block range" is one
	// of two ways to stay under its cap, not a limit of every query.
	if !strings.Contains(text, "log response size exceeded") {
		for _, re := range statedLimits {
			if m := re.FindStringSubmatch(text); m != nil {
				if n, ok := parseCount(m[1]); ok && n > 0 {
					limit = n
					break
				}
			}
		}
	}
	for _, re := range []*regexp.Regexp{suggestedRange, retryRange} {
		m := re.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		base := 16
		if re == retryRange {
			base = 10
		}
		a, errA := strconv.ParseUint(m[1], base, 64)
		b, errB := strconv.ParseUint(m[2], base, 64)
		if errA == nil && errB == nil && b >= a {
			return b - a + 1, limit, true
		}
	}
	return limit, limit, true
}

// parseCount reads "10,000" or "2k".
func parseCount(s string) (uint64, bool) {
	s = strings.ReplaceAll(s, ",", "")
	mult := uint64(1)
	if strings.HasSuffix(s, "k") {
		mult, s = 1000, strings.TrimSuffix(s, "k")
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n > 1<<40 {
		return 0, false
	}
	return n * mult, true
}
