// Package chainwatch reads EVM chains through go-ethereum: quotes from price
// feeds, block and log scanning, transfer matching, and a poller that keeps
// a network's scan on the canonical chain across reorgs. It depends on
// go-ethereum's small interfaces, not on a concrete client, so the simulated
// backend drops in for tests.
package chainwatch

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
)

// TransferTopic is the topic of ERC-20 Transfer(address,address,uint256).
var TransferTopic = crypto.Keccak256Hash([]byte("Transfer(address,address,uint256)"))

// maxFilterAddresses is the most contract addresses one eth_getLogs asks
// for: geth refuses more than 1000.
const maxFilterAddresses = 1000

// Block is a scanned block's identity.
type Block struct {
	Number uint64
	Hash   common.Hash
	Parent common.Hash
	// Time is the block's timestamp (Unix seconds); zero when not known
	// (a kept block read back from a BlockStore).
	Time uint64
}

// Transfer is a payment seen on-chain to a watched address: an ERC-20
// Transfer log (Token set, LogIndex ≥ 0) or a native value transfer
// (Token zero, LogIndex -1).
type Transfer struct {
	TxHash      common.Hash
	LogIndex    int
	From        common.Address
	To          common.Address
	Token       common.Address
	Amount      *big.Int
	BlockNumber uint64
	BlockHash   common.Hash
	// BlockTime is the block's timestamp (Unix seconds).
	BlockTime uint64
}

// Cursor is where a network's scan stands: the last scanned block, or
// zero before the first scan.
type Cursor struct {
	Number uint64
	Hash   common.Hash
	// Time is the block's timestamp (Unix seconds), when known.
	Time uint64
}

// ErrReorged says the cursor's block left the canonical chain.
var ErrReorged = errors.New("the cursor's block is no longer canonical")

// Scanner reads a range of blocks for transfers to watched addresses. Its
// RPC calls per range are one block fetch per block, one eth_getLogs per
// thousand token contracts and two head checks: none depend on how many
// addresses are watched, which are matched locally.
type Scanner struct {
	Client Client
	// Tokens are the ERC-20 contracts whose Transfer logs count.
	Tokens []common.Address
	// Native says whether native coin transfers count.
	Native bool
}

// Head returns the chain's head block number.
func (s Scanner) Head(ctx context.Context) (uint64, error) { return s.Client.BlockNumber(ctx) }

// Canonical reports whether the cursor's block is still on the chain.
func (s Scanner) Canonical(ctx context.Context, c Cursor) (bool, error) {
	h, err := s.Client.HeaderByNumber(ctx, new(big.Int).SetUint64(c.Number))
	if errors.Is(err, ethereum.NotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return h.Hash() == c.Hash, nil
}

// Scan reads blocks from..to (inclusive) and returns them with the
// transfers to addresses for which watched reports true. The blocks must
// chain onto each other and onto parent when it is not zero; otherwise
// ErrReorged.
func (s Scanner) Scan(ctx context.Context, from, to uint64, parent common.Hash, watched func(common.Address) bool) ([]Block, []Transfer, error) {
	var blocks []Block
	var transfers []Transfer
	prev := parent
	for n := from; n <= to; n++ {
		b, err := s.Client.BlockByNumber(ctx, new(big.Int).SetUint64(n))
		if err != nil {
			return nil, nil, fmt.Errorf("block %d: %w", n, err)
		}
		if prev != (common.Hash{}) && b.ParentHash() != prev {
			return nil, nil, ErrReorged
		}
		prev = b.Hash()
		blocks = append(blocks, Block{Number: n, Hash: b.Hash(), Parent: b.ParentHash(), Time: b.Time()})
		if !s.Native {
			continue
		}
		for _, tx := range b.Transactions() {
			if tx.To() == nil || tx.Value().Sign() <= 0 || !watched(*tx.To()) {
				continue
			}
			from, err := types.Sender(types.LatestSignerForChainID(tx.ChainId()), tx)
			if err != nil {
				continue
			}
			transfers = append(transfers, Transfer{TxHash: tx.Hash(), LogIndex: -1, From: from, To: *tx.To(),
				Amount: tx.Value(), BlockNumber: n, BlockHash: b.Hash(), BlockTime: b.Time()})
		}
	}
	for i := 0; i < len(s.Tokens); i += maxFilterAddresses {
		chunk := s.Tokens[i:min(i+maxFilterAddresses, len(s.Tokens))]
		logs, err := s.Client.FilterLogs(ctx, ethereum.FilterQuery{
			FromBlock: new(big.Int).SetUint64(from), ToBlock: new(big.Int).SetUint64(to),
			Addresses: chunk, Topics: [][]common.Hash{{TransferTopic}},
		})
		if err != nil {
			return nil, nil, fmt.Errorf("logs %d-%d: %w", from, to, err)
		}
		for _, l := range logs {
			t, ok := decodeTransfer(l)
			if !ok || !watched(t.To) || l.Removed {
				continue
			}
			if l.BlockNumber < from || l.BlockNumber > to || blocks[l.BlockNumber-from].Hash != l.BlockHash {
				return nil, nil, ErrReorged // the logs come from another branch than the blocks
			}
			t.BlockTime = blocks[l.BlockNumber-from].Time
			transfers = append(transfers, t)
		}
	}
	return blocks, transfers, nil
}

// decodeTransfer reads an ERC-20 Transfer log.
func decodeTransfer(l types.Log) (Transfer, bool) {
	if len(l.Topics) != 3 || l.Topics[0] != TransferTopic || len(l.Data) != 32 {
		return Transfer{}, false
	}
	return Transfer{TxHash: l.TxHash, LogIndex: int(l.Index), From: common.BytesToAddress(l.Topics[1].Bytes()),
		To: common.BytesToAddress(l.Topics[2].Bytes()), Token: l.Address, Amount: new(big.Int).SetBytes(l.Data),
		BlockNumber: l.BlockNumber, BlockHash: l.BlockHash}, true
}

// Normalize returns an address in its lowercase form, the key addresses are
// matched by.
func Normalize(a common.Address) string { return strings.ToLower(a.Hex()) }
