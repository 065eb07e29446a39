package rpcproxy

// A proxy that lies: the node answers, rewritten the ways a lying or
// broken node (or someone on the path to it) would, for the tests of the
// engine's checks of its nodes' answers (docs/decisions.md, "Node answers
// are checked, not trusted"). EVM lies rewrite go-ethereum's JSON-RPC
// answers; Bitcoin lies btcd's raw blocks and transactions.

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
)

// Lie is a way the proxy lies about the chain.
type Lie int

const (
	// Honest: every answer as the node gives it.
	Honest Lie = iota
	// BlockHash: a block says another hash than its own
	// (eth_getBlockByNumber, eth_getBlockByHash), and its transactions
	// say it too.
	BlockHash
	// ParentLink: a block names another parent, and its hash is computed
	// again from its fields: a header that holds together in itself but
	// does not link to the block before it.
	ParentLink
	// ReceiptBlock: a transaction's receipt, and its logs, say the block
	// before theirs, by that block's number and real hash.
	ReceiptBlock
	// LogBlock: eth_getLogs' logs say the block before theirs, by that
	// block's number and real hash.
	LogBlock
	// BitcoinTx: a raw block's transactions pay twice what they do (each
	// output's value doubled, the coinbase's too when it is alone), its
	// header untouched.
	BitcoinTx
	// MerkleRoot: a raw block's header names another merkle root and is
	// mined again (regtest's work is easy) under a new hash, which
	// getblockhash answers for its height: a block with the work its bits
	// claim, whose transactions are not the ones its header commits to.
	MerkleRoot
	// TxID: a raw transaction pays twice what it does (each output's
	// value doubled): it no longer hashes to its ID.
	TxID
)

func (l Lie) String() string {
	return [...]string{"honest", "block-hash", "parent-link", "receipt-block", "log-block", "bitcoin-tx", "merkle-root", "txid"}[l]
}

// SetLie makes the proxy tell lie about the blocks from height from on
// (TxID: about every raw transaction); Honest stops it.
func (p *Proxy) SetLie(lie Lie, from uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lie, p.lieFrom = lie, from
	if p.forged == nil {
		p.forged = map[string]forgedBlock{}
	}
}

// lying returns the lie told now.
func (p *Proxy) lying() (Lie, uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lie, p.lieFrom
}

// rpcCall is a JSON-RPC request.
type rpcCall struct {
	ID     json.RawMessage   `json:"id"`
	Method string            `json:"method"`
	Params []json.RawMessage `json:"params"`
}

// answerLying answers a single JSON-RPC call with lie told about it, and
// reports false when the call is not one lie changes (a batch, another
// method): the caller forwards it as it is.
func (p *Proxy) answerLying(w http.ResponseWriter, r *http.Request, body []byte, lie Lie, from uint64) bool {
	var c rpcCall
	if err := json.Unmarshal(body, &c); err != nil || !lies(lie, c.Method) {
		return false
	}
	auth := r.Header.Get("Authorization")
	if result, ok := p.forgedAnswer(c); ok {
		p.lies.Add(1)
		writeAnswer(w, c.ID, result)
		return true
	}
	resp, err := p.ask(r.Context(), auth, body)
	if err != nil {
		http.Error(w, "rpcproxy: upstream: "+err.Error(), http.StatusBadGateway)
		return true
	}
	p.forwarded.Add(1)
	var answer map[string]json.RawMessage
	if err := json.Unmarshal(resp, &answer); err != nil || isNull(answer["result"]) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(resp) // an error, or nothing to lie about
		return true
	}
	result, changed, err := p.alter(r.Context(), auth, lie, from, c, answer["result"])
	if err != nil {
		http.Error(w, "rpcproxy: lying: "+err.Error(), http.StatusBadGateway)
		return true
	}
	if changed {
		p.lies.Add(1)
		answer["result"] = result
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(answer)
	return true
}

// lies reports whether lie changes answers to method.
func lies(lie Lie, method string) bool {
	switch lie {
	case BlockHash, ParentLink:
		return method == "eth_getBlockByNumber" || method == "eth_getBlockByHash"
	case ReceiptBlock:
		return method == "eth_getTransactionReceipt"
	case LogBlock:
		return method == "eth_getLogs"
	case BitcoinTx:
		return method == "getblock"
	case MerkleRoot:
		return method == "getblockhash" || method == "getblock" || method == "getblockheader"
	case TxID:
		return method == "getrawtransaction"
	}
	return false
}

func isNull(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }

func writeAnswer(w http.ResponseWriter, id, result json.RawMessage) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]json.RawMessage{"jsonrpc": json.RawMessage(`"2.0"`), "id": id, "result": result,
		"error": json.RawMessage("null")})
}

// ask sends a JSON-RPC request to the node, with the caller's credentials,
// and returns its answer's body.
func (p *Proxy) ask(ctx context.Context, auth string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.upstream, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(io.LimitReader(resp.Body, 64<<20))
}

// result asks the node one call and decodes its result into v.
func (p *Proxy) result(ctx context.Context, auth string, v any, method string, params ...any) error {
	version := "1.0" // btcd's
	if strings.HasPrefix(method, "eth_") {
		version = "2.0"
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": version, "id": 0, "method": method, "params": params})
	resp, err := p.ask(ctx, auth, body)
	if err != nil {
		return err
	}
	var answer struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(resp, &answer); err != nil {
		return err
	}
	if !isNull(answer.Error) || isNull(answer.Result) {
		return fmt.Errorf("%s: %s", method, answer.Error)
	}
	return json.Unmarshal(answer.Result, v)
}

// alter tells lie in the result of call c, about the blocks from height
// from on; changed says it did.
func (p *Proxy) alter(ctx context.Context, auth string, lie Lie, from uint64, c rpcCall, result json.RawMessage) (json.RawMessage, bool, error) {
	switch lie {
	case BlockHash, ParentLink:
		return alterBlock(lie, from, result)
	case ReceiptBlock:
		return p.alterReceipt(ctx, auth, from, result)
	case LogBlock:
		return p.alterLogs(ctx, auth, from, result)
	case BitcoinTx:
		return p.alterRawBlock(ctx, auth, from, c, result)
	case MerkleRoot:
		return p.forgeAt(ctx, auth, from, c, result)
	case TxID:
		return alterRawTx(c, result)
	}
	return result, false, nil
}

// alterBlock rewrites an EVM block of height from or above: another hash
// (BlockHash), or another parent with the hash computed again
// (ParentLink); its transactions, when listed whole, say the new hash.
func alterBlock(lie Lie, from uint64, result json.RawMessage) (json.RawMessage, bool, error) {
	var b map[string]json.RawMessage
	if err := json.Unmarshal(result, &b); err != nil {
		return nil, false, err
	}
	n, err := hexNumber(b["number"])
	if err != nil || n < from {
		return result, false, err
	}
	var hash common.Hash
	if lie == BlockHash {
		var old common.Hash
		if err := json.Unmarshal(b["hash"], &old); err != nil {
			return nil, false, err
		}
		hash = crypto.Keccak256Hash(old[:])
	} else {
		var parent common.Hash
		if err := json.Unmarshal(b["parentHash"], &parent); err != nil {
			return nil, false, err
		}
		b["parentHash"] = mustJSON(crypto.Keccak256Hash(parent[:]))
		var h types.Header
		if err := json.Unmarshal(mustJSON(b), &h); err != nil {
			return nil, false, err
		}
		hash = h.Hash()
	}
	b["hash"] = mustJSON(hash)
	var txs []map[string]json.RawMessage
	if json.Unmarshal(b["transactions"], &txs) == nil {
		for _, tx := range txs {
			tx["blockHash"] = mustJSON(hash)
		}
		b["transactions"] = mustJSON(txs)
	}
	return mustJSON(b), true, nil
}

// alterReceipt moves a receipt of a block of height from or above, and
// its logs, to the block before.
func (p *Proxy) alterReceipt(ctx context.Context, auth string, from uint64, result json.RawMessage) (json.RawMessage, bool, error) {
	var r map[string]json.RawMessage
	if err := json.Unmarshal(result, &r); err != nil {
		return nil, false, err
	}
	n, err := hexNumber(r["blockNumber"])
	if err != nil || n < from || n == 0 {
		return result, false, err
	}
	number, hash, err := p.blockBefore(ctx, auth, n)
	if err != nil {
		return nil, false, err
	}
	r["blockNumber"], r["blockHash"] = number, hash
	var logs []map[string]json.RawMessage
	if err := json.Unmarshal(r["logs"], &logs); err != nil {
		return nil, false, err
	}
	for _, l := range logs {
		l["blockNumber"], l["blockHash"] = number, hash
	}
	r["logs"] = mustJSON(logs)
	return mustJSON(r), true, nil
}

// alterLogs moves the logs of blocks of height from or above to the
// blocks before theirs.
func (p *Proxy) alterLogs(ctx context.Context, auth string, from uint64, result json.RawMessage) (json.RawMessage, bool, error) {
	var logs []map[string]json.RawMessage
	if err := json.Unmarshal(result, &logs); err != nil {
		return nil, false, err
	}
	changed := false
	for _, l := range logs {
		n, err := hexNumber(l["blockNumber"])
		if err != nil {
			return nil, false, err
		}
		if n < from || n == 0 {
			continue
		}
		if l["blockNumber"], l["blockHash"], err = p.blockBefore(ctx, auth, n); err != nil {
			return nil, false, err
		}
		changed = true
	}
	return mustJSON(logs), changed, nil
}

// blockBefore is the number and hash of block n-1, as the node has it.
func (p *Proxy) blockBefore(ctx context.Context, auth string, n uint64) (number, hash json.RawMessage, err error) {
	var b struct {
		Hash common.Hash `json:"hash"`
	}
	if err := p.result(ctx, auth, &b, "eth_getBlockByNumber", hexutil.EncodeUint64(n-1), false); err != nil {
		return nil, nil, err
	}
	return mustJSON(hexutil.Uint64(n - 1)), mustJSON(b.Hash), nil
}

// alterRawBlock doubles what the transactions of a raw Bitcoin block of
// height from or above pay, its header untouched.
func (p *Proxy) alterRawBlock(ctx context.Context, auth string, from uint64, c rpcCall, result json.RawMessage) (json.RawMessage, bool, error) {
	var id string
	if len(c.Params) == 0 || json.Unmarshal(c.Params[0], &id) != nil {
		return result, false, nil
	}
	var header struct {
		Height uint64 `json:"height"`
	}
	if err := p.result(ctx, auth, &header, "getblockheader", id, true); err != nil {
		return nil, false, err
	}
	if header.Height < from {
		return result, false, nil
	}
	var b wire.MsgBlock
	if err := decodeHex(result, &b); err != nil {
		return result, false, nil // not the raw form (verbosity 1 or 2)
	}
	txs := b.Transactions
	if len(txs) > 1 {
		txs = txs[1:]
	}
	for _, tx := range txs {
		doubleOutputs(tx)
	}
	return encodeHex(&b), true, nil
}

// alterRawTx doubles what a raw Bitcoin transaction pays.
func alterRawTx(c rpcCall, result json.RawMessage) (json.RawMessage, bool, error) {
	var tx wire.MsgTx
	if err := decodeHex(result, &tx); err != nil {
		return result, false, nil // not the raw form
	}
	doubleOutputs(&tx)
	return encodeHex(&tx), true, nil
}

func doubleOutputs(tx *wire.MsgTx) {
	for _, out := range tx.TxOut {
		out.Value *= 2
	}
}

// forgedBlock is a block MerkleRoot mined again, under its new hash.
type forgedBlock struct {
	block  json.RawMessage // raw, hex, as getblock answers
	header json.RawMessage // raw, hex, as getblockheader answers
}

// forgeAt answers getblockhash for a height from or above with the hash
// of the block forged from the node's (forgedAnswer answers for it then).
func (p *Proxy) forgeAt(ctx context.Context, auth string, from uint64, c rpcCall, result json.RawMessage) (json.RawMessage, bool, error) {
	var height uint64
	if c.Method != "getblockhash" || len(c.Params) == 0 || json.Unmarshal(c.Params[0], &height) != nil || height < from {
		return result, false, nil
	}
	var real string
	if err := json.Unmarshal(result, &real); err != nil {
		return nil, false, err
	}
	var raw json.RawMessage
	if err := p.result(ctx, auth, &raw, "getblock", real, 0); err != nil {
		return nil, false, err
	}
	var b wire.MsgBlock
	if err := decodeHex(raw, &b); err != nil {
		return nil, false, err
	}
	b.Header.MerkleRoot = chainhash.DoubleHashH(b.Header.MerkleRoot[:])
	target := blockchain.CompactToBig(b.Header.Bits)
	for {
		h := b.Header.BlockHash()
		if blockchain.HashToBig(&h).Cmp(target) <= 0 {
			break
		}
		b.Header.Nonce++
	}
	hash := b.Header.BlockHash()
	var hb bytes.Buffer
	_ = b.Header.Serialize(&hb)
	p.mu.Lock()
	p.forged[hash.String()] = forgedBlock{block: encodeHex(&b), header: mustJSON(hex.EncodeToString(hb.Bytes()))}
	p.mu.Unlock()
	return mustJSON(hash.String()), true, nil
}

// forgedAnswer answers getblock and getblockheader (raw) for a block
// forgeAt forged, which the node does not know.
func (p *Proxy) forgedAnswer(c rpcCall) (json.RawMessage, bool) {
	if c.Method != "getblock" && c.Method != "getblockheader" || len(c.Params) == 0 {
		return nil, false
	}
	var id string
	if json.Unmarshal(c.Params[0], &id) != nil {
		return nil, false
	}
	p.mu.Lock()
	f, ok := p.forged[id]
	p.mu.Unlock()
	if !ok {
		return nil, false
	}
	if c.Method == "getblock" {
		return f.block, true
	}
	return f.header, true
}

func decodeHex(raw json.RawMessage, v interface{ Deserialize(io.Reader) error }) error {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return err
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return err
	}
	return v.Deserialize(bytes.NewReader(b))
}

func encodeHex(v interface{ Serialize(io.Writer) error }) json.RawMessage {
	var b bytes.Buffer
	_ = v.Serialize(&b)
	return mustJSON(hex.EncodeToString(b.Bytes()))
}

// hexNumber reads a JSON-RPC quantity ("0x1a").
func hexNumber(raw json.RawMessage) (uint64, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return 0, err
	}
	return strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64)
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
