package activities

import (
	"context"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"go.temporal.io/sdk/temporal"

	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/internal/observability"
	"github.com/paymentsd/paymentsd/workflows"
)

// chainFamily is the engine's side of a chain family (chainwatch.Family
// is the chain's): what the scan and the workflows' activities do on the
// family's networks over the engine's records. ScanNetwork, ScanRange and
// CheckTransaction do what is common (the scan's progress, the hand-over
// to the sessions, the rescan's range, the network's settings) and ask
// the network's family for the rest; the workflows see only what these
// return. A new family registers its own under its kind in chainFamilies.
type chainFamily interface {
	// scan reads the blocks after the cursor, or waits at the head for
	// the next one, and returns the payments it found to the network's
	// watched addresses, for their sessions (SessionTransfer.SessionID
	// empty: no session's, for its transaction's workflow to record).
	scan(ctx context.Context, a *Activities, c *chainwatch.Chain, network string, cursor chainwatch.Cursor) (workflows.ScanOutput, handOff, error)
	// rescan reads blocks from..to again (chainwatch.Capabilities.Rescan),
	// the range checked against the head already.
	rescan(ctx context.Context, a *Activities, c *chainwatch.Chain, from, to uint64) ([]workflows.SessionTransfer, error)
	// look reads where a transaction stands, into out (which holds the
	// network's settings).
	look(ctx context.Context, a *Activities, c *chainwatch.Chain, in workflows.CheckInput, out workflows.CheckOutput) (workflows.CheckOutput, error)
}

// handOff is what a family's scan asks of the hand-over of its transfers.
type handOff struct {
	// untraced names the transactions of blocks the scan could not trace:
	// a transfer of one carries no transfers of its transaction. nil: the
	// family's looks read the transaction anyway, none carries them.
	untraced map[string]bool
	// after runs once the scan's transfers are handed over (not when the
	// scan fails, which is retried and reads them again).
	after func()
}

// chainFamilies are the families' engine sides, by chainwatch kind.
var chainFamilies = map[string]chainFamily{
	chainwatch.KindEVM:     evmChain{},
	chainwatch.KindBitcoin: bitcoinChain{},
}

// family returns the engine's side of c's family.
func (a *Activities) family(c *chainwatch.Chain) (chainFamily, error) {
	f, ok := chainFamilies[c.Family().Kind()]
	if !ok {
		return nil, temporal.NewNonRetryableApplicationError("network "+c.Network.Key+": no scan of its family "+c.Family().Kind(),
			"invalid", nil)
	}
	return f, nil
}

// evmChain is the EVM family's engine side.
type evmChain struct{}

// scan polls the blocks after the cursor (chainwatch.Poller, which also
// rewinds a cursor a reorg left behind), watching the sessions' deposit
// addresses, the shared recipients, and the destinations of the refunds
// and payouts waiting for their signatures (outgoingWatch, which takes
// its transfers out).
func (evmChain) scan(ctx context.Context, a *Activities, c *chainwatch.Chain, network string, cursor chainwatch.Cursor) (workflows.ScanOutput, handOff, error) {
	sessions := &depositSessions{store: a.Store, network: c.Network}
	sent := &outgoingWatch{a: a, network: network}
	lookup := sent.lookup(sessions.lookup)
	started := time.Now()
	polled, err := c.Poller(a.Store.Chains().ScannedBlocks(network)).Poll(ctx, cursor, lookup)
	out := scanned(network, polled.Head, polled.Cursor, polled.CaughtUp)
	if err != nil {
		return out, handOff{}, err
	}
	observability.ScannedBlock.WithLabelValues(network).Set(float64(polled.Cursor.Number))
	if polled.Cursor.Number != cursor.Number {
		// A poll that found no new block measured a wait, not a scan.
		observability.ScanDuration.WithLabelValues(network).Observe(time.Since(started).Seconds())
	}
	if polled.Transfers, err = sent.take(ctx, c, polled.Transfers); err != nil {
		return out, handOff{}, err
	}
	untraced := map[string]bool{}
	for _, t := range polled.Transfers {
		if t.Untraced {
			untraced[hashString(t.TxHash)] = true
		}
	}
	if out.Transfers, err = sessions.transfers(ctx, c, polled.Transfers); err != nil {
		return out, handOff{}, err
	}
	return out, handOff{untraced: untraced}, nil
}

func (evmChain) rescan(ctx context.Context, a *Activities, c *chainwatch.Chain, from, to uint64) ([]workflows.SessionTransfer, error) {
	sessions := &depositSessions{store: a.Store, network: c.Network}
	_, found, err := c.Scanner().Scan(ctx, from, to, common.Hash{}, sessions.lookup)
	if err != nil {
		return nil, err
	}
	return sessions.transfers(ctx, c, found)
}

// look reads the transaction's receipt and confirmations (again in the
// block it was read in, ReadIn), and its transfers of the network's
// assets.
func (evmChain) look(ctx context.Context, _ *Activities, c *chainwatch.Chain, in workflows.CheckInput, out workflows.CheckOutput) (workflows.CheckOutput, error) {
	n := c.Network
	hash := common.HexToHash(in.TxHash)
	// No ReadIn (a first look) is the zero hash, which no block has.
	st, err := c.Scanner().RecheckTransaction(ctx, hash, n.FinalizedTag(), common.HexToHash(in.ReadIn))
	if err != nil {
		return out, err
	}
	out.Mined, out.Succeeded, out.BlockNumber, out.Confirmations, out.Final = st.Mined, st.Succeeded, st.BlockNumber, int(st.Confirmations), st.Final
	out.BlockHash, out.MinedAt, out.InternalUnknown = hashString(st.BlockHash), st.BlockTime, st.InternalUnknown
	out.SameBlock = st.SameBlock
	if st.Mined && st.Succeeded && !st.SameBlock {
		out.Transfers = c.PaymentTransfers(st.Transfers)
	}
	return out, nil
}

// bitcoinChain is the Bitcoin family's engine side (bitcoin.go).
type bitcoinChain struct{}

func (bitcoinChain) scan(ctx context.Context, a *Activities, c *chainwatch.Chain, network string, cursor chainwatch.Cursor) (workflows.ScanOutput, handOff, error) {
	out, mempool, err := a.scanBitcoin(ctx, c, cursor)
	if err != nil || mempool == nil {
		return out, handOff{}, err
	}
	// Only once handed over: a scan retried reads the mempool's payments
	// again.
	return out, handOff{after: func() { a.mempools.set(network, mempool) }}, nil
}

func (bitcoinChain) rescan(context.Context, *Activities, *chainwatch.Chain, uint64, uint64) ([]workflows.SessionTransfer, error) {
	return nil, chainwatch.ErrNotSupported // not asked: Capabilities.Rescan is false
}

func (bitcoinChain) look(ctx context.Context, a *Activities, c *chainwatch.Chain, in workflows.CheckInput, out workflows.CheckOutput) (workflows.CheckOutput, error) {
	return a.checkBitcoin(ctx, c, in.TxHash, out)
}

// scanned records a scan's head and lag (head 0: not read) and returns its
// output at the cursor it reached.
func scanned(network string, head uint64, cursor chainwatch.Cursor, caughtUp bool) workflows.ScanOutput {
	if head > 0 {
		observability.ChainHead.WithLabelValues(network).Set(float64(head))
		observability.ScanLag.WithLabelValues(network).Set(float64(head - min(head, cursor.Number)))
	}
	return workflows.ScanOutput{Cursor: workflows.ScanCursor{Number: cursor.Number, Hash: hashString(cursor.Hash), Time: cursor.Time},
		CaughtUp: caughtUp}
}
