package chainwatch

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/ethereum/go-ethereum/common"

	"github.com/paymentsd/paymentsd/chainwatch/btcscan"
)

// BitcoinPoller follows a Bitcoin network: its blocks as Poller follows an
// EVM chain's (kept in Blocks, rewound to the newest one still on the
// chain after a reorg), and, once a poll reaches the head, the node's
// mempool. Its Poller holds the blocks and the settings; the Poller's
// Scanner is not used.
type BitcoinPoller struct {
	Poller
	Bitcoin btcscan.Scanner
}

// BitcoinPolled is one Bitcoin poll's result: its Polled without
// Transfers, and what it found.
type BitcoinPolled struct {
	Polled
	// Found is what the scanned blocks hold, then what the mempool's
	// transactions not seen before do.
	Found btcscan.Found
	// Mempool is every transaction in the node's mempool when the poll
	// read it (the next poll's seen), nil when the poll did not reach the
	// head and left the mempool unread.
	Mempool map[chainhash.Hash]bool
}

// Poll scans the blocks after cursor as Poller.Poll does; when it reaches
// the head, it reads the mempool's transactions not in seen every
// PollInterval instead, until one pays a watched address or conflicts
// with a watched payment, a new block comes, or HeadWait has passed. A
// payment seen in the mempool is found again in the block that mines it.
func (p *BitcoinPoller) Poll(ctx context.Context, cursor Cursor, seen map[chainhash.Hash]bool, watch btcscan.Watch) (BitcoinPolled, error) {
	s := p.settings()
	wait := s.HeadWait
	s.HeadWait = time.Nanosecond // the wait at the head is the mempool's
	r := bitcoinChain{p.Bitcoin, watch}
	polled, found, err := poll(ctx, s, r, cursor)
	out := BitcoinPolled{Polled: polled, Found: found}
	if err != nil || !polled.CaughtUp {
		return out, err
	}
	for until := time.Now().Add(wait); ; {
		mempool, now, err := p.Bitcoin.Mempool(ctx, seen, watch)
		if err != nil {
			return out, err
		}
		for _, o := range mempool.Outputs {
			// A transaction this poll found in a block can show in the
			// mempool read after it, while the node settles a reorg (it
			// puts the old branch's transactions back before it takes the
			// new branch's out): the block's sighting stands.
			if !slices.ContainsFunc(out.Found.Outputs, func(b btcscan.Output) bool { return b.TxID == o.TxID && b.Block.Height > 0 }) {
				out.Found.Outputs = append(out.Found.Outputs, o)
			}
		}
		out.Found.Conflicts = append(out.Found.Conflicts, mempool.Conflicts...)
		out.Mempool, seen = now, now
		if len(out.Found.Outputs) > 0 || len(out.Found.Conflicts) > 0 || time.Now().After(until) {
			return out, nil
		}
		select {
		case <-ctx.Done():
			return out, ctx.Err()
		case <-time.After(s.PollInterval):
		}
		head, err := r.Head(ctx)
		if err != nil {
			return out, err
		}
		if out.Head = max(out.Head, head); head > out.Cursor.Number {
			return out, nil // a new block: the next poll reads it
		}
	}
}

// bitcoinChain reads a Bitcoin node for a poll. Block hashes are kept in
// the order explorers show them (BitcoinHash).
type bitcoinChain struct {
	s     btcscan.Scanner
	watch btcscan.Watch
}

func (c bitcoinChain) Head(ctx context.Context) (uint64, error) {
	h, err := c.s.Head(ctx)
	return uint64(max(h, 0)), err
}

func (c bitcoinChain) Canonical(ctx context.Context, cur Cursor) (bool, error) {
	return c.s.Canonical(ctx, btcscan.Block{Height: int64(cur.Number), Hash: FromBitcoinHash(cur.Hash)})
}

func (c bitcoinChain) scanRange(ctx context.Context, from, to uint64, parent common.Hash) ([]Block, btcscan.Found, error) {
	var p chainhash.Hash
	if parent != (common.Hash{}) {
		p = FromBitcoinHash(parent)
	}
	read, found, err := c.s.Scan(ctx, int64(from), int64(to), p, c.watch)
	if err != nil {
		return nil, found, err
	}
	blocks := make([]Block, len(read))
	for i, b := range read {
		blocks[i] = Block{Number: uint64(b.Height), Hash: BitcoinHash(b.Hash), Parent: BitcoinHash(b.Parent), Time: uint64(b.Time)}
	}
	return blocks, found, nil
}

// BitcoinHash is a Bitcoin hash as the engine keeps it: in the byte
// order explorers and nodes show (chainhash keeps it reversed), so its
// Hex is the usual form with 0x before it.
func BitcoinHash(h chainhash.Hash) common.Hash {
	b := common.Hash(h)
	slices.Reverse(b[:])
	return b
}

// FromBitcoinHash is BitcoinHash's inverse.
func FromBitcoinHash(h common.Hash) chainhash.Hash {
	b := chainhash.Hash(h)
	slices.Reverse(b[:])
	return b
}

// BitcoinSeen is what a Bitcoin network's scans saw of a transaction that
// pays a watched address.
type BitcoinSeen struct {
	// Outputs are its outputs to watched addresses.
	Outputs []BitcoinOutput
	// Block is the block that last mined it; zero when none did.
	Block btcscan.Block
	// ConflictedBy is a transaction found spending an output it spends
	// (btcscan.Conflict); zero when none was.
	ConflictedBy chainhash.Hash
	// ConflictMined says ConflictedBy was found in a block, not in the
	// mempool.
	ConflictMined bool
	// Spends are the outputs it spends.
	Spends []wire.OutPoint
}

// BitcoinOutput is an output of a transaction to a watched address.
type BitcoinOutput struct {
	Vout    uint32 `json:"vout"`
	Address string `json:"address"`
	Sats    int64  `json:"sats"`
}

// CheckBitcoin tells where a Bitcoin transaction stands from what the
// network's scans saw of it and the node's chain now: mined while the block
// that last mined it is the node's block at its height, with the
// confirmations the node's head gives. Otherwise it is not mined, and
// Conflict says why it will not be when a transaction replacing it or
// spending its coins was seen; neither mined nor conflicted, it is pending
// (in the mempool, or dropped from it: its pending timeout decides). Its
// node calls are two (the head and the block hash at the height), none for
// a transaction no block mined: they do not grow with the transactions
// watched.
func CheckBitcoin(ctx context.Context, s btcscan.Scanner, seen BitcoinSeen) (TxState, error) {
	if seen.Block.Height > 0 {
		head, err := s.Head(ctx)
		if err != nil {
			return TxState{}, err
		}
		ok, err := s.Canonical(ctx, seen.Block)
		if err != nil {
			return TxState{}, err
		}
		if ok && head >= seen.Block.Height {
			return TxState{Mined: true, Succeeded: true, BlockNumber: uint64(seen.Block.Height),
				BlockHash: BitcoinHash(seen.Block.Hash), BlockTime: uint64(seen.Block.Time),
				Confirmations: uint64(head - seen.Block.Height + 1)}, nil
		}
	}
	var st TxState
	if seen.ConflictedBy != (chainhash.Hash{}) {
		where := "in the mempool"
		if seen.ConflictMined {
			where = "in a block"
		}
		st.Conflict = fmt.Sprintf("replaced or double-spent by %s (%s)", seen.ConflictedBy, where)
	}
	return st, nil
}
