package chainwatch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
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
