package chainwatch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"
)

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
