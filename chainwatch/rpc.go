package chainwatch

import (
	"github.com/paymentsd/paymentsd/internal/evmrpc"

	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rpc"
)

// Blocks, transactions and receipts are read as raw JSON-RPC answers into
// the few fields a payment needs, not through go-ethereum's types: those
// refuse the transaction types go-ethereum does not know (the OP stack's
// deposit transactions in every Base and Optimism block, Arbitrum's system
// transactions). What the engine relies on is checked as it is read
// (check.go): a block's number is the one asked for and its hash, on a
// chain whose headers are Ethereum's (Network.HeaderHash), is recomputed
// from its header's fields with go-ethereum's types.Header; elsewhere the
// node's own hash is checked against the blocks that link to it.

// rpcHeader is a block's header as eth_getBlockByNumber returns it, with
// its transactions' hashes (eth_getBlockByNumber(n, false)).
type rpcHeader struct {
	Number     hexutil.Uint64 `json:"number"`
	Hash       common.Hash    `json:"hash"`
	ParentHash common.Hash    `json:"parentHash"`
	Timestamp  hexutil.Uint64 `json:"timestamp"`
	LogsBloom  types.Bloom    `json:"logsBloom"`
	TxHashes   []common.Hash  `json:"transactions"`
}

// rpcBlock is a block with its transactions, eth_getBlockByNumber(n,
// true): read (txs), and as the node wrote them (raw, read again only
// for the few a check needs whole).
type rpcBlock struct {
	rpcHeader
	txs []rpcTx
	raw json.RawMessage
}

// rpcTx is a transaction of any type: the node names its sender, so no
// signature (which system transactions do not have) is read.
type rpcTx struct {
	Hash  common.Hash     `json:"hash"`
	Type  hexutil.Uint64  `json:"type"`
	From  common.Address  `json:"from"`
	To    *common.Address `json:"to"`
	Value *hexutil.Big    `json:"value"`
	Input hexutil.Bytes   `json:"input"`
	// Where it was mined, absent while pending.
	BlockHash   *common.Hash    `json:"blockHash"`
	BlockNumber *hexutil.Uint64 `json:"blockNumber"`
	Index       *hexutil.Uint64 `json:"transactionIndex"`
}

// rpcReceipt is a transaction's receipt. go-ethereum's types.Receipt does
// not serve: it has no sender, and it reads a log's missing block or
// transaction as zero, where checkReceipt tells a missing one from a
// wrong one.
type rpcReceipt struct {
	TxHash      common.Hash    `json:"transactionHash"`
	TxIndex     hexutil.Uint64 `json:"transactionIndex"`
	From        common.Address `json:"from"`
	Status      hexutil.Uint64 `json:"status"`
	BlockHash   common.Hash    `json:"blockHash"`
	BlockNumber hexutil.Uint64 `json:"blockNumber"`
	Logs        []rpcLog       `json:"logs"`
}

// rpcLog is a receipt's log, with where it says it is.
type rpcLog struct {
	Address     common.Address  `json:"address"`
	Topics      []common.Hash   `json:"topics"`
	Data        hexutil.Bytes   `json:"data"`
	LogIndex    hexutil.Uint    `json:"logIndex"`
	Removed     bool            `json:"removed"`
	BlockHash   *common.Hash    `json:"blockHash"`
	BlockNumber *hexutil.Uint64 `json:"blockNumber"`
	TxHash      *common.Hash    `json:"transactionHash"`
	TxIndex     *hexutil.Uint64 `json:"transactionIndex"`
}

func (l rpcLog) log() types.Log {
	return types.Log{Address: l.Address, Topics: l.Topics, Data: l.Data, Index: uint(l.LogIndex), Removed: l.Removed}
}

// value returns a transaction's value, zero when absent.
func (tx rpcTx) value() *big.Int {
	if tx.Value == nil {
		return new(big.Int)
	}
	return tx.Value.ToInt()
}

// blockArg is a block number as JSON-RPC takes it, or a tag.
func blockArg(n *big.Int) string {
	if n == nil {
		return "latest"
	}
	if n.Sign() < 0 {
		return rpc.BlockNumber(n.Int64()).String() // finalized, safe, ...
	}
	return hexutil.EncodeBig(n)
}

// call makes one raw call; a null answer is ethereum.NotFound.
func call[T any](ctx context.Context, c evmrpc.Client, method string, args ...any) (*T, error) {
	v := new(T)
	if err := c.Call(ctx, v, method, args...); err != nil {
		return nil, err
	}
	return v, nil
}

// reader reads one node's answers (the Client of an evmrpc.Client.Read)
// and checks each as it comes (check.go). recompute: the chain's headers
// are Ethereum's, and a block's hash is recomputed from them.
type reader struct {
	c         evmrpc.Client
	recompute bool
}

// block reads a block (n nil: the latest; negative: a tag), its header
// checked, and returns its transactions as the node wrote them (their
// hashes, or with full, the transactions). The header is read apart from
// the transactions, so that a block's JSON is parsed once and its header
// alone again for its hash.
func (r reader) block(ctx context.Context, n *big.Int, full bool) (*rpcHeader, json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if err := r.c.Call(ctx, &fields, "eth_getBlockByNumber", blockArg(n), full); err != nil {
		return nil, nil, err
	}
	h, err := r.checkHeader(headerJSON(fields), fields["hash"], n)
	return h, fields["transactions"], err
}

// headerJSON writes a block's fields but its transactions as one JSON
// object: its header. The values are the node's, as its answer held them
// (valid JSON: they were read from it); a key that is not a plain name is
// no header field and is left out.
func headerJSON(fields map[string]json.RawMessage) json.RawMessage {
	out := make([]byte, 0, 2048)
	out = append(out, '{')
	for k, v := range fields {
		if k == "transactions" || !plainName(k) {
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, '"')
		out = append(out, k...)
		out = append(out, '"', ':')
		out = append(out, v...)
	}
	return append(out, '}')
}

// plainName reports whether k is made of ASCII letters and digits alone,
// as every header field's name is.
func plainName(k string) bool {
	for _, c := range k {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return k != ""
}

// header reads a block's header (n nil: the latest; negative: a tag) with
// its transactions' hashes, checked.
func (r reader) header(ctx context.Context, n *big.Int) (*rpcHeader, error) {
	h, txs, err := r.block(ctx, n, false)
	if err != nil {
		return nil, err
	}
	if len(txs) > 0 {
		if err := json.Unmarshal(txs, &h.TxHashes); err != nil {
			return nil, fmt.Errorf("eth_getBlockByNumber: %w", err)
		}
	}
	return h, nil
}

// fullBlock reads a block with its transactions, checked: its header, and
// each transaction's place.
func (r reader) fullBlock(ctx context.Context, n uint64) (*rpcBlock, error) {
	h, txs, err := r.block(ctx, new(big.Int).SetUint64(n), true)
	if err != nil {
		return nil, err
	}
	b := &rpcBlock{rpcHeader: *h, raw: txs}
	if len(txs) > 0 {
		if err := json.Unmarshal(txs, &b.txs); err != nil {
			return nil, fmt.Errorf("eth_getBlockByNumber: transactions: %w", err)
		}
	}
	b.TxHashes = make([]common.Hash, len(b.txs))
	for i, tx := range b.txs {
		b.TxHashes[i] = tx.Hash
	}
	return b, checkPlaces(b)
}

// rawTx returns transaction i of the block as the node wrote it.
func (b *rpcBlock) rawTx(i int) (json.RawMessage, error) {
	var all []json.RawMessage
	if err := json.Unmarshal(b.raw, &all); err != nil || i >= len(all) {
		return nil, fmt.Errorf("eth_getBlockByNumber: transaction %d: %v", i, err)
	}
	return all[i], nil
}

// transaction reads a transaction by its hash, as the node wrote it too.
func (r reader) transaction(ctx context.Context, hash common.Hash) (*rpcTx, json.RawMessage, error) {
	var raw json.RawMessage
	if err := r.c.Call(ctx, &raw, "eth_getTransactionByHash", hash); err != nil {
		return nil, nil, err
	}
	var tx rpcTx
	if err := json.Unmarshal(raw, &tx); err != nil {
		return nil, nil, fmt.Errorf("eth_getTransactionByHash: %w", err)
	}
	return &tx, raw, nil
}

// receipt reads a transaction's receipt.
func receipt(ctx context.Context, c evmrpc.Client, hash common.Hash) (*rpcReceipt, error) {
	return call[rpcReceipt](ctx, c, "eth_getTransactionReceipt", hash)
}

// callFrame is one call of go-ethereum's callTracer output.
type callFrame struct {
	Type  string          `json:"type"`
	From  common.Address  `json:"from"`
	To    *common.Address `json:"to"`
	Value *hexutil.Big    `json:"value"`
	Error string          `json:"error"`
	Calls []callFrame     `json:"calls"`
}

// txTrace is one transaction's trace in debug_traceBlockByNumber's answer.
type txTrace struct {
	TxHash common.Hash `json:"txHash"`
	Result *callFrame  `json:"result"`
	Error  string      `json:"error"`
}

var callTracer = map[string]any{"tracer": "callTracer"}

// ErrNoTraces says a node does not serve the debug tracing calls a network
// is configured to read internal native transfers with.
var ErrNoTraces = errors.New("the node does not serve debug_traceBlockByNumber with the callTracer")

// traceErr names a refused trace call plainly.
func traceErr(err error) error {
	var re rpc.Error
	if errors.As(err, &re) && re.ErrorCode() == -32601 || err != nil && strings.Contains(err.Error(), "does not exist") {
		return fmt.Errorf("%w: %v", ErrNoTraces, err)
	}
	return err
}

// internalTransfers returns the native coin a transaction's internal calls
// moved, in the order of the calls: every call (or self-destruct) below
// the top one that carried value and did not fail, with a failed call's
// own calls left out since its failure undid them. They are numbered from
// 1 in that order (see InternalIndex).
func internalTransfers(top *callFrame) []internalTransfer {
	var out []internalTransfer
	var walk func(f *callFrame)
	walk = func(f *callFrame) {
		for i := range f.Calls {
			c := &f.Calls[i]
			if c.Error != "" {
				continue
			}
			if (c.Type == "CALL" || c.Type == "SELFDESTRUCT") && c.To != nil && c.Value != nil && c.Value.ToInt().Sign() > 0 {
				out = append(out, internalTransfer{From: c.From, To: *c.To, Amount: new(big.Int).Set(c.Value.ToInt())})
			}
			walk(c)
		}
	}
	if top != nil && top.Error == "" {
		walk(top)
	}
	return out
}

type internalTransfer struct {
	From, To common.Address
	Amount   *big.Int
}

// InternalIndex is the log index a transaction's n-th internal native
// transfer (n from 1) is recorded under: a native transfer has no log, so
// the top-level one is -1, a payer's claim -2, and internal ones -3, -4...
func InternalIndex(n int) int { return -2 - n }

// traceTransaction reads a transaction's calls.
func traceTransaction(ctx context.Context, c evmrpc.Client, hash common.Hash) (*callFrame, error) {
	f, err := call[callFrame](ctx, c, "debug_traceTransaction", hash, callTracer)
	return f, traceErr(err)
}

// traceBlock reads the calls of every transaction of a block.
func traceBlock(ctx context.Context, c evmrpc.Client, n uint64) ([]txTrace, error) {
	var out []txTrace
	err := c.Call(ctx, &out, "debug_traceBlockByNumber", hexutil.EncodeUint64(n), callTracer)
	return out, traceErr(err)
}
