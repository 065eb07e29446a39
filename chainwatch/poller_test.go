package chainwatch_test

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/evmrpc"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/dev/devchain"
	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
)

// memBlocks is a BlockStore in memory, oldest block first. It records
// where each save started and how many resets there were.
type memBlocks struct {
	blocks []chainwatch.Block
	starts []uint64
	resets int
}

func (m *memBlocks) Kept(context.Context) ([]chainwatch.Block, error) {
	kept := slices.Clone(m.blocks)
	slices.Reverse(kept)
	return kept, nil
}

func (m *memBlocks) SaveBlocks(_ context.Context, blocks []chainwatch.Block, oldest uint64) error {
	if len(blocks) == 0 {
		return nil
	}
	m.starts = append(m.starts, blocks[0].Number)
	m.blocks = slices.DeleteFunc(m.blocks, func(b chainwatch.Block) bool {
		return b.Number >= blocks[0].Number
	})
	m.blocks = append(m.blocks, blocks...)
	m.blocks = slices.DeleteFunc(m.blocks, func(b chainwatch.Block) bool { return b.Number < oldest })
	return nil
}

func (m *memBlocks) Reset(context.Context) error {
	m.resets++
	m.blocks = nil
	return nil
}

// watcher drives a Poller over a dev chain the way the chainwatch workflow
// does: it holds the cursor and polls until caught up.
type watcher struct {
	t       *testing.T
	chain   *devchain.Chain
	blocks  *memBlocks
	poller  *chainwatch.Poller
	cursor  chainwatch.Cursor
	deposit common.Address // the one watched address
}

func newWatcher(t *testing.T, client evmrpc.Client, chain *devchain.Chain, keep, freshDepth uint64) *watcher {
	w := &watcher{t: t, chain: chain, blocks: &memBlocks{}, deposit: common.HexToAddress("0x00000000000000000000000000000000DeadBeef")}
	w.poller = &chainwatch.Poller{
		Scanner: chainwatch.Scanner{Client: client, Tokens: []common.Address{chain.Token}, Native: true},
		Blocks:  w.blocks, MaxRange: 4, FreshDepth: freshDepth, Keep: keep,
		HeadWait: 20 * time.Millisecond, PollInterval: 5 * time.Millisecond,
	}
	return w
}

func startChain(t *testing.T) *devchain.Chain {
	t.Helper()
	chain, err := devchain.Start(context.Background(), devchain.Config{Accounts: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { chain.Close() })
	return chain
}

func (w *watcher) watch(_ context.Context, recipients []common.Address) (map[common.Address]bool, error) {
	return map[common.Address]bool{w.deposit: slices.Contains(recipients, w.deposit)}, nil
}

// nodeClient is a chainwatch client of the dev chain's node over HTTP.
func nodeClient(t *testing.T, chain *devchain.Chain) evmrpc.Client {
	t.Helper()
	ec, err := ethclient.Dial(chain.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ec.Close)
	return evmrpc.RPC(ec)
}

// pollToHead polls until caught up and returns the transfers reported. Each
// must be in a block of the chain as it is now (the chain does not move
// while it polls), and the kept blocks must stay inside the window.
func (w *watcher) pollToHead() []chainwatch.Transfer {
	w.t.Helper()
	ctx := context.Background()
	var all []chainwatch.Transfer
	for range 100 {
		out, err := w.poller.Poll(ctx, w.cursor, w.watch)
		if err != nil {
			w.t.Fatalf("poll from %d: %v", w.cursor.Number, err)
		}
		w.cursor = out.Cursor
		for _, tr := range out.Transfers {
			if h := w.header(tr.BlockNumber); h.Hash() != tr.BlockHash {
				w.t.Fatalf("transfer %s reported in block %d %s, not on the chain (%s is)", tr.TxHash, tr.BlockNumber, tr.BlockHash, h.Hash())
			}
		}
		all = append(all, out.Transfers...)
		if len(w.blocks.blocks) > int(w.poller.Keep)+1 {
			w.t.Fatalf("%d blocks kept, window %d", len(w.blocks.blocks), w.poller.Keep)
		}
		if out.CaughtUp {
			head := w.header(0)
			if w.cursor.Number != head.Number.Uint64() || w.cursor.Hash != head.Hash() {
				w.t.Fatalf("caught up at %d %s, head %d %s", w.cursor.Number, w.cursor.Hash, head.Number, head.Hash())
			}
			return all
		}
	}
	w.t.Fatal("never caught up")
	return nil
}

// header returns the canonical header at n, or the head's for 0.
func (w *watcher) header(n uint64) *types.Header {
	w.t.Helper()
	var number *big.Int
	if n > 0 {
		number = new(big.Int).SetUint64(n)
	}
	h, err := w.chain.Client().HeaderByNumber(context.Background(), number)
	if err != nil {
		w.t.Fatalf("header %d: %v", n, err)
	}
	return h
}

// pay sends a token and a native payment to the deposit address and mines
// them in one block; it returns their hashes and the token payment's
// receipt.
func (w *watcher) pay() (txs []common.Hash, r *types.Receipt) {
	w.t.Helper()
	ctx := context.Background()
	payer := w.chain.Accounts[0]
	nonce, err := w.chain.Client().PendingNonceAt(ctx, payer.Address)
	if err != nil {
		w.t.Fatal(err)
	}
	token, err := w.chain.TransferToken(ctx, payer, w.deposit, big.NewInt(9_000_000))
	if err != nil {
		w.t.Fatal(err)
	}
	native, err := w.chain.TransferNative(ctx, payer, w.deposit, big.NewInt(1e15))
	if err != nil {
		w.t.Fatal(err)
	}
	// The pool takes sent transactions in the background: wait for both.
	testwait.Until(w.t, 10*time.Second, func() (bool, string) {
		n, err := w.chain.Client().PendingNonceAt(ctx, payer.Address)
		return err == nil && n == nonce+2, fmt.Sprintf("the pool's next nonce is %d (%v), want %d", n, err, nonce+2)
	})
	w.chain.Commit()
	txs = []common.Hash{token, native}
	var blocks []common.Hash
	for _, h := range txs {
		if r, err = w.chain.Client().TransactionReceipt(ctx, h); err != nil {
			w.t.Fatalf("receipt of %s: %v", h, err)
		}
		blocks = append(blocks, r.BlockHash)
	}
	if blocks[0] != blocks[1] {
		w.t.Fatalf("the payments were mined in two blocks: %v", blocks)
	}
	return txs, r
}

func (w *watcher) commit(n int) {
	for range n {
		w.chain.Commit()
	}
}

// reported returns, by transaction, the blocks its transfers were
// reported in.
func reported(transfers []chainwatch.Transfer) map[common.Hash][]common.Hash {
	m := map[common.Hash][]common.Hash{}
	for _, t := range transfers {
		m[t.TxHash] = append(m[t.TxHash], t.BlockHash)
	}
	return m
}

// The first poll, with no cursor, starts FreshDepth blocks behind the head;
// polls then follow the chain one bounded range at a time, report each
// transfer once, and at the head wait for the next block.
func TestPollerFollowsTheChain(t *testing.T) {
	chain := startChain(t)
	w := newWatcher(t, nodeClient(t, chain), chain, 6, 8)
	w.commit(20)
	txs, r := w.pay()
	w.commit(3)
	head := w.header(0).Number.Uint64()

	got := reported(w.pollToHead())
	if len(got) != 2 || len(got[txs[0]]) != 1 || len(got[txs[1]]) != 1 || got[txs[0]][0] != r.BlockHash {
		t.Fatalf("reported %v, want %v once each in %s", got, txs, r.BlockHash)
	}
	kept, _ := w.blocks.Kept(context.Background())
	if kept[0].Number != head || kept[len(kept)-1].Number != head-6 {
		t.Fatalf("kept %d..%d, want %d..%d", kept[len(kept)-1].Number, kept[0].Number, head-6, head)
	}

	// At the head, a poll waits HeadWait and changes nothing.
	at := w.cursor
	out, err := w.poller.Poll(context.Background(), at, w.watch)
	if err != nil || !out.CaughtUp || out.Cursor != at || len(out.Transfers) != 0 {
		t.Fatalf("poll at the head = %+v, %v", out, err)
	}
	// A block mined while it waits is scanned by the same poll.
	w.poller.HeadWait = 10 * time.Second
	go func() {
		time.Sleep(50 * time.Millisecond) // not a wait: the block must come while the poll is waiting for one
		chain.Commit()
	}()
	out, err = w.poller.Poll(context.Background(), at, w.watch)
	if err != nil || !out.CaughtUp || out.Cursor.Number != at.Number+1 {
		t.Fatalf("poll waiting for a block = %+v, %v", out, err)
	}
}

// After a reorg the poller rewinds to the common ancestor and rescans: a
// payment mined again on the new branch is reported again with its new
// block, one the new branch lost is not reported again, and no transfer is
// ever reported from a block off the chain. A reorg deeper than the kept
// window restarts the scan near the head.
func TestPollerFollowsReorgs(t *testing.T) {
	const keep, freshDepth = 8, 16
	for _, tc := range []struct {
		depth   int // blocks dropped, the payment's the oldest
		dropped bool
	}{
		{depth: 1}, {depth: 1, dropped: true},
		{depth: 5}, {depth: 5, dropped: true},
		{depth: keep + 4}, {depth: keep + 4, dropped: true},
	} {
		name := fmt.Sprintf("depth %d", tc.depth)
		if tc.dropped {
			name += ", payment dropped"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			chain := startChain(t)
			w := newWatcher(t, nodeClient(t, chain), chain, keep, freshDepth)
			w.commit(2 * freshDepth)
			w.pollToHead()
			txs, r := w.pay()
			w.commit(tc.depth - 1)
			if got := reported(w.pollToHead()); len(got) != 2 || got[txs[0]][0] != r.BlockHash {
				t.Fatalf("before the reorg: reported %v", got)
			}
			oldHead := w.cursor

			parent := w.header(r.BlockNumber.Uint64() - 1)
			if err := chain.Fork(parent.Hash()); err != nil {
				t.Fatal(err)
			}
			if tc.dropped {
				chain.Rollback()
			} else {
				for _, h := range txs {
					if _, err := chain.Mine(context.Background(), h); err != nil {
						t.Fatal(err)
					}
				}
			}
			w.commit(1)
			newHead, saves := w.header(0).Number.Uint64(), len(w.blocks.starts)
			got := reported(w.pollToHead())
			if tc.dropped {
				if _, err := chain.Client().TransactionReceipt(context.Background(), txs[0]); !errors.Is(err, ethereum.NotFound) {
					t.Fatalf("the dropped payment is on the new branch: %v", err)
				}
				if len(got) != 0 {
					t.Fatalf("after the reorg: reported %v, want nothing", got)
				}
			} else {
				again, err := chain.Client().TransactionReceipt(context.Background(), txs[0])
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != 2 || len(got[txs[0]]) != 1 || got[txs[0]][0] != again.BlockHash || again.BlockHash == r.BlockHash {
					t.Fatalf("after the reorg: reported %v, want %v in the new block %s", got, txs, again.BlockHash)
				}
			}
			if w.cursor == oldHead {
				t.Fatal("the cursor did not move off the old branch")
			}
			kept, _ := w.blocks.Kept(context.Background())
			for _, b := range kept {
				if w.header(b.Number).Hash() != b.Hash {
					t.Fatalf("kept block %d %s is off the chain", b.Number, b.Hash)
				}
			}
			// The rescan starts right after the common ancestor, or, when
			// the reorg went deeper than the kept window, FreshDepth behind
			// the head with nothing of the old branch kept.
			restart, resets := parent.Number.Uint64()+1, 0
			if tc.depth > keep {
				restart, resets = newHead-freshDepth, 1
			}
			if w.blocks.starts[saves] != restart || w.blocks.resets != resets {
				t.Fatalf("rescan from %d after %d resets, want from %d after %d", w.blocks.starts[saves], w.blocks.resets, restart, resets)
			}
		})
	}
}

// forkingClient runs fork once, right before the first eth_getLogs: a
// reorg in the middle of a scan.
type forkingClient struct {
	evmrpc.Client
	fork func()
}

// Read runs read on this client, whose eth_getLogs forks the chain.
func (c *forkingClient) Read(_ context.Context, read func(evmrpc.Client) error) error { return read(c) }

func (c *forkingClient) FilterLogs(ctx context.Context, q ethereum.FilterQuery) ([]types.Log, error) {
	if f := c.fork; f != nil {
		c.fork = nil
		f()
	}
	return c.Client.FilterLogs(ctx, q)
}

// A reorg between reading a range's blocks and its logs fails the poll and
// saves nothing; the poll repeated from the same cursor reports the payment
// in its new block.
func TestPollerReorgDuringScan(t *testing.T) {
	chain := startChain(t)
	client := &forkingClient{Client: nodeClient(t, chain)}
	w := newWatcher(t, client, chain, 8, 16)
	w.commit(5)
	w.pollToHead()
	before := slices.Clone(w.blocks.blocks)

	txs, r := w.pay()
	client.fork = func() {
		if err := chain.Fork(w.header(r.BlockNumber.Uint64() - 1).Hash()); err != nil {
			t.Error(err)
		}
		if _, err := chain.Mine(context.Background(), txs[0]); err != nil {
			t.Error(err)
		}
	}
	out, err := w.poller.Poll(context.Background(), w.cursor, w.watch)
	if !errors.Is(err, chainwatch.ErrReorged) {
		t.Fatalf("poll across a reorg = %+v, %v; want ErrReorged", out, err)
	}
	if !slices.Equal(w.blocks.blocks, before) {
		t.Fatal("a failed poll changed the kept blocks")
	}
	got := reported(w.pollToHead())
	again, err := chain.Client().TransactionReceipt(context.Background(), txs[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(got[txs[0]]) != 1 || got[txs[0]][0] != again.BlockHash || again.BlockHash == r.BlockHash {
		t.Fatalf("after the reorg: reported %v, want %s in %s", got, txs[0], again.BlockHash)
	}
}
