package chainwatch

import (
	"context"
	"errors"
	"math/big"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/paymentsd/paymentsd/internal/evmrpc"
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
// with useFinalized, whether its block is final. With traces, the native
// coin its internal calls moved is among its transfers.
func CheckTransaction(ctx context.Context, c evmrpc.Client, hash common.Hash, useFinalized, traces bool) (TxState, error) {
	return RecheckTransaction(ctx, c, hash, useFinalized, traces, common.Hash{})
}

// RecheckTransaction is CheckTransaction for a transaction whose transfers
// the caller read in block readIn: while the transaction is still in that
// block (its execution there cannot change), its transfers are not read
// again and SameBlock is set. That spares the transaction's trace, the
// dearest call a look makes (the node runs the block again up to it), and
// the transaction itself, on every look after the first.
func RecheckTransaction(ctx context.Context, c evmrpc.Client, hash common.Hash, useFinalized, traces bool,
	readIn common.Hash) (TxState, error) {
	r, err := receipt(ctx, c, hash)
	if errors.Is(err, ethereum.NotFound) {
		return TxState{}, nil
	}
	if err != nil {
		return TxState{}, err
	}
	head, err := c.BlockNumber(ctx)
	if err != nil {
		return TxState{}, err
	}
	// The receipt can come from a block that a reorg has just replaced:
	// trust it only if its block is the canonical one at that height.
	h, err := header(ctx, c, new(big.Int).SetUint64(uint64(r.BlockNumber)))
	if errors.Is(err, ethereum.NotFound) {
		return TxState{}, nil
	}
	if err != nil {
		return TxState{}, err
	}
	if h.Hash != r.BlockHash {
		return TxState{}, nil
	}
	st := TxState{Sender: r.From, Mined: true, Succeeded: r.Status == 1, BlockNumber: uint64(r.BlockNumber), BlockHash: r.BlockHash,
		BlockTime: uint64(h.Timestamp)}
	if head >= st.BlockNumber {
		st.Confirmations = head - st.BlockNumber + 1
	}
	if useFinalized {
		f, err := header(ctx, c, big.NewInt(int64(rpc.FinalizedBlockNumber)))
		if err == nil && uint64(f.Number) >= st.BlockNumber {
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
	tx, err := transaction(ctx, c, hash)
	if err != nil && !errors.Is(err, ethereum.NotFound) {
		return TxState{}, err
	}
	if err == nil && tx.To != nil && tx.value().Sign() > 0 {
		st.Transfers = append(st.Transfers, Transfer{TxHash: hash, LogIndex: -1, From: tx.From, To: *tx.To,
			Amount: tx.value(), BlockNumber: st.BlockNumber, BlockHash: st.BlockHash})
	}
	if traces {
		top, err := traceTransaction(ctx, c, hash)
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
