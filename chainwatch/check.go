package chainwatch

// The checks of what an EVM node answers (docs/decisions.md, "Node answers
// are checked, not trusted"). Each read of the engine runs on one node
// (evmrpc.Client.Read), so that answers checked against each other come
// from one witness: an answer that fails a check is a
// nodetrust.BadAnswer, which sets the node aside and runs the read again
// on the next, and is never recorded. A contradiction that a reorganised
// chain explains (a block that no longer links to the one held, logs of
// another branch) is asked again of the same node: if it still says both
// things, it is the node's; else the chain moved, and the read fails with
// ErrReorged as before.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/paymentsd/paymentsd/internal/nodetrust"
)

// checkHeader reads a block's header (raw, its JSON without the
// transactions; hash, its "hash" field) and checks it: the block asked for
// (n, unless a tag), with a hash, and, where the chain's headers are
// Ethereum's, a hash its fields hash to. The header is read once: into
// go-ethereum's types.Header where its hash is recomputed, else into the
// few fields the engine uses.
func (r reader) checkHeader(raw, hash json.RawMessage, n *big.Int) (*rpcHeader, error) {
	var h rpcHeader
	var recomputed common.Hash
	if r.recompute {
		var gh types.Header
		if err := json.Unmarshal(raw, &gh); err != nil {
			return nil, nodetrust.Bad("block_hash", "a block's header does not read as Ethereum's (%v)", err)
		}
		h = rpcHeader{Number: hexutil.Uint64(gh.Number.Uint64()), ParentHash: gh.ParentHash, Timestamp: hexutil.Uint64(gh.Time),
			LogsBloom: gh.Bloom}
		recomputed = gh.Hash()
	} else if err := json.Unmarshal(raw, &h); err != nil {
		return nil, fmt.Errorf("eth_getBlockByNumber: %w", err)
	}
	if len(hash) > 0 {
		if err := json.Unmarshal(hash, &h.Hash); err != nil {
			return nil, fmt.Errorf("eth_getBlockByNumber: hash: %w", err)
		}
	}
	if n != nil && n.Sign() >= 0 && (!n.IsUint64() || uint64(h.Number) != n.Uint64()) {
		return nil, nodetrust.Bad("block_number", "asked for block %s, the node answered block %d", n, h.Number)
	}
	if h.Hash == (common.Hash{}) {
		return nil, nodetrust.Bad("block_hash", "block %d has no hash", h.Number)
	}
	if r.recompute && recomputed != h.Hash {
		return nil, nodetrust.Bad("block_hash", "block %d's header hashes to %s, not to its hash %s", h.Number, recomputed, h.Hash)
	}
	return &h, nil
}

// checkPlaces checks that each transaction of a block, where it says
// where it was mined, says this block at its index.
func checkPlaces(b *rpcBlock) error {
	for i, tx := range b.txs {
		if tx.BlockHash != nil && *tx.BlockHash != b.Hash || tx.BlockNumber != nil && *tx.BlockNumber != b.Number ||
			tx.Index != nil && uint64(*tx.Index) != uint64(i) {
			return nodetrust.Bad("tx_block", "transaction %s, number %d of block %d %s, says it is elsewhere", tx.Hash, i, b.Number, b.Hash)
		}
	}
	return nil
}

// brokenLink tells why block b, just read, does not link to prev, the
// hash held for the block before it: if the node's block there is still
// prev and b still its block at b's height, the node contradicts itself
// (a bad answer); else its chain is not the one held (a reorganisation,
// or a node on another branch, which the comparisons of the nodes find),
// ErrReorged. Two more calls, only when a link breaks.
func (r reader) brokenLink(ctx context.Context, b Block, prev common.Hash) error {
	if b.Number == 0 {
		return ErrReorged
	}
	before, err := r.header(ctx, new(big.Int).SetUint64(b.Number-1))
	if err != nil || before.Hash != prev {
		return reorgedOr(err)
	}
	again, err := r.header(ctx, new(big.Int).SetUint64(b.Number))
	if err != nil || again.Hash != b.Hash {
		return reorgedOr(err)
	}
	return nodetrust.Bad("parent_link", "block %d %s names parent %s, but the node's block %d is %s", b.Number, b.Hash, b.Parent,
		b.Number-1, prev)
}

// reorgedOr is ErrReorged for a block that is gone or moved (err nil or
// not found), else err.
func reorgedOr(err error) error {
	if err == nil || errors.Is(err, ethereum.NotFound) {
		return ErrReorged
	}
	return err
}

// checkLog checks a log the scan relies on against the blocks it read
// from `from` on: in the range asked, in the block read at its height (a
// log of another branch is ErrReorged once the node's block there is
// found to have changed), by the transaction that block holds at the
// log's index, and in the block's bloom.
func (r reader) checkLog(ctx context.Context, l types.Log, read []scannedBlock, from uint64) error {
	if l.BlockNumber < from || l.BlockNumber-from >= uint64(len(read)) {
		return nodetrust.Bad("log_block", "eth_getLogs of blocks %d to %d answered a log of block %d", from, from+uint64(len(read))-1,
			l.BlockNumber)
	}
	b := read[l.BlockNumber-from]
	if l.BlockHash != b.Hash {
		now, err := r.header(ctx, new(big.Int).SetUint64(b.Number))
		if err != nil || now.Hash != b.Hash {
			return reorgedOr(err)
		}
		return nodetrust.Bad("log_block", "a log of %s says block %d %s, but the node's block %d is %s", l.TxHash, l.BlockNumber,
			l.BlockHash, b.Number, b.Hash)
	}
	if l.TxIndex >= uint(len(b.txs)) || b.txs[l.TxIndex] != l.TxHash {
		return nodetrust.Bad("log_block", "a log says transaction %s, number %d of block %d, which the block does not hold there",
			l.TxHash, l.TxIndex, l.BlockNumber)
	}
	return checkBloom(b.bloom, l.BlockNumber, l.Address, l.Topics)
}

// checkBloom checks that a block's logs bloom holds a log's address and
// topics: a log the block does not have fails it but for the bloom's
// false positives. A zero bloom (a chain that does not fill it) holds
// anything.
func checkBloom(bloom types.Bloom, block uint64, address common.Address, topics []common.Hash) error {
	if bloom == (types.Bloom{}) {
		return nil
	}
	ok := types.BloomLookup(bloom, address)
	for _, t := range topics {
		ok = ok && types.BloomLookup(bloom, t)
	}
	if !ok {
		return nodetrust.Bad("log_bloom", "block %d's logs bloom does not hold a log of %s it is said to have", block, address)
	}
	return nil
}

// checkReceipt checks a receipt of transaction hash against its block's
// header h (whose hash it names): the transaction is the block's at the
// receipt's index, and every log says that block and that transaction,
// and is in the block's bloom.
func checkReceipt(rc *rpcReceipt, h *rpcHeader, hash common.Hash) error {
	if rc.TxHash != (common.Hash{}) && rc.TxHash != hash {
		return nodetrust.Bad("receipt_tx", "asked for the receipt of %s, the node answered the one of %s", hash, rc.TxHash)
	}
	if uint64(rc.TxIndex) >= uint64(len(h.TxHashes)) || h.TxHashes[rc.TxIndex] != hash {
		return nodetrust.Bad("receipt_block", "the receipt of %s says block %d %s at index %d, which the block does not hold there",
			hash, rc.BlockNumber, rc.BlockHash, rc.TxIndex)
	}
	for _, l := range rc.Logs {
		if l.BlockHash != nil && *l.BlockHash != rc.BlockHash || l.BlockNumber != nil && *l.BlockNumber != rc.BlockNumber ||
			l.TxHash != nil && *l.TxHash != hash || l.TxIndex != nil && *l.TxIndex != rc.TxIndex {
			return nodetrust.Bad("receipt_block", "a log of the receipt of %s says it is elsewhere than its receipt", hash)
		}
		if err := checkBloom(h.LogsBloom, uint64(rc.BlockNumber), l.Address, l.Topics); err != nil {
			return err
		}
	}
	return nil
}

// checkSent checks a transaction that pays a watched address, where
// go-ethereum knows its type: it hashes to its hash, its signature is its
// sender's, and its recipient and value are those the node's fields say.
// A chain's own types (the OP stack's deposits, Arbitrum's system and
// retryable transactions) are taken as the node gives them.
func checkSent(raw json.RawMessage, tx rpcTx) error {
	if uint64(tx.Type) > types.SetCodeTxType {
		return nil
	}
	var signed types.Transaction
	if err := signed.UnmarshalJSON(raw); err != nil {
		return nodetrust.Bad("tx_hash", "transaction %s does not read as Ethereum's (%v)", tx.Hash, err)
	}
	if got := signed.Hash(); got != tx.Hash {
		return nodetrust.Bad("tx_hash", "transaction %s hashes to %s", tx.Hash, got)
	}
	if to := signed.To(); to == nil || tx.To == nil || *to != *tx.To || signed.Value().Cmp(tx.value()) != 0 {
		return nodetrust.Bad("tx_hash", "transaction %s's recipient or value is not the one it was signed with", tx.Hash)
	}
	if from, err := sender(&signed); err != nil || from != tx.From {
		return nodetrust.Bad("tx_sender", "transaction %s says sender %s, its signature is %s's (%v)", tx.Hash, tx.From, from, err)
	}
	return nil
}

// sender recovers a transaction's signer, under the chain ID it was
// signed for (none for a legacy transaction signed before EIP-155).
func sender(tx *types.Transaction) (common.Address, error) {
	if !tx.Protected() {
		return types.HomesteadSigner{}.Sender(tx)
	}
	return types.Sender(types.LatestSignerForChainID(tx.ChainId()), tx)
}
