package devchain

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// commitAndCheck mines a block and fails unless every tx succeeded in it.
func (c *Chain) commitAndCheck(ctx context.Context, txs ...common.Hash) error {
	for _, h := range txs {
		r, err := c.Mine(ctx, h)
		if err != nil {
			return err
		}
		if r.Status != types.ReceiptStatusSuccessful {
			return fmt.Errorf("tx %s reverted", h)
		}
	}
	return nil
}

// Mine commits blocks until tx is mined and returns its receipt. The pool
// takes a sent transaction in the background, so a block committed right
// after sending may not hold it yet: Mine commits again until it does, for
// ten seconds at most.
func (c *Chain) Mine(ctx context.Context, tx common.Hash) (*types.Receipt, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		c.Commit()
		r, err := c.client.TransactionReceipt(ctx, tx)
		if err == nil {
			return r, nil
		}
		if !errors.Is(err, ethereum.NotFound) {
			return nil, fmt.Errorf("devchain: receipt of %s: %w", tx, err)
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("devchain: %s not mined: is it in the pool?", tx)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(pollInterval):
		}
	}
}

// mine commits a block every interval until Close. Empty blocks are mined
// too, as on a real chain, so confirmations keep counting up. Block
// timestamps have one-second resolution and must increase, so intervals
// under a second make the chain's clock run ahead of the wall clock.
func (c *Chain) mine(interval time.Duration) {
	defer c.minerDone.Done()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-c.stopMiner:
			return
		case <-t.C:
			if !c.paused.Load() {
				c.Commit()
			}
		}
	}
}

// Pause stops the interval miner from mining until Resume; Commit still
// mines. Tests use it to hold a transaction at a given depth.
func (c *Chain) Pause() { c.paused.Store(true) }

// Resume lets the interval miner mine again.
func (c *Chain) Resume() { c.paused.Store(false) }

// Commit mines a block with whatever is pending now and returns the new
// head's hash (the zero hash once the chain is closed). It is safe to call
// while the interval miner runs.
func (c *Chain) Commit() common.Hash {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return common.Hash{}
	}
	return c.backend.beacon.Commit()
}

// Fork simulates a reorg: it makes parent the head at once, so the blocks
// after it stop being canonical, and the next commits build a new branch
// on parent. The pool must be empty. Transactions of the abandoned blocks
// go back to the pool and are mined again on the new branch, in blocks
// with new hashes; call Rollback right after Fork to drop them instead.
func (c *Chain) Fork(parent common.Hash) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return errClosed
	}
	if err := c.backend.beacon.Fork(parent); err != nil {
		return fmt.Errorf("devchain: fork at %s: %w", parent, err)
	}
	c.resetNonces()
	return nil
}

// Rollback drops every pending transaction. After Fork it makes a reorg
// lose the abandoned blocks' transactions for good, as when a payment is
// reorged out and never mined again.
func (c *Chain) Rollback() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.backend.beacon.Rollback()
	c.resetNonces()
}

// resetNonces forgets the nonces handed out, which Fork and Rollback may
// have taken back; the next send asks the pool again.
func (c *Chain) resetNonces() {
	c.sendMu.Lock()
	clear(c.nonces)
	c.sendMu.Unlock()
}

// WaitMined waits for tx's receipt on the canonical chain and for the
// head to reach its block. It only waits: with BlockInterval 0 something
// else must Commit. (The node indexes a new head's transactions a moment
// before "latest" names it: a gas estimate made as soon as the receipt
// shows would still run against the state before.)
func (c *Chain) WaitMined(ctx context.Context, tx common.Hash) (*types.Receipt, error) {
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		r, err := c.client.TransactionReceipt(ctx, tx)
		if err == nil {
			head, err := c.client.BlockNumber(ctx)
			if err != nil {
				return nil, fmt.Errorf("devchain: read the head: %w", err)
			}
			if head >= r.BlockNumber.Uint64() {
				return r, nil
			}
		} else if !errors.Is(err, ethereum.NotFound) {
			return nil, fmt.Errorf("devchain: receipt of %s: %w", tx, err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("devchain: wait for %s: %w", tx, ctx.Err())
		case <-t.C:
		}
	}
}
