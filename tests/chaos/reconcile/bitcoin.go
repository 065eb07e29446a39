package reconcile

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"slices"

	"github.com/btcsuite/btcd/btcjson"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/rpcclient"
	"github.com/btcsuite/btcd/txscript"
)

// BitcoinOutput is one output to a watched address on a Bitcoin node's
// best chain.
type BitcoinOutput struct {
	TxID      string // as nodes show it
	Vout      int
	Height    int64
	BlockHash string // as nodes show it
	Time      uint64 // the block's timestamp, in seconds
	Address   string
	Sats      *big.Int
}

// Key is the output's identity, as the engine keys a Bitcoin payment's
// records (its transaction ID and output index).
func (o BitcoinOutput) Key() string { return txKey(o.TxID, o.Vout) }

// BitcoinChain is what the reconciler read of a Bitcoin node's best chain.
type BitcoinChain struct {
	From, Head int64 // heights read
	Outputs    []BitcoinOutput
	// Indexed is, per watched address, what the node's own address index
	// (searchrawtransactions) says mined transactions paid it, in sats:
	// the outputs read from the blocks must make the same.
	Indexed map[string]*big.Int
}

// ReadBitcoin reads the best chain of the Bitcoin node at rawURL
// (http://user:password@host:port) from height from to its tip: every
// output to a watched address, reading each block whole and checking that
// it builds on the block read before it, and the node's address index for
// each watched address. It starts over if the tip moves while it reads.
// The node must keep an address index (btcd's --addrindex).
func ReadBitcoin(ctx context.Context, rawURL string, params *chaincfg.Params, from int64, watched []string) (*BitcoinChain, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.User == nil {
		return nil, fmt.Errorf("reconcile: bitcoin node URL %q: want http://user:password@host:port", rawURL)
	}
	pass, _ := u.User.Password()
	c, err := rpcclient.New(&rpcclient.ConnConfig{Host: u.Host, User: u.User.Username(), Pass: pass,
		HTTPPostMode: true, DisableTLS: true}, nil)
	if err != nil {
		return nil, fmt.Errorf("reconcile: bitcoin node: %w", err)
	}
	defer c.Shutdown()
	for attempt := 1; ; attempt++ {
		ch, err := readBitcoin(ctx, c, params, from, watched)
		if errors.Is(err, errMoved) && attempt < 5 {
			continue
		}
		return ch, err
	}
}

func readBitcoin(ctx context.Context, c *rpcclient.Client, params *chaincfg.Params, from int64, watched []string) (*BitcoinChain, error) {
	want := map[string]bool{}
	for _, a := range watched {
		want[a] = true
	}
	tipHash, tip, err := c.GetBestBlock()
	if err != nil {
		return nil, fmt.Errorf("reconcile: bitcoin tip: %w", err)
	}
	ch := &BitcoinChain{From: from, Head: int64(tip), Indexed: map[string]*big.Int{}}
	var parent *chainhash.Hash
	for h := from; h <= int64(tip); h++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hash, err := c.GetBlockHash(h)
		if err != nil {
			return nil, fmt.Errorf("reconcile: bitcoin block %d: %w", h, err)
		}
		b, err := c.GetBlock(hash)
		if err != nil {
			return nil, fmt.Errorf("reconcile: bitcoin block %d: %w", h, err)
		}
		if b.BlockHash() != *hash || parent != nil && b.Header.PrevBlock != *parent {
			return nil, errMoved
		}
		parent = hash
		for _, tx := range b.Transactions {
			for i, out := range tx.TxOut {
				_, addrs, _, err := txscript.ExtractPkScriptAddrs(out.PkScript, params)
				if err != nil || len(addrs) != 1 || !want[addrs[0].EncodeAddress()] {
					continue
				}
				ch.Outputs = append(ch.Outputs, BitcoinOutput{TxID: tx.TxHash().String(), Vout: i, Height: h,
					BlockHash: hash.String(), Time: uint64(b.Header.Timestamp.Unix()), Address: addrs[0].EncodeAddress(),
					Sats: big.NewInt(out.Value)})
			}
		}
	}
	for _, a := range watched {
		addr, err := btcutil.DecodeAddress(a, params)
		if err != nil {
			return nil, fmt.Errorf("reconcile: bitcoin address %q: %w", a, err)
		}
		sum := new(big.Int)
		txs, err := c.SearchRawTransactionsVerbose(addr, 0, 10_000, false, false, nil)
		var rpcErr *btcjson.RPCError
		if err != nil && !(errors.As(err, &rpcErr) && rpcErr.Code == btcjson.ErrRPCNoTxInfo) { // never paid
			return nil, fmt.Errorf("reconcile: the node's index of %s: %w", a, err)
		}
		for _, tx := range txs {
			if tx.BlockHash == "" {
				continue // in the mempool
			}
			for _, out := range tx.Vout {
				if out.ScriptPubKey.Address != a && !slices.Contains(out.ScriptPubKey.Addresses, a) {
					continue
				}
				sats, err := btcutil.NewAmount(out.Value)
				if err != nil {
					return nil, fmt.Errorf("reconcile: the node's index of %s: %w", a, err)
				}
				sum.Add(sum, big.NewInt(int64(sats)))
			}
		}
		ch.Indexed[a] = sum
	}
	if again, _, err := c.GetBestBlock(); err != nil || !again.IsEqual(tipHash) {
		return nil, errMoved
	}
	return ch, nil
}
