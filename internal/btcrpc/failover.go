package btcrpc

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/btcsuite/btcd/btcjson"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"

	"github.com/paymentsd/paymentsd/internal/nodetrust"
)

// DefaultCallTimeout bounds one call on one node before the next node is
// asked: a raw block of 4 MB is read well within it.
const DefaultCallTimeout = 30 * time.Second

// endpoint states: a node is used only once it has shown it serves the
// network (its genesis block is the network's).
const (
	unchecked int32 = iota
	checked
	wrongNetwork
)

// Failover is a bitcoin network's nodes: each call goes to the node that
// last answered and moves on to the next when a node does not answer
// (down, timed out, refusing its credentials); an error the node answers
// (a block height out of range, an unknown transaction) is the call's
// answer and is returned as it is. A node is used only once its genesis
// block has been found to be the network's: one of another network is
// never asked again.
//
// Answers are checked, not trusted (internal/nodetrust, check.go): a block
// must hash to the hash asked for, with its work, and its transactions to
// its merkle root; a transaction to its ID. A node whose answer fails a
// check is set aside, and the next is asked. Every CompareInterval the
// nodes are compared on the block just below the lowest of their heads;
// one that disagrees with the majority is set aside until it agrees again,
// and when no answer holds a majority (two nodes that disagree) no node is
// used until one does.
type Failover struct {
	// Network names the network in logs and metrics (its chain's name
	// until set).
	Network string
	nodes   []*Client
	params  *chaincfg.Params
	state   []atomic.Int32
	// current is the node that last answered.
	current atomic.Int32
	// CallTimeout bounds one call on one node (DefaultCallTimeout).
	CallTimeout time.Duration
	// CompareInterval is how often BlockCount compares the nodes (0:
	// never); while they disagree with no majority, every call compares
	// them again, at most once per SplitRecheck.
	CompareInterval time.Duration
	SplitRecheck    time.Duration
	// Calls counts the calls made, for the tests and benchmarks.
	Calls atomic.Int64

	trust     *nodetrust.Ledger
	trustOnce sync.Once
	comparing atomic.Bool
	mu        sync.Mutex
	compared  time.Time
}

// The defaults of the comparisons' settings.
const (
	DefaultCompareInterval = 30 * time.Second
	DefaultSplitRecheck    = 5 * time.Second
)

// Dial is a Failover over the nodes at urls, of the network params names.
// Each node is checked now: a URL that does not parse, or a node that
// answers for another network, is an error naming it; a node that does not
// answer is checked before its first use instead, so that a node down at
// start does not stop the engine.
func Dial(ctx context.Context, urls []string, params *chaincfg.Params) (*Failover, error) {
	if len(urls) == 0 {
		return nil, errors.New("bitcoin network " + params.Name + ": no node URL")
	}
	f := &Failover{Network: params.Name, params: params, state: make([]atomic.Int32, len(urls)), CallTimeout: DefaultCallTimeout,
		CompareInterval: DefaultCompareInterval, SplitRecheck: DefaultSplitRecheck}
	for _, u := range urls {
		c, err := New(u)
		if err != nil {
			return nil, err
		}
		f.nodes = append(f.nodes, c)
	}
	// The nodes are checked at once, each for a few seconds at most.
	ctx, cancel := context.WithTimeout(ctx, startCheckTimeout)
	defer cancel()
	errs := make([]error, len(f.nodes))
	var wg sync.WaitGroup
	for i := range f.nodes {
		wg.Go(func() { errs[i] = f.check(ctx, i) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil && !errors.Is(err, ErrNotAnswered) && !errors.Is(err, context.DeadlineExceeded) {
			return nil, err
		}
	}
	return f, nil
}

// startCheckTimeout bounds Dial's checks: a node that has not answered by
// then is checked before its first use.
const startCheckTimeout = 5 * time.Second

// check asks node i for its genesis block once.
func (f *Failover) check(ctx context.Context, i int) error {
	switch f.state[i].Load() {
	case checked:
		return nil
	case wrongNetwork:
		return fmt.Errorf("bitcoin node %s is not on %s", f.nodes[i], f.params.Name)
	}
	var genesis string
	if err := f.once(ctx, i, &genesis, "getblockhash", 0); err != nil {
		return err
	}
	if genesis != f.params.GenesisHash.String() {
		f.state[i].Store(wrongNetwork)
		return fmt.Errorf("bitcoin node %s is not on %s: its genesis block is %s, not %s", f.nodes[i], f.params.Name,
			genesis, f.params.GenesisHash)
	}
	f.state[i].Store(checked)
	return nil
}

// once makes one call on node i, within the call timeout.
func (f *Failover) once(ctx context.Context, i int, result any, method string, params ...any) error {
	ctx, cancel := context.WithTimeout(ctx, f.CallTimeout)
	defer cancel()
	f.Calls.Add(1)
	return f.nodes[i].Call(ctx, result, method, params...)
}

// Call makes a call on the node that last answered, then on the others in
// turn while none answers. The nodes the ledger sets aside are not asked.
func (f *Failover) Call(ctx context.Context, result any, method string, params ...any) error {
	return f.call(ctx, result, nil, method, params...)
}

// call is Call with check run on each node's answer: an answer that fails
// it (a nodetrust.BadAnswer) sets its node aside, and the next node is
// asked.
func (f *Failover) call(ctx context.Context, result any, check func() error, method string, params ...any) error {
	if f.ledger().Split() && f.compareDue(f.SplitRecheck) {
		f.compare(ctx) // the only way out of a split
	}
	start := int(f.current.Load())
	var errs []error
	for k := range f.nodes {
		i := (start + k) % len(f.nodes)
		if !f.ledger().Usable(i) {
			continue
		}
		err := f.check(ctx, i)
		if err == nil {
			err = f.once(ctx, i, result, method, params...)
		}
		if err == nil && check != nil {
			if err = check(); err != nil {
				f.ledger().Failed(i, err)
				errs = append(errs, fmt.Errorf("%s: %w", f.nodes[i], err))
				continue
			}
		}
		var answered *btcjson.RPCError
		if err == nil || errors.As(err, &answered) {
			if i != start {
				f.current.Store(int32(i))
				slog.WarnContext(ctx, "bitcoin calls moved to another node", "network", f.Network, "node", f.nodes[i].String())
			}
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return fmt.Errorf("%s: %w", f.Network, f.ledger().Why())
	}
	return fmt.Errorf("no node of %s answered, or every answer failed its checks: %w", f.Network, errors.Join(errs...))
}

// BlockCount is the height of the node's best block. Every CompareInterval
// it compares the nodes first (compare).
func (f *Failover) BlockCount(ctx context.Context) (int64, error) {
	if f.compareDue(f.CompareInterval) {
		f.compare(ctx)
	}
	var n int64
	return n, f.Call(ctx, &n, "getblockcount")
}

// BlockHash is the hash of the best chain's block at height; a height
// above the best block is an error OutOfRange reports.
func (f *Failover) BlockHash(ctx context.Context, height int64) (*chainhash.Hash, error) {
	var s string
	if err := f.Call(ctx, &s, "getblockhash", height); err != nil {
		return nil, err
	}
	return chainhash.NewHashFromStr(s)
}

// Block is the block with the hash, read raw and decoded, and checked
// (checkBlock).
func (f *Failover) Block(ctx context.Context, hash *chainhash.Hash) (*wire.MsgBlock, error) {
	var b *wire.MsgBlock
	err := f.raw(ctx, "getblock", hash, func(raw []byte) error {
		b = new(wire.MsgBlock)
		if err := b.Deserialize(bytes.NewReader(raw)); err != nil {
			return nodetrust.Bad("block_hash", "block %s does not decode: %v", hash, err)
		}
		return checkBlock(b, hash, f.params)
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

// RawMempool lists the transactions in the node's mempool.
func (f *Failover) RawMempool(ctx context.Context) ([]*chainhash.Hash, error) {
	var ids []string
	if err := f.Call(ctx, &ids, "getrawmempool"); err != nil {
		return nil, err
	}
	out := make([]*chainhash.Hash, 0, len(ids))
	for _, id := range ids {
		h, err := chainhash.NewHashFromStr(id)
		if err != nil {
			return nil, fmt.Errorf("getrawmempool: %w", err)
		}
		out = append(out, h)
	}
	return out, nil
}

// RawTransaction is the transaction with the ID, read raw and decoded,
// and checked to hash to the ID: from the mempool, or from the blocks
// where the node indexes them (btcd's --txindex, Bitcoin Core's
// txindex=1).
func (f *Failover) RawTransaction(ctx context.Context, txid *chainhash.Hash) (*wire.MsgTx, error) {
	var tx *wire.MsgTx
	err := f.raw(ctx, "getrawtransaction", txid, func(raw []byte) error {
		tx = new(wire.MsgTx)
		if err := tx.Deserialize(bytes.NewReader(raw)); err != nil {
			return nodetrust.Bad("txid", "transaction %s does not decode: %v", txid, err)
		}
		return checkTx(tx, txid)
	})
	if err != nil {
		return nil, err
	}
	return tx, nil
}

// raw calls method for the serialized object named by id (verbosity 0)
// and runs read on each node's answer, its bytes: read decodes and checks
// them.
func (f *Failover) raw(ctx context.Context, method string, id *chainhash.Hash, read func([]byte) error) error {
	var s string
	return f.call(ctx, &s, func() error {
		b, err := hex.DecodeString(s)
		if err != nil {
			return nodetrust.Bad("decode", "%s %s: not hex: %v", method, id, err)
		}
		return read(b)
	}, method, id.String(), 0)
}

// OutOfRange reports whether err is a node's answer that a block height
// is above its best block: btcd's code -1, Bitcoin Core's -8.
func OutOfRange(err error) bool {
	var e *btcjson.RPCError
	return errors.As(err, &e) && (e.Code == btcjson.ErrRPCOutOfRange || e.Code == btcjson.ErrRPCInvalidParameter)
}
