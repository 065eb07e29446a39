// Package btcscan reads a Bitcoin node (Bitcoin Core or btcd, over
// JSON-RPC: btcrpc) for payments to watched addresses: the outputs of the blocks of
// a range, and of the transactions in the node's mempool. Every output to
// a watched address counts on its own, several in one transaction too.
// The RPC calls of a range are two per block (its hash and the block
// itself, raw), and the mempool's one listing plus one raw transaction per
// transaction not seen before: none depends on how many addresses are
// watched, which are looked up once per range or mempool read.
package btcscan

import (
	"context"
	"errors"
	"fmt"

	"github.com/btcsuite/btcd/btcjson"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"

	"github.com/paymentsd/paymentsd/internal/btcrpc"
)

// Node is what the scanner asks a node; btcrpc.Failover is one.
type Node interface {
	BlockCount(ctx context.Context) (int64, error)
	BlockHash(ctx context.Context, height int64) (*chainhash.Hash, error)
	Block(ctx context.Context, hash *chainhash.Hash) (*wire.MsgBlock, error)
	RawMempool(ctx context.Context) ([]*chainhash.Hash, error)
	RawTransaction(ctx context.Context, txid *chainhash.Hash) (*wire.MsgTx, error)
}

// Output is a payment to a watched address: one output of a transaction.
type Output struct {
	TxID    chainhash.Hash
	Vout    uint32
	Address string
	Sats    int64
	// Block is the block that holds the transaction; zero for a
	// transaction in the mempool.
	Block Block
	// Replaceable tells whether the transaction signals that its sender
	// may replace it (BIP125): a mempool payment that may still vanish.
	Replaceable bool
}

// Block is a scanned block.
type Block struct {
	Height int64
	Hash   chainhash.Hash
	// Time is the block's timestamp (Unix seconds).
	Time int64
}

// Watchlist tells which of the addresses a read pays are watched.
type Watchlist func(ctx context.Context, addresses []string) (watched map[string]bool, err error)

// ErrReorged says a scanned range does not chain onto its parent: a
// block left the chain under the scan.
var ErrReorged = errors.New("the blocks do not chain onto the cursor's: the chain was reorganised")

// Scanner reads one network's node.
type Scanner struct {
	Node   Node
	Params *chaincfg.Params
}

// Head returns the height of the node's best block.
func (s Scanner) Head(ctx context.Context) (int64, error) { return s.Node.BlockCount(ctx) }

// Canonical reports whether b is still the node's block at its height.
func (s Scanner) Canonical(ctx context.Context, b Block) (bool, error) {
	h, err := s.Node.BlockHash(ctx, b.Height)
	if btcrpc.OutOfRange(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return *h == b.Hash, nil
}

// Scan reads the blocks from..to (inclusive) and returns them with their
// outputs to watched addresses. The blocks must chain onto each other and
// onto parent when it is not zero; otherwise ErrReorged.
func (s Scanner) Scan(ctx context.Context, from, to int64, parent chainhash.Hash, watch Watchlist) ([]Block, []Output, error) {
	var blocks []Block
	var txs []txIn
	prev := parent
	for h := from; h <= to; h++ {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		hash, err := s.Node.BlockHash(ctx, h)
		if err != nil {
			return nil, nil, fmt.Errorf("block %d: %w", h, err)
		}
		mb, err := s.Node.Block(ctx, hash)
		if err != nil {
			return nil, nil, fmt.Errorf("block %d: %w", h, err)
		}
		if prev != (chainhash.Hash{}) && mb.Header.PrevBlock != prev {
			return nil, nil, ErrReorged
		}
		b := Block{Height: h, Hash: *hash, Time: mb.Header.Timestamp.Unix()}
		blocks = append(blocks, b)
		for _, tx := range mb.Transactions {
			txs = append(txs, txIn{tx: tx, block: b})
		}
		prev = *hash
	}
	outs, err := s.outputs(ctx, txs, watch)
	return blocks, outs, err
}

// Mempool reads the node's mempool and returns the outputs to watched
// addresses of the transactions not in seen, and every transaction in the
// mempool now (the next read's seen). A transaction seen before and no
// longer there was mined, replaced or double-spent: the follower of its
// payments tells which.
func (s Scanner) Mempool(ctx context.Context, seen map[chainhash.Hash]bool, watch Watchlist) ([]Output, map[chainhash.Hash]bool, error) {
	ids, err := s.Node.RawMempool(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("mempool: %w", err)
	}
	now := make(map[chainhash.Hash]bool, len(ids))
	var txs []txIn
	for _, id := range ids {
		now[*id] = true
		if seen[*id] {
			continue
		}
		tx, err := s.Node.RawTransaction(ctx, id)
		var rpcErr *btcjson.RPCError
		if errors.As(err, &rpcErr) && rpcErr.Code == btcjson.ErrRPCNoTxInfo {
			delete(now, *id) // left the mempool since the listing
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("mempool transaction %s: %w", id, err)
		}
		txs = append(txs, txIn{tx: tx})
	}
	outs, err := s.outputs(ctx, txs, watch)
	return outs, now, err
}

// txIn is a transaction read and the block holding it (zero: the mempool).
type txIn struct {
	tx    *wire.MsgTx
	block Block
}

// outputs returns the outputs of txs to watched addresses, looked up once.
func (s Scanner) outputs(ctx context.Context, txs []txIn, watch Watchlist) ([]Output, error) {
	type candidate struct {
		tx   int
		vout uint32
		addr string
	}
	var cands []candidate
	var addrs []string
	for i, t := range txs {
		for v, out := range t.tx.TxOut {
			_, found, _, err := txscript.ExtractPkScriptAddrs(out.PkScript, s.Params)
			if err != nil || len(found) != 1 {
				continue // no address pays here: OP_RETURN, bare multisig, nonstandard
			}
			a := found[0].EncodeAddress()
			cands = append(cands, candidate{i, uint32(v), a})
			addrs = append(addrs, a)
		}
	}
	if len(cands) == 0 {
		return nil, nil
	}
	watched, err := watch(ctx, addrs)
	if err != nil {
		return nil, fmt.Errorf("watched addresses: %w", err)
	}
	var outs []Output
	for _, c := range cands {
		if !watched[c.addr] {
			continue
		}
		t := txs[c.tx]
		outs = append(outs, Output{TxID: t.tx.TxHash(), Vout: c.vout, Address: c.addr, Sats: t.tx.TxOut[c.vout].Value,
			Block: t.block, Replaceable: signalsReplacement(t.tx)})
	}
	return outs, nil
}

// signalsReplacement tells whether tx opts in to replacement (BIP125):
// an input's sequence number below 0xfffffffe.
func signalsReplacement(tx *wire.MsgTx) bool {
	for _, in := range tx.TxIn {
		if in.Sequence < wire.MaxTxInSequenceNum-1 {
			return true
		}
	}
	return false
}
