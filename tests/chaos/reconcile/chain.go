// Package reconcile checks the engine's records against the chain after a
// reconciliation run: every transfer to a deposit address counted once, in
// its own session, for its exact amount; every session's outcome following
// from what was paid and when; every state change with one event.
//
// It reads the chain with its own code, block by block over plain JSON-RPC
// (a Bitcoin node with btcd's own client library: ReadBitcoin), and the
// engine's records with its own SQL, and shares nothing with the engine's
// chainwatch, payment or store packages, so that it cannot share their
// blind spots.
package reconcile

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/rpc"
)

var (
	// transferTopic is the ERC-20 Transfer(address,address,uint256) event.
	transferTopic = crypto.Keccak256Hash([]byte("Transfer(address,address,uint256)"))
	// nativeSentTopic is the dev multisend's NativeSent(address,uint256):
	// the only trace in a receipt of a native payment made by an internal
	// call (contracts/DevMultisend.sol).
	nativeSentTopic = crypto.Keccak256Hash([]byte("NativeSent(address,uint256)"))
	// balanceOfSelector is the ERC-20 balanceOf(address) selector.
	balanceOfSelector = crypto.Keccak256([]byte("balanceOf(address)"))[:4]
)

// Transfer is one payment to a watched address that the canonical chain
// shows: a transaction's own value (LogIndex -1), a token Transfer log, or
// a native payment made by the dev multisend's internal call (Internal).
type Transfer struct {
	TxHash    common.Hash
	LogIndex  int
	Block     uint64
	BlockHash common.Hash
	Time      uint64 // the block's timestamp, in seconds
	From, To  common.Address
	Token     common.Address // zero for the native coin
	Amount    *big.Int
	Internal  bool
}

// Key is the transfer's identity on its chain: transaction hash and log
// index (-1 for a transaction's own value), as the engine keys its records.
func (t Transfer) Key() string { return txKey(t.TxHash.Hex(), t.LogIndex) }

func txKey(hash string, logIndex int) string {
	return fmt.Sprintf("%s/%d", strings.ToLower(hash), logIndex)
}

// Chain is what the reconciler read of the canonical chain.
type Chain struct {
	ChainID   int64
	From      uint64 // first block read
	Head      uint64 // last block read
	Blocks    int
	Transfers []Transfer
	// Outgoing are the transfers made from a treasury (ReadChainOut):
	// money out, whoever it pays.
	Outgoing []Transfer
	// Treasuries are the addresses whose transfers Outgoing holds.
	Treasuries []common.Address
	// Balances of every watched address at Head: of the native coin and of
	// each token (by token address).
	Native map[common.Address]*big.Int
	Tokens map[common.Address]map[common.Address]*big.Int
	// Bitcoin is what was read of the Bitcoin node, if the run pays
	// bitcoin (ReadBitcoin).
	Bitcoin *BitcoinChain
}

type rpcBlock struct {
	Number       hexutil.Uint64 `json:"number"`
	Hash         common.Hash    `json:"hash"`
	ParentHash   common.Hash    `json:"parentHash"`
	Timestamp    hexutil.Uint64 `json:"timestamp"`
	Transactions []rpcTx        `json:"transactions"`
}

type rpcTx struct {
	Hash  common.Hash     `json:"hash"`
	From  common.Address  `json:"from"`
	To    *common.Address `json:"to"`
	Value *hexutil.Big    `json:"value"`
}

// errMoved means the chain changed under the reader (a reorg while
// reading); the read starts over.
var errMoved = errors.New("the chain moved while it was read")

// ReadChain reads the canonical chain at url from block from to the head:
// every transfer to a watched address (native value, Transfer logs of the
// given tokens, the dev multisend's internal native payments) and the
// watched addresses' balances at the head. It checks that each block's
// parent is the block read before it, and starts over if a reorg happens
// while it reads.
func ReadChain(ctx context.Context, url string, from uint64, watched []common.Address, tokens []common.Address) (*Chain, error) {
	return ReadChainOut(ctx, url, from, watched, nil, tokens)
}

// ReadChainOut is ReadChain that also reads every transfer made from one
// of treasuries (native value, Transfer logs of the tokens) into
// Outgoing, whatever address it pays: the money out to match to the
// engine's refunds and payouts.
func ReadChainOut(ctx context.Context, url string, from uint64, watched, treasuries, tokens []common.Address) (*Chain, error) {
	c, err := rpc.DialContext(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("reconcile: dial %s: %w", url, err)
	}
	defer c.Close()
	for attempt := 1; ; attempt++ {
		ch, err := readChain(ctx, c, from, watched, treasuries, tokens)
		if errors.Is(err, errMoved) && attempt < 5 {
			continue
		}
		return ch, err
	}
}

func readChain(ctx context.Context, c *rpc.Client, from uint64, watched, treasuries, tokens []common.Address) (*Chain, error) {
	var id hexutil.Uint64
	if err := c.CallContext(ctx, &id, "eth_chainId"); err != nil {
		return nil, fmt.Errorf("reconcile: chain id: %w", err)
	}
	var head hexutil.Uint64
	if err := c.CallContext(ctx, &head, "eth_blockNumber"); err != nil {
		return nil, fmt.Errorf("reconcile: head: %w", err)
	}
	isWatched := make(map[common.Address]bool, len(watched))
	for _, a := range watched {
		isWatched[a] = true
	}
	isToken := make(map[common.Address]bool, len(tokens))
	for _, t := range tokens {
		isToken[t] = true
	}
	isTreasury := make(map[common.Address]bool, len(treasuries))
	for _, a := range treasuries {
		isTreasury[a] = true
	}
	out := &Chain{ChainID: int64(id), From: from, Head: uint64(head), Treasuries: treasuries}
	// Balances first: the node keeps the state of recent blocks only.
	if err := readBalances(ctx, c, out, watched, tokens); err != nil {
		return nil, err
	}
	var parent common.Hash
	for n := from; n <= uint64(head); n++ {
		var b *rpcBlock
		if err := c.CallContext(ctx, &b, "eth_getBlockByNumber", hexutil.EncodeUint64(n), true); err != nil {
			return nil, fmt.Errorf("reconcile: block %d: %w", n, err)
		}
		if b == nil {
			return nil, fmt.Errorf("reconcile: block %d: %w", n, errMoved)
		}
		if n > from && b.ParentHash != parent {
			return nil, fmt.Errorf("reconcile: block %d's parent is not block %d: %w", n, n-1, errMoved)
		}
		parent = b.Hash
		out.Blocks++
		if len(b.Transactions) == 0 {
			continue
		}
		receipts := make([]*types.Receipt, len(b.Transactions))
		batch := make([]rpc.BatchElem, len(b.Transactions))
		for i, tx := range b.Transactions {
			batch[i] = rpc.BatchElem{Method: "eth_getTransactionReceipt", Args: []any{tx.Hash}, Result: &receipts[i]}
		}
		if err := c.BatchCallContext(ctx, batch); err != nil {
			return nil, fmt.Errorf("reconcile: receipts of block %d: %w", n, err)
		}
		for i, tx := range b.Transactions {
			if batch[i].Error != nil {
				return nil, fmt.Errorf("reconcile: receipt of %s: %w", tx.Hash, batch[i].Error)
			}
			r := receipts[i]
			if r == nil || r.BlockHash != b.Hash {
				return nil, fmt.Errorf("reconcile: receipt of %s is not in block %d: %w", tx.Hash, n, errMoved)
			}
			if r.Status != types.ReceiptStatusSuccessful {
				continue // reverted: it moved nothing
			}
			base := Transfer{TxHash: tx.Hash, Block: n, BlockHash: b.Hash, Time: uint64(b.Timestamp)}
			if tx.To != nil && tx.Value != nil && tx.Value.ToInt().Sign() > 0 {
				t := base
				t.LogIndex, t.From, t.To, t.Amount = -1, tx.From, *tx.To, new(big.Int).Set(tx.Value.ToInt())
				if isWatched[t.To] {
					out.Transfers = append(out.Transfers, t)
				}
				if isTreasury[t.From] {
					out.Outgoing = append(out.Outgoing, t)
				}
			}
			for _, l := range r.Logs {
				if l.Removed || len(l.Topics) == 0 {
					continue
				}
				t := base
				t.LogIndex, t.Amount = int(l.Index), new(big.Int).SetBytes(l.Data)
				switch {
				case l.Topics[0] == transferTopic && isToken[l.Address] && len(l.Topics) == 3:
					t.From, t.To, t.Token = topicAddress(l.Topics[1]), topicAddress(l.Topics[2]), l.Address
				case l.Topics[0] == nativeSentTopic && len(l.Topics) == 2:
					t.From, t.To, t.Internal = l.Address, topicAddress(l.Topics[1]), true
				default:
					continue
				}
				if isWatched[t.To] {
					out.Transfers = append(out.Transfers, t)
				}
				if !t.Internal && isTreasury[t.From] {
					out.Outgoing = append(out.Outgoing, t)
				}
			}
		}
	}
	return out, nil
}

func topicAddress(h common.Hash) common.Address { return common.BytesToAddress(h[12:]) }

// readBalances reads every watched address's balances at the head.
func readBalances(ctx context.Context, c *rpc.Client, out *Chain, watched, tokens []common.Address) error {
	at := hexutil.EncodeUint64(out.Head)
	out.Native = make(map[common.Address]*big.Int, len(watched))
	out.Tokens = make(map[common.Address]map[common.Address]*big.Int, len(tokens))
	var batch []rpc.BatchElem
	native := make([]hexutil.Big, len(watched))
	for i, a := range watched {
		batch = append(batch, rpc.BatchElem{Method: "eth_getBalance", Args: []any{a, at}, Result: &native[i]})
	}
	held := make([][]hexutil.Bytes, len(tokens))
	for j, tok := range tokens {
		held[j] = make([]hexutil.Bytes, len(watched))
		for i, a := range watched {
			data := append(append([]byte{}, balanceOfSelector...), common.LeftPadBytes(a.Bytes(), 32)...)
			call := map[string]any{"to": tok, "data": hexutil.Bytes(data)}
			batch = append(batch, rpc.BatchElem{Method: "eth_call", Args: []any{call, at}, Result: &held[j][i]})
		}
	}
	for start := 0; start < len(batch); start += 200 {
		part := batch[start:min(start+200, len(batch))]
		if err := c.BatchCallContext(ctx, part); err != nil {
			return fmt.Errorf("reconcile: balances: %w", err)
		}
		for _, e := range part {
			if e.Error != nil {
				return fmt.Errorf("reconcile: %s %v: %w", e.Method, e.Args, e.Error)
			}
		}
	}
	for i, a := range watched {
		out.Native[a] = new(big.Int).Set(native[i].ToInt())
	}
	for j, tok := range tokens {
		out.Tokens[tok] = make(map[common.Address]*big.Int, len(watched))
		for i, a := range watched {
			out.Tokens[tok][a] = new(big.Int).SetBytes(held[j][i])
		}
	}
	return nil
}
