package btcrpc

// The checks of what a Bitcoin node answers, and the nodes' comparison
// (docs/decisions.md, "Node answers are checked, not trusted").

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"

	"github.com/paymentsd/paymentsd/internal/nodetrust"
	"github.com/paymentsd/paymentsd/internal/observability"
)

// checkBlock checks a block read for hash: its header hashes to it, with
// the work its bits claim (checkHeader), and its transactions hash to its
// merkle root, none twice (repeating a block's last transactions keeps
// its root: CVE-2012-2459). The witnesses are not checked: a payment is
// read from the outputs, which a transaction's ID covers.
func checkBlock(b *wire.MsgBlock, hash *chainhash.Hash, params *chaincfg.Params) error {
	if err := checkHeader(&b.Header, hash, params); err != nil {
		return err
	}
	if len(b.Transactions) == 0 {
		return nodetrust.Bad("merkle_root", "block %s has no transaction", hash)
	}
	txs := make([]*btcutil.Tx, len(b.Transactions))
	seen := make(map[chainhash.Hash]bool, len(b.Transactions))
	for i, tx := range b.Transactions {
		txs[i] = btcutil.NewTx(tx)
		id := *txs[i].Hash()
		if seen[id] {
			return nodetrust.Bad("merkle_root", "block %s holds transaction %s twice", hash, id)
		}
		seen[id] = true
	}
	if root := blockchain.CalcMerkleRoot(txs, false); root != b.Header.MerkleRoot {
		return nodetrust.Bad("merkle_root", "block %s's transactions hash to %s, not to its merkle root %s", hash, root,
			b.Header.MerkleRoot)
	}
	return nil
}

// checkHeader checks a block header read for hash: it hashes to it, and
// the hash is under the target its bits claim, itself under the network's
// limit (the work a forged block would have to redo).
func checkHeader(h *wire.BlockHeader, hash *chainhash.Hash, params *chaincfg.Params) error {
	if got := h.BlockHash(); got != *hash {
		return nodetrust.Bad("block_hash", "asked for block %s, the header answered hashes to %s", hash, got)
	}
	if err := blockchain.CheckProofOfWork(btcutil.NewBlock(&wire.MsgBlock{Header: *h}), params.PowLimit); err != nil {
		return nodetrust.Bad("proof_of_work", "block %s: %v", hash, err)
	}
	return nil
}

// checkTx checks a transaction read for txid hashes to it.
func checkTx(tx *wire.MsgTx, txid *chainhash.Hash) error {
	if got := tx.TxHash(); got != *txid {
		return nodetrust.Bad("txid", "asked for transaction %s, the one answered hashes to %s", txid, got)
	}
	return nil
}

// Nodes is what the engine believes of the nodes now: those set aside,
// and whether they disagree with no majority.
func (f *Failover) Nodes() nodetrust.Status { return f.ledger().Status() }

// Ledger is the nodes' ledger (its settings may be tuned before use).
func (f *Failover) Ledger() *nodetrust.Ledger { return f.ledger() }

func (f *Failover) ledger() *nodetrust.Ledger {
	f.trustOnce.Do(func() {
		names := make([]string, len(f.nodes))
		for i, n := range f.nodes {
			names[i] = n.String()
		}
		f.trust = nodetrust.New(f.Network, names, observability.NodeReport{})
	})
	return f.trust
}

// compareTimeout bounds one comparison of the nodes.
const compareTimeout = 10 * time.Second

// compareDepth is how far below the lowest head the nodes are compared: a
// block past the race of two blocks found at once at the tip.
const compareDepth = 1

// compareDue reports whether the nodes are to be compared now, at most
// once per interval (0: never), and marks the comparison made if so.
func (f *Failover) compareDue(interval time.Duration) bool {
	if len(f.nodes) < 2 || interval <= 0 {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.compared.IsZero() && time.Since(f.compared) < interval {
		return false
	}
	f.compared = time.Now()
	return true
}

// compare asks each node that may vote (nodetrust.Ledger.Voters) for its
// best block's height, then for the hash and the header of the block
// compareDepth below the lowest: a header that does not hash to its hash,
// or lacks its work, sets its node aside; the hashes are the ledger's
// vote. Three calls per node; one comparison at a time.
func (f *Failover) compare(ctx context.Context) {
	if !f.comparing.CompareAndSwap(false, true) {
		return
	}
	defer f.comparing.Store(false)
	ctx, cancel := context.WithTimeout(ctx, compareTimeout)
	defer cancel()
	heads := map[int]int64{}
	for _, j := range f.ledger().Voters() {
		var n int64
		if f.check(ctx, j) == nil && f.once(ctx, j, &n, "getblockcount") == nil {
			heads[j] = n
		}
	}
	if len(heads) < 2 {
		return
	}
	low := int64(-1)
	for _, h := range heads {
		if low < 0 || h < low {
			low = h
		}
	}
	height := max(low-compareDepth, 0)
	answers, bad := map[int]string{}, 0
	for j := range heads {
		hash, err := f.headerAt(ctx, j, height)
		switch {
		case err == nil:
			answers[j] = hash.String()
		case errors.Is(err, nodetrust.ErrBadAnswer):
			f.ledger().Failed(j, err)
			bad++
		}
	}
	// One answer is a vote only when the other node was just caught
	// failing a check: a node that merely did not answer leaves the
	// question open.
	if len(answers) >= 2 || len(answers) == 1 && bad > 0 {
		f.ledger().Vote(fmt.Sprintf("the hash of block %d", height), answers)
	}
}

// headerAt reads node i's block hash at height and checks the header it
// serves for it.
func (f *Failover) headerAt(ctx context.Context, i int, height int64) (*chainhash.Hash, error) {
	var s, raw string
	if err := f.once(ctx, i, &s, "getblockhash", height); err != nil {
		return nil, err
	}
	hash, err := chainhash.NewHashFromStr(s)
	if err != nil {
		return nil, nodetrust.Bad("block_hash", "getblockhash %d: %v", height, err)
	}
	if err := f.once(ctx, i, &raw, "getblockheader", s, false); err != nil {
		return nil, err
	}
	b, err := hex.DecodeString(raw)
	var h wire.BlockHeader
	if err == nil {
		err = h.Deserialize(bytes.NewReader(b))
	}
	if err != nil {
		return nil, nodetrust.Bad("block_hash", "block %s's header does not decode: %v", hash, err)
	}
	return hash, checkHeader(&h, hash, f.params)
}
