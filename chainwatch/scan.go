// Package chainwatch reads EVM chains through go-ethereum: quotes from price
// feeds, block and log scanning, transfer matching, and a poller that keeps
// a network's scan on the canonical chain across reorgs. It depends on
// go-ethereum's small interfaces, not on a concrete client, so the simulated
// backend drops in for tests.
package chainwatch

import (
	"github.com/paymentsd/paymentsd/internal/evmrpc"

	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/paymentsd/paymentsd/internal/observability"
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
	// Untraced says its block's internal transfers could not be read (the
	// block's trace failed): the transfers found of its transaction may
	// not be all of them.
	Untraced bool
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
// RPC calls per range are one block read per block (with its transactions
// when the native coin counts, the header alone otherwise), one trace per
// block where internal native transfers are read, one eth_getLogs per
// thousand token contracts and two head checks: none depend on how many
// addresses are watched, which are looked up once per range. What it
// relies on is checked (check.go), with no call more; a range's blocks,
// logs and transactions are read from one node.
type Scanner struct {
	Client evmrpc.Client
	// Tokens are the ERC-20 contracts whose Transfer logs count.
	Tokens []common.Address
	// Native says whether native coin transfers count.
	Native bool
	// Traces says whether native coin moved by contracts' internal calls
	// is read too, from the node's debug_traceBlockByNumber.
	Traces bool
	// Recompute says the chain's headers are Ethereum's: a block's hash is
	// recomputed from its fields (Network.HeaderHash).
	Recompute bool
	// Network names the network in logs and metrics.
	Network string
}

func (s Scanner) network() string { return s.Network }

// on is the scanner's reader of the node c (a Client of a Read).
func (s Scanner) on(c evmrpc.Client) reader { return reader{c: c, recompute: s.Recompute} }

// Watchlist tells which of the addresses a scanned range pays are watched.
type Watchlist func(ctx context.Context, recipients []common.Address) (watched map[common.Address]bool, err error)

// Head returns the chain's head block number.
func (s Scanner) Head(ctx context.Context) (uint64, error) { return s.Client.BlockNumber(ctx) }

// Canonical reports whether the cursor's block is still on the chain.
func (s Scanner) Canonical(ctx context.Context, c Cursor) (bool, error) {
	var canonical bool
	err := s.Client.Read(ctx, func(node evmrpc.Client) error {
		h, err := s.on(node).header(ctx, new(big.Int).SetUint64(c.Number))
		if errors.Is(err, ethereum.NotFound) {
			canonical = false
			return nil
		}
		if err != nil {
			return err
		}
		canonical = h.Hash == c.Hash
		return nil
	})
	return canonical, err
}

// scannedBlock is a block a scan read, with what its checks need: its
// transactions' hashes, its logs bloom, and (full) the block with its
// transactions, some of which pay native coin (sent: their indexes, by
// hash).
type scannedBlock struct {
	Block
	txs   []common.Hash
	bloom types.Bloom
	full  *rpcBlock
	sent  map[common.Hash]int
}

// checkSent checks the transaction hash of the block that pays a watched
// address native coin (checkSent), read again whole.
func (b scannedBlock) checkSent(hash common.Hash) error {
	i, ok := b.sent[hash]
	if !ok {
		return nil
	}
	raw, err := b.full.rawTx(i)
	if err != nil {
		return err
	}
	return checkSent(raw, b.full.txs[i])
}

// Scan reads blocks from..to (inclusive) and returns them with the
// transfers to the addresses watch reports. The blocks must chain onto
// each other and onto parent when it is not zero; otherwise ErrReorged.
// Transactions of types go-ethereum does not know are read like any other.
// The range is read from one node; an answer of it that fails a check
// runs the scan again on the next (evmrpc.Client.Read).
func (s Scanner) Scan(ctx context.Context, from, to uint64, parent common.Hash, watch Watchlist) ([]Block, []Transfer, error) {
	var blocks []Block
	var transfers []Transfer
	err := s.Client.Read(ctx, func(node evmrpc.Client) error {
		var err error
		blocks, transfers, err = s.scanOn(ctx, s.on(node), from, to, parent, watch)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return blocks, transfers, nil
}

// scanOn is Scan on one node.
func (s Scanner) scanOn(ctx context.Context, r reader, from, to uint64, parent common.Hash, watch Watchlist) ([]Block, []Transfer, error) {
	var read []scannedBlock
	var found []Transfer
	untraced := map[uint64]bool{}
	prev := parent
	for n := from; n <= to; n++ {
		var b scannedBlock
		var transfers []Transfer
		var err error
		if s.Native {
			b, transfers, untraced[n], err = s.nativeTransfers(ctx, r, n)
		} else {
			var h *rpcHeader
			if h, err = r.header(ctx, new(big.Int).SetUint64(n)); err == nil {
				b = scannedBlock{Block: h.block(), txs: h.TxHashes, bloom: h.LogsBloom}
			}
		}
		if errors.Is(err, ethereum.NotFound) {
			return nil, nil, fmt.Errorf("block %d: %w", n, ErrReorged) // the head moved back
		}
		if err != nil {
			return nil, nil, fmt.Errorf("block %d: %w", n, err)
		}
		if prev != (common.Hash{}) && b.Parent != prev {
			return nil, nil, r.brokenLink(ctx, b.Block, prev)
		}
		prev = b.Hash
		read = append(read, b)
		found = append(found, transfers...)
	}
	for i := 0; i < len(s.Tokens); i += maxFilterAddresses {
		chunk := s.Tokens[i:min(i+maxFilterAddresses, len(s.Tokens))]
		logs, err := r.c.FilterLogs(ctx, ethereum.FilterQuery{
			FromBlock: new(big.Int).SetUint64(from), ToBlock: new(big.Int).SetUint64(to),
			Addresses: chunk, Topics: [][]common.Hash{{TransferTopic}},
		})
		if err != nil {
			return nil, nil, fmt.Errorf("logs %d-%d: %w", from, to, err)
		}
		for _, l := range logs {
			t, ok := decodeTransfer(l)
			if !ok || l.Removed {
				continue
			}
			if err := r.checkLog(ctx, l, read, from); err != nil {
				return nil, nil, err
			}
			t.BlockTime, t.Untraced = read[l.BlockNumber-from].Time, untraced[l.BlockNumber]
			found = append(found, t)
		}
	}
	blocks := make([]Block, len(read))
	for i, b := range read {
		blocks[i] = b.Block
	}
	transfers, err := watched(ctx, found, watch)
	if err != nil {
		return nil, nil, err
	}
	for _, t := range transfers {
		if t.LogIndex != -1 {
			continue
		}
		if err := read[t.BlockNumber-from].checkSent(t.TxHash); err != nil {
			return nil, nil, err
		}
	}
	return blocks, transfers, nil
}

// watched returns the transfers among found to the addresses watch
// reports, looked up at once.
func watched(ctx context.Context, found []Transfer, watch Watchlist) ([]Transfer, error) {
	if len(found) == 0 {
		return nil, nil
	}
	recipients := make([]common.Address, 0, len(found))
	seen := map[common.Address]bool{}
	for _, t := range found {
		if !seen[t.To] {
			seen[t.To] = true
			recipients = append(recipients, t.To)
		}
	}
	watched, err := watch(ctx, recipients)
	if err != nil {
		return nil, err
	}
	transfers := found[:0]
	for _, t := range found {
		if watched[t.To] {
			transfers = append(transfers, t)
		}
	}
	return transfers, nil
}

func (h rpcHeader) block() Block {
	return Block{Number: uint64(h.Number), Hash: h.Hash, Parent: h.ParentHash, Time: uint64(h.Timestamp)}
}

// nativeTransfers reads block n with its transactions and returns the
// native coin they move: every transaction's value, whatever its type
// (a reverted one is found failed when its receipt is read), and, with
// Traces, what internal calls move; untraced says the block's trace
// failed (its transfers are marked Untraced). The block's trace is asked
// of any node (a network may have some without the debug calls), and
// matched to the block's transactions.
func (s Scanner) nativeTransfers(ctx context.Context, r reader, n uint64) (b scannedBlock, out []Transfer, untraced bool, err error) {
	rb, err := r.fullBlock(ctx, n)
	if err != nil {
		return scannedBlock{}, nil, false, err
	}
	b = scannedBlock{Block: rb.block(), txs: rb.TxHashes, bloom: rb.LogsBloom, full: rb, sent: map[common.Hash]int{}}
	for i, tx := range rb.txs {
		if tx.To != nil && tx.value().Sign() > 0 {
			b.sent[tx.Hash] = i
			out = append(out, Transfer{TxHash: tx.Hash, LogIndex: -1, From: tx.From, To: *tx.To, Amount: tx.value(),
				BlockNumber: n, BlockHash: b.Hash, BlockTime: b.Time})
		}
	}
	if !s.Traces || len(rb.txs) == 0 {
		return b, out, false, nil
	}
	traces, err := traceBlock(ctx, s.Client, n)
	if err != nil {
		// A node without the block's state (older than its state window,
		// past an outage) cannot trace it: the scan goes on without its
		// internal transfers, loudly, rather than stop every payment.
		observability.TraceFailures.WithLabelValues(s.network()).Inc()
		slog.ErrorContext(ctx, "block not traced: its internal native transfers are not read (rescan it against an archive node)",
			"block", n, "err", err)
		for i := range out {
			out[i].Untraced = true
		}
		return b, out, true, nil
	}
	if len(traces) != len(rb.txs) {
		return scannedBlock{}, nil, false, ErrReorged // traced another block than the one read
	}
	for i, tr := range traces {
		if tr.TxHash != (common.Hash{}) && tr.TxHash != rb.txs[i].Hash {
			return scannedBlock{}, nil, false, ErrReorged
		}
		if tr.Error != "" {
			return scannedBlock{}, nil, false, fmt.Errorf("trace of %s: %s", rb.txs[i].Hash, tr.Error)
		}
		for k, t := range internalTransfers(tr.Result) {
			out = append(out, Transfer{TxHash: rb.txs[i].Hash, LogIndex: InternalIndex(k + 1), From: t.From,
				To: t.To, Amount: t.Amount, BlockNumber: n, BlockHash: b.Hash, BlockTime: b.Time})
		}
	}
	return b, out, false, nil
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
