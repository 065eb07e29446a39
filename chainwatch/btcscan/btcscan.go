// Package btcscan reads a Bitcoin node (Bitcoin Core or btcd, over
// JSON-RPC: btcrpc) for payments to watched addresses: the outputs of the blocks of
// a range, and of the transactions in the node's mempool. Every output to
// a watched address counts on its own, several in one transaction too; a
// transaction spending an output a watched transaction spends conflicts
// with it (a replacement by fee, a double spend).
// The RPC calls of a range are two per block (its hash and the block
// itself, raw), and the mempool's one listing plus one raw transaction per
// transaction not seen before: none depends on how many addresses are
// watched, which are looked up once per range or mempool read (and the
// outputs spent, once too).
package btcscan

import (
	"context"
	"errors"
	"fmt"
	"slices"

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
	// Spends are the outputs the transaction spends (none for a
	// coinbase): another transaction spending one of them conflicts.
	Spends []wire.OutPoint
}

// Conflict is a transaction read that spends an output a watched
// transaction spends too: the watched one is replaced (by fee) or
// double-spent, and can no longer be mined while the other stands.
type Conflict struct {
	// TxID is the watched transaction, By the one conflicting with it.
	TxID, By chainhash.Hash
	// Block holds By; zero when By is in the mempool.
	Block Block
}

// Found is what a read found: payments and conflicts.
type Found struct {
	Outputs   []Output
	Conflicts []Conflict
}

// Block is a scanned block.
type Block struct {
	Height int64
	Hash   chainhash.Hash
	// Parent is the previous block's hash; zero for a block read from the
	// mempool's side (Output.Block of a mempool payment).
	Parent chainhash.Hash
	// Time is the block's timestamp (Unix seconds).
	Time int64
}

// Watch is what a read looks for.
type Watch struct {
	// Addresses tells which of the addresses a read pays are watched.
	Addresses func(ctx context.Context, addresses []string) (watched map[string]bool, err error)
	// Spends tells which of the outputs a read's transactions spend a
	// watched transaction spends too, and which transaction that is. Nil
	// when no conflict is looked for.
	Spends func(ctx context.Context, outpoints []wire.OutPoint) (spentBy map[wire.OutPoint]chainhash.Hash, err error)
}

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
func (s Scanner) Scan(ctx context.Context, from, to int64, parent chainhash.Hash, watch Watch) ([]Block, Found, error) {
	var blocks []Block
	var txs []txIn
	prev := parent
	for h := from; h <= to; h++ {
		if err := ctx.Err(); err != nil {
			return nil, Found{}, err
		}
		hash, err := s.Node.BlockHash(ctx, h)
		if btcrpc.OutOfRange(err) {
			return nil, Found{}, fmt.Errorf("block %d: %w", h, ErrReorged) // the chain got shorter
		}
		if err != nil {
			return nil, Found{}, fmt.Errorf("block %d: %w", h, err)
		}
		mb, err := s.Node.Block(ctx, hash)
		if err != nil {
			return nil, Found{}, fmt.Errorf("block %d: %w", h, err)
		}
		if prev != (chainhash.Hash{}) && mb.Header.PrevBlock != prev {
			return nil, Found{}, ErrReorged
		}
		b := Block{Height: h, Hash: *hash, Parent: mb.Header.PrevBlock, Time: mb.Header.Timestamp.Unix()}
		blocks = append(blocks, b)
		for _, tx := range mb.Transactions {
			txs = append(txs, txIn{tx: tx, block: b})
		}
		prev = *hash
	}
	found, err := s.read(ctx, txs, watch)
	return blocks, found, err
}

// Mempool reads the node's mempool and returns what the transactions not
// in seen pay to watched addresses and whom they conflict with, and every
// transaction in the mempool now (the next read's seen). A transaction
// seen before and no longer there was mined, replaced, double-spent or
// dropped: a scan of blocks, or a conflict, tells which.
func (s Scanner) Mempool(ctx context.Context, seen map[chainhash.Hash]bool, watch Watch) (Found, map[chainhash.Hash]bool, error) {
	ids, err := s.Node.RawMempool(ctx)
	if err != nil {
		return Found{}, nil, fmt.Errorf("mempool: %w", err)
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
			return Found{}, nil, fmt.Errorf("mempool transaction %s: %w", id, err)
		}
		txs = append(txs, txIn{tx: tx})
	}
	found, err := s.read(ctx, txs, watch)
	return found, now, err
}

// txIn is a transaction read and the block holding it (zero: the mempool).
type txIn struct {
	tx    *wire.MsgTx
	block Block
}

// read returns what txs pay watched addresses, and whom they conflict
// with.
func (s Scanner) read(ctx context.Context, txs []txIn, watch Watch) (Found, error) {
	outs, err := s.outputs(ctx, txs, watch)
	if err != nil || watch.Spends == nil {
		return Found{Outputs: outs}, err
	}
	conflicts, err := conflicts(ctx, txs, watch)
	return Found{Outputs: outs, Conflicts: conflicts}, err
}

// conflicts returns the transactions among txs that spend an output a
// watched transaction of another ID spends, looked up once.
func conflicts(ctx context.Context, txs []txIn, watch Watch) ([]Conflict, error) {
	var spent []wire.OutPoint
	for _, t := range txs {
		spent = append(spent, spends(t.tx)...)
	}
	if len(spent) == 0 {
		return nil, nil
	}
	by, err := watch.Spends(ctx, spent)
	if err != nil {
		return nil, fmt.Errorf("watched spends: %w", err)
	}
	var out []Conflict
	for _, t := range txs {
		id := t.tx.TxHash()
		for _, op := range spends(t.tx) {
			if w, ok := by[op]; ok && w != id &&
				!slices.ContainsFunc(out, func(c Conflict) bool { return c.TxID == w && c.By == id }) {
				out = append(out, Conflict{TxID: w, By: id, Block: t.block})
			}
		}
	}
	return out, nil
}

// spends are the outputs tx spends: none for a coinbase.
func spends(tx *wire.MsgTx) []wire.OutPoint {
	if len(tx.TxIn) == 1 && tx.TxIn[0].PreviousOutPoint.Index == wire.MaxPrevOutIndex &&
		tx.TxIn[0].PreviousOutPoint.Hash == (chainhash.Hash{}) {
		return nil // a coinbase
	}
	out := make([]wire.OutPoint, len(tx.TxIn))
	for i, in := range tx.TxIn {
		out[i] = in.PreviousOutPoint
	}
	return out
}

// outputs returns the outputs of txs to watched addresses, looked up once.
func (s Scanner) outputs(ctx context.Context, txs []txIn, watch Watch) ([]Output, error) {
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
	watched, err := watch.Addresses(ctx, addrs)
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
			Block: t.block, Replaceable: signalsReplacement(t.tx), Spends: spends(t.tx)})
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
