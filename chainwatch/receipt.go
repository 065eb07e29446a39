package chainwatch

import (
	"context"
	"errors"
	"math/big"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/paymentsd/paymentsd/internal/evmrpc"
	"github.com/paymentsd/paymentsd/internal/nodetrust"
)

// TxState is what the chain says of a transaction now.
type TxState struct {
	// Sender is the address that signed the transaction (its receipt's
	// from), once mined.
	Sender      common.Address
	Mined       bool
	Succeeded   bool
	BlockNumber uint64
	BlockHash   common.Hash
	// BlockTime is the block's timestamp (Unix seconds).
	BlockTime     uint64
	Confirmations uint64
	// Final is true when the block is at or below the node's finalized
	// block (only asked when the network uses the finalized tag).
	Final bool
	// Transfers are the payments the transaction made, for a hash given
	// by the payer whose details are not known yet.
	Transfers []Transfer
	// InternalUnknown says the transaction's internal transfers could not
	// be read (its block could not be traced): those recorded stand.
	InternalUnknown bool
	// Conflict says why a Bitcoin transaction not mined will not be: the
	// transaction that replaced it or spent its coins (CheckBitcoin).
	Conflict string
	// SameBlock says the transaction is still in the block whose transfers
	// the caller read (RecheckTransaction): Transfers are not read again.
	SameBlock bool
}

// CheckTransaction reads a transaction's receipt, its confirmations and,
// with useFinalized, whether its block is final. With the scanner's
// Traces, the native coin its internal calls moved is among its
// transfers.
func (s Scanner) CheckTransaction(ctx context.Context, hash common.Hash, useFinalized bool) (TxState, error) {
	return s.RecheckTransaction(ctx, hash, useFinalized, common.Hash{})
}

// RecheckTransaction is CheckTransaction for a transaction whose transfers
// the caller read in block readIn: while the transaction is still in that
// block (its execution there cannot change), its transfers are not read
// again and SameBlock is set. That spares the transaction's trace, the
// dearest call a look makes (the node runs the block again up to it), and
// the transaction itself, on every look after the first.
//
// The receipt, its block's header and the transaction are read from one
// node and checked against each other (readMined); the head, the
// finalized block and the trace from any.
func (s Scanner) RecheckTransaction(ctx context.Context, hash common.Hash, useFinalized bool, readIn common.Hash) (TxState, error) {
	var m minedTx
	err := s.Client.Read(ctx, func(node evmrpc.Client) error {
		var err error
		m, err = s.on(node).readMined(ctx, hash, readIn)
		return err
	})
	if err != nil || m.receipt == nil {
		return TxState{}, err
	}
	head, err := s.Client.BlockNumber(ctx)
	if err != nil {
		return TxState{}, err
	}
	r := m.receipt
	st := TxState{Sender: r.From, Mined: true, Succeeded: r.Status == 1, BlockNumber: uint64(r.BlockNumber), BlockHash: r.BlockHash,
		BlockTime: uint64(m.header.Timestamp)}
	if head >= st.BlockNumber {
		st.Confirmations = head - st.BlockNumber + 1
	}
	if useFinalized {
		if f, err := s.finalized(ctx); err == nil && f >= st.BlockNumber {
			st.Final = true
		}
	}
	if readIn == st.BlockHash { // a mined block's hash is never zero
		st.SameBlock = true
		return st, nil
	}
	for _, l := range r.Logs {
		if t, ok := decodeTransfer(l.log()); ok {
			t.TxHash, t.BlockNumber, t.BlockHash = hash, st.BlockNumber, st.BlockHash
			st.Transfers = append(st.Transfers, t)
		}
	}
	if !st.Succeeded {
		return st, nil
	}
	if tx := m.tx; tx != nil && tx.To != nil && tx.value().Sign() > 0 {
		st.Transfers = append(st.Transfers, Transfer{TxHash: hash, LogIndex: -1, From: tx.From, To: *tx.To,
			Amount: tx.value(), BlockNumber: st.BlockNumber, BlockHash: st.BlockHash})
	}
	if s.Traces {
		top, err := traceTransaction(ctx, s.Client, hash)
		if err != nil {
			// Its block is older than the node's state window: what
			// earlier looks recorded stands.
			st.InternalUnknown = true
			return st, nil
		}
		for k, t := range internalTransfers(top) {
			st.Transfers = append(st.Transfers, Transfer{TxHash: hash, LogIndex: InternalIndex(k + 1), From: t.From,
				To: t.To, Amount: t.Amount, BlockNumber: st.BlockNumber, BlockHash: st.BlockHash})
		}
	}
	return st, nil
}

// finalized reads the number of the node's finalized block, checked.
func (s Scanner) finalized(ctx context.Context) (uint64, error) {
	var n uint64
	err := s.Client.Read(ctx, func(node evmrpc.Client) error {
		h, err := s.on(node).header(ctx, big.NewInt(int64(rpc.FinalizedBlockNumber)))
		if err == nil {
			n = uint64(h.Number)
		}
		return err
	})
	return n, err
}

// minedTx is what one node says of a mined transaction, checked: its
// receipt, the header of the block holding it and, when its transfers are
// read, the transaction. A zero minedTx: not mined (no receipt, or one of
// a block a reorganisation has just replaced).
type minedTx struct {
	receipt *rpcReceipt
	header  *rpcHeader
	tx      *rpcTx
}

// readMined reads transaction hash's receipt, and its block's header: the
// receipt is trusted only if its block is the canonical one at its height
// and holds the transaction at the receipt's index, and its logs say that
// block and that transaction (checkReceipt). Unless its transfers were
// read in readIn, a successful transaction is read too, and checked
// (checkSent).
func (r reader) readMined(ctx context.Context, hash, readIn common.Hash) (minedTx, error) {
	rc, err := receipt(ctx, r.c, hash)
	if errors.Is(err, ethereum.NotFound) {
		return minedTx{}, nil
	}
	if err != nil {
		return minedTx{}, err
	}
	h, err := r.header(ctx, new(big.Int).SetUint64(uint64(rc.BlockNumber)))
	if errors.Is(err, ethereum.NotFound) {
		return minedTx{}, nil
	}
	if err != nil {
		return minedTx{}, err
	}
	if h.Hash != rc.BlockHash {
		return minedTx{}, nil // the receipt's block is no longer the canonical one
	}
	if err := checkReceipt(rc, h, hash); err != nil {
		return minedTx{}, err
	}
	m := minedTx{receipt: rc, header: h}
	if readIn == h.Hash || rc.Status != 1 {
		return m, nil
	}
	tx, raw, err := r.transaction(ctx, hash)
	if errors.Is(err, ethereum.NotFound) {
		return m, nil
	}
	if err != nil {
		return minedTx{}, err
	}
	if tx.Hash != hash || tx.BlockHash != nil && *tx.BlockHash != rc.BlockHash {
		return minedTx{}, nodetrust.Bad("tx_block", "asked for transaction %s of block %s, the node answered %s of block %v", hash,
			rc.BlockHash, tx.Hash, tx.BlockHash)
	}
	if tx.To != nil && tx.value().Sign() > 0 {
		if err := checkSent(raw, *tx); err != nil {
			return minedTx{}, err
		}
	}
	m.tx = tx
	return m, nil
}
