package chainwatch

import (
	"context"
	"fmt"
	"time"

	"github.com/ethereum/go-ethereum/common"
)

// The defaults of a Poller's settings.
const (
	// DefaultMaxRange bounds the blocks one poll scans.
	DefaultMaxRange = 100
	// DefaultFreshDepth is how far behind the head a poll with no usable
	// cursor starts (a first start, or a chain that was replaced).
	DefaultFreshDepth = 64
	// DefaultKeep bounds how far back a reorg can rewind: the blocks more
	// than this many below the newest scanned one are forgotten, and a
	// deeper reorg restarts the scan near the chain's head.
	DefaultKeep = 256
	// DefaultHeadWait is how long one poll waits at the chain's head for a
	// new block.
	DefaultHeadWait = 5 * time.Second
	// DefaultPollInterval is how often a poll waiting at the head reads it.
	DefaultPollInterval = time.Second
)

// BlockStore keeps the blocks a network's poller has scanned, its memory
// of the chain: when the cursor's block leaves the chain, the poller walks
// these back to the newest one still on it.
type BlockStore interface {
	// Kept returns the kept blocks, newest first.
	Kept(ctx context.Context) ([]Block, error)
	// SaveBlocks keeps newly scanned consecutive blocks in place of every
	// kept block at or above the first one's number (the blocks a rewind
	// abandoned), and forgets the kept blocks numbered below oldest, at
	// once.
	SaveBlocks(ctx context.Context, blocks []Block, oldest uint64) error
	// Reset forgets every kept block: none is on the chain any more.
	Reset(ctx context.Context) error
}

// Poller follows one network's chain from a cursor, the way Chainlink's log
// poller does: each poll scans the blocks after the cursor, keeps their
// (number, hash) in a BlockStore, and when the cursor's block has left the
// chain, rewinds to the newest kept block still on it and rescans from
// there. The caller holds the cursor: a poll does not move it, it returns
// the next one, so a poll repeated after a failure rescans the same range.
//
// A zero setting takes its default.
type Poller struct {
	Scanner Scanner
	Blocks  BlockStore
	// MaxRange bounds the blocks one poll scans.
	MaxRange uint64
	// FreshDepth is how far behind the head a poll with no usable cursor
	// starts.
	FreshDepth uint64
	// Keep is how many blocks below the newest scanned one stay kept, which
	// bounds how deep a reorg can be rewound.
	Keep uint64
	// HeadWait is how long a poll at the head waits for a new block before
	// it returns caught up.
	HeadWait time.Duration
	// PollInterval is how often a poll waiting at the head reads it.
	PollInterval time.Duration
}

// Polled is one poll's result.
type Polled struct {
	// Cursor is the last block scanned: the next poll's cursor. Zero when
	// the chain holds none of the kept blocks any more.
	Cursor Cursor
	// Transfers are the transfers to watched addresses in the scanned
	// blocks, every one in a block of the chain as it was scanned.
	Transfers []Transfer
	// CaughtUp is true when the poll reached the chain's head.
	CaughtUp bool
	// Head is the chain's head block as the poll last read it (zero when
	// it could not be read).
	Head uint64
}

// Poller returns a poller of the chain over blocks, with the network's
// block range and poll interval.
func (c *Chain) Poller(blocks BlockStore) *Poller {
	return &Poller{Scanner: c.Scanner(), Blocks: blocks, MaxRange: uint64(max(c.Network.MaxBlockRange, 0)),
		PollInterval: time.Duration(c.Network.PollInterval)}
}

// Poll scans the blocks after cursor, at most MaxRange of them, for
// transfers to the addresses watch reports. With no block after the cursor
// it waits up to HeadWait for one. A cursor whose block left the chain
// rewinds to the newest kept block still on it; with none, or with no
// cursor, the scan starts FreshDepth blocks behind the head. A reorg in the
// middle of the scan fails the poll with ErrReorged and saves nothing: a
// retry starts over.
func (p *Poller) Poll(ctx context.Context, cursor Cursor, watch Watchlist) (Polled, error) {
	out, transfers, err := poll(ctx, p.settings(), evmChain{p.Scanner, watch}, cursor)
	out.Transfers = transfers
	return out, err
}

// chainReader is the chain a poll reads: its head, whether a block is
// still on it, and what a range of blocks holds (F).
type chainReader[F any] interface {
	Head(ctx context.Context) (uint64, error)
	Canonical(ctx context.Context, c Cursor) (bool, error)
	scanRange(ctx context.Context, from, to uint64, parent common.Hash) ([]Block, F, error)
}

// evmChain reads an EVM chain for the transfers to watched addresses.
type evmChain struct {
	Scanner
	watch Watchlist
}

func (c evmChain) scanRange(ctx context.Context, from, to uint64, parent common.Hash) ([]Block, []Transfer, error) {
	return c.Scan(ctx, from, to, parent, c.watch)
}

// poll is Poll on any chain: s holds the settings, r reads the chain.
func poll[F any](ctx context.Context, s *Poller, r chainReader[F], cursor Cursor) (Polled, F, error) {
	var none F
	head, err := r.Head(ctx)
	if err != nil {
		return Polled{Cursor: cursor}, none, fmt.Errorf("head: %w", err)
	}
	if cursor.Hash != (common.Hash{}) {
		ok, err := r.Canonical(ctx, cursor)
		if err != nil {
			return Polled{Cursor: cursor}, none, err
		}
		if !ok {
			if cursor, err = s.commonAncestor(ctx, r); err != nil {
				return Polled{Cursor: cursor}, none, err
			}
		}
	}
	out := Polled{Cursor: cursor, Head: head}
	from := cursor.Number + 1
	if cursor.Hash == (common.Hash{}) {
		from = 0
		if head > s.FreshDepth {
			from = head - s.FreshDepth
		}
	}
	head, caughtUp, err := s.waitForBlock(ctx, r, from, head)
	out.Head = max(out.Head, head)
	if err != nil || caughtUp {
		out.CaughtUp = caughtUp
		return out, none, err
	}
	to := min(head, from+s.MaxRange-1)
	blocks, found, err := r.scanRange(ctx, from, to, cursor.Hash)
	if err != nil {
		return out, none, err
	}
	last := blocks[len(blocks)-1]
	if err := s.Blocks.SaveBlocks(ctx, blocks, last.Number-min(last.Number, s.Keep)); err != nil {
		return out, none, err
	}
	return Polled{Cursor: Cursor{Number: last.Number, Hash: last.Hash, Time: last.Time}, CaughtUp: to == head, Head: head}, found, nil
}

// waitForBlock waits at the head, rather than in a workflow timer, until
// block from exists: a payment is seen one poll interval after its block,
// and the caller's history grows only when there is something to scan.
// caughtUp is true when HeadWait passed without it.
func (p *Poller) waitForBlock(ctx context.Context, r interface {
	Head(context.Context) (uint64, error)
}, from, head uint64) (newHead uint64, caughtUp bool, err error) {
	for wait := time.Now().Add(p.HeadWait); from > head; {
		if time.Now().After(wait) {
			return head, true, nil
		}
		select {
		case <-ctx.Done():
			return head, false, ctx.Err()
		case <-time.After(p.PollInterval):
		}
		if head, err = r.Head(ctx); err != nil {
			return head, false, fmt.Errorf("head: %w", err)
		}
	}
	return head, false, nil
}

// commonAncestor walks the kept blocks back to the newest one still on the
// chain. With none (a reorg deeper than the kept window, or a new chain) it
// forgets them all and returns the zero cursor.
func (p *Poller) commonAncestor(ctx context.Context, r interface {
	Canonical(context.Context, Cursor) (bool, error)
}) (Cursor, error) {
	kept, err := p.Blocks.Kept(ctx)
	if err != nil {
		return Cursor{}, err
	}
	for _, b := range kept {
		c := Cursor{Number: b.Number, Hash: b.Hash}
		ok, err := r.Canonical(ctx, c)
		if err != nil {
			return Cursor{}, err
		}
		if ok {
			return c, nil
		}
	}
	return Cursor{}, p.Blocks.Reset(ctx)
}

// settings returns the poller with its zero settings set to the defaults.
func (p *Poller) settings() *Poller {
	s := *p
	if s.MaxRange == 0 {
		s.MaxRange = DefaultMaxRange
	}
	if s.FreshDepth == 0 {
		s.FreshDepth = DefaultFreshDepth
	}
	if s.Keep == 0 {
		s.Keep = DefaultKeep
	}
	if s.HeadWait == 0 {
		s.HeadWait = DefaultHeadWait
	}
	if s.PollInterval == 0 {
		s.PollInterval = DefaultPollInterval
	}
	return &s
}
