package chainwatch

import (
	"bytes"
	"context"
	"errors"
	"math/big"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rpc"
)

// TxState is what the chain says of a transaction now.
type TxState struct {
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
}

// CheckTransaction reads a transaction's receipt, its confirmations and,
// with useFinalized, whether its block is final.
func CheckTransaction(ctx context.Context, c Client, hash common.Hash, useFinalized bool) (TxState, error) {
	r, err := c.TransactionReceipt(ctx, hash)
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
	h, err := c.HeaderByNumber(ctx, r.BlockNumber)
	if errors.Is(err, ethereum.NotFound) {
		return TxState{}, nil
	}
	if err != nil {
		return TxState{}, err
	}
	if h.Hash() != r.BlockHash {
		return TxState{}, nil
	}
	st := TxState{Mined: true, Succeeded: r.Status == types.ReceiptStatusSuccessful,
		BlockNumber: r.BlockNumber.Uint64(), BlockHash: r.BlockHash, BlockTime: h.Time}
	if head >= st.BlockNumber {
		st.Confirmations = head - st.BlockNumber + 1
	}
	if useFinalized {
		f, err := c.HeaderByNumber(ctx, big.NewInt(int64(rpc.FinalizedBlockNumber)))
		if err == nil && f.Number.Uint64() >= st.BlockNumber {
			st.Final = true
		}
	}
	for _, l := range r.Logs {
		if t, ok := decodeTransfer(*l); ok {
			st.Transfers = append(st.Transfers, t)
		}
	}
	if st.Succeeded {
		tx, _, err := c.TransactionByHash(ctx, hash)
		if err == nil && tx.To() != nil && tx.Value().Sign() > 0 {
			if from, err := types.Sender(types.LatestSignerForChainID(tx.ChainId()), tx); err == nil {
				st.Transfers = append(st.Transfers, Transfer{TxHash: hash, LogIndex: -1, From: from, To: *tx.To(),
					Amount: tx.Value(), BlockNumber: st.BlockNumber, BlockHash: st.BlockHash})
			}
		}
	}
	return st, nil
}

// transferSelector is the selector of ERC-20 transfer(address,uint256).
var transferSelector = []byte{0xa9, 0x05, 0x9c, 0xbb}

// IntendedTransfer reads what a transaction asks to pay, from the
// transaction itself: its native value, or the recipient and amount of an
// ERC-20 transfer call. It serves for a transaction that is not mined yet
// or that reverted, whose receipt has no Transfer log. found is false when
// no node knows the hash.
func IntendedTransfer(ctx context.Context, c Client, hash common.Hash) (t *Transfer, found bool, err error) {
	tx, _, err := c.TransactionByHash(ctx, hash)
	if errors.Is(err, ethereum.NotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if tx.To() == nil {
		return nil, true, nil
	}
	from, err := types.Sender(types.LatestSignerForChainID(tx.ChainId()), tx)
	if err != nil {
		return nil, true, nil
	}
	if tx.Value().Sign() > 0 {
		return &Transfer{TxHash: hash, LogIndex: -1, From: from, To: *tx.To(), Amount: tx.Value()}, true, nil
	}
	data := tx.Data()
	if len(data) == 4+64 && bytes.Equal(data[:4], transferSelector) {
		return &Transfer{TxHash: hash, LogIndex: 0, From: from, To: common.BytesToAddress(data[4:36]),
			Token: *tx.To(), Amount: new(big.Int).SetBytes(data[36:68])}, true, nil
	}
	return nil, true, nil
}
