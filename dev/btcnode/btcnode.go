// Package btcnode runs a real Bitcoin full node, btcd, in regtest for the
// dev stack and the tests, with a wallet of its own that mines and pays:
// what a customer's wallet does to a Bitcoin checkout session. btcd is
// built from the module pinned in dev/tools/btcd (its own module: it
// needs an older btcec than the engine's dependencies select).
package btcnode

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/rpcclient"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"

	"github.com/paymentsd/paymentsd/dev/freeport"
	"github.com/paymentsd/paymentsd/internal/btckeys"
	"github.com/paymentsd/paymentsd/internal/childproc"
)

// Params are the node's network's.
var Params = &chaincfg.RegressionNetParams

// Config configures a node.
type Config struct {
	// Dir holds the node's blocks and logs; empty is a temporary folder
	// removed by Stop.
	Dir string
	// Binary is a built btcd; empty builds it (cached by Go's build cache).
	Binary string
	// Seed makes the wallet's key; empty is a fixed dev seed.
	Seed string
	// Independent makes every payment spend a mature coinbase of its own,
	// never the change of another payment: replacing, double-spending or
	// reorging one payment then leaves every other where it was.
	Independent bool
	// Peer is another node's peer-to-peer address (its P2PAddr): the node
	// connects to it alone and takes its blocks and transactions, as a
	// merchant's node follows the network, instead of mining its own
	// chain at start. A node in regtest starts on an empty chain each time
	// (btcd removes a regtest chain at start), so a peer's restart takes
	// the chain again from it.
	Peer string
}

// Node is a running btcd in regtest.
type Node struct {
	// RPCAddr, User and Pass reach its JSON-RPC server (plain HTTP on
	// loopback).
	RPCAddr, User, Pass string
	Client              *rpcclient.Client

	cmd       *exec.Cmd
	exited    chan struct{}
	dir, temp string
	bin       string
	p2p       int
	peer      string

	independent bool

	mu     sync.Mutex
	key    *btcec.PrivateKey
	wallet btcutil.Address
	script []byte
	coins  []coin // spendable outputs of the wallet
	nextCB int64  // the next block height whose coinbase is the wallet's to spend
}

// coin is an output the wallet can spend.
type coin struct {
	out   wire.OutPoint
	value int64
}

// Mature is how many blocks a coinbase waits to be spent.
const Mature = 100

// SegWitActive is the height from which regtest's blocks enforce SegWit:
// its BIP9 deployment starts at the first 144-block window, locks in at
// the second and is active from the third.
const SegWitActive = 3 * 144

// Build builds btcd into dir and returns its path.
func Build(ctx context.Context, dir string) (string, error) {
	_, file, _, _ := runtime.Caller(0)
	tool := filepath.Join(filepath.Dir(file), "..", "tools", "btcd")
	bin, err := filepath.Abs(filepath.Join(dir, "btcd")) // the build runs in the tool's folder
	if err != nil {
		return "", err
	}
	cmd := childproc.Tie(exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/btcsuite/btcd"), syscall.SIGKILL)
	cmd.Dir = tool
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build btcd: %v\n%s", err, out)
	}
	return bin, nil
}

// Start starts a node and its wallet, and mines SegWitActive blocks: the
// chain then takes SegWit payments, and the wallet has coins to spend.
func Start(ctx context.Context, cfg Config) (_ *Node, err error) {
	n := &Node{dir: cfg.Dir, User: "dev", Pass: "dev", exited: make(chan struct{}), nextCB: 1, independent: cfg.Independent,
		peer: cfg.Peer}
	if n.dir == "" {
		if n.temp, err = os.MkdirTemp("", "btcnode-"); err != nil {
			return nil, err
		}
		n.dir = n.temp
	}
	defer func() {
		if err != nil {
			n.Stop()
		}
	}()
	if n.dir, err = filepath.Abs(n.dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(n.dir, 0o700); err != nil {
		return nil, err
	}
	bin := cfg.Binary
	if bin == "" {
		if bin, err = Build(ctx, n.dir); err != nil {
			return nil, err
		}
	}
	if err := n.setWallet(cfg.Seed); err != nil {
		return nil, err
	}

	n.bin = bin
	err = freeport.Retry(3, func(pick func() int) error {
		n.p2p = pick()
		n.RPCAddr = fmt.Sprintf("127.0.0.1:%d", pick())
		return n.start(ctx)
	})
	if err != nil {
		return nil, err
	}
	if n.peer != "" {
		return n, nil
	}
	if _, err := n.Mine(ctx, SegWitActive); err != nil {
		return nil, err
	}
	return n, nil
}

// P2PAddr is the node's peer-to-peer address, for a Peer to connect to.
func (n *Node) P2PAddr() string { return fmt.Sprintf("127.0.0.1:%d", n.p2p) }

// Wallet is the address of the node's dev wallet (its mined coins').
func (n *Node) Wallet() btcutil.Address { return n.wallet }

// setWallet makes the wallet's key from seed.
func (n *Node) setWallet(seed string) (err error) {
	sum := sha256.Sum256([]byte("paymentsd dev bitcoin wallet " + seed))
	n.key, _ = btcec.PrivKeyFromBytes(sum[:])
	if n.wallet, err = btcutil.NewAddressWitnessPubKeyHash(btcutil.Hash160(n.key.PubKey().SerializeCompressed()), Params); err != nil {
		return err
	}
	n.script, err = txscript.PayToAddrScript(n.wallet)
	return err
}

// Attach is the wallet of seed on a node another process runs, at its URL
// (as URL gives it): it pays from the wallet's mature coinbases still
// unspent, as `paymentsd dev pay` does beside a running `paymentsd dev`.
// Stop leaves the node running.
func Attach(rawURL, seed string) (*Node, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.User == nil {
		return nil, fmt.Errorf("bitcoin node URL %q: want http://user:password@host:port", rawURL)
	}
	pass, _ := u.User.Password()
	n := &Node{RPCAddr: u.Host, User: u.User.Username(), Pass: pass, nextCB: 1}
	if err := n.setWallet(seed); err != nil {
		return nil, err
	}
	if n.Client, err = rpcclient.New(&rpcclient.ConnConfig{Host: n.RPCAddr, User: n.User, Pass: n.Pass,
		HTTPPostMode: true, DisableTLS: true}, nil); err != nil {
		return nil, err
	}
	if _, err := n.Client.GetBlockCount(); err != nil {
		n.Stop()
		return nil, fmt.Errorf("bitcoin node at %s: %w", u.Host, err)
	}
	return n, nil
}

// StartMining mines a block every interval until ctx ends, as a network
// does: payments sent in between confirm at the next one.
func (n *Node) StartMining(ctx context.Context, every time.Duration) {
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				_, _ = n.Mine(ctx, 1)
			}
		}
	}()
}

func (n *Node) start(ctx context.Context) error {
	log := filepath.Join(n.dir, "btcd.out")
	f, err := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	n.exited = make(chan struct{})
	args := []string{"--regtest", "--datadir=" + filepath.Join(n.dir, "data"), "--logdir=" + filepath.Join(n.dir, "logs"),
		"--listen=" + n.P2PAddr(), "--rpclisten=" + n.RPCAddr, "--rpcuser=" + n.User, "--rpcpass=" + n.Pass,
		"--notls", "--txindex", "--addrindex", "--miningaddr=" + n.wallet.EncodeAddress(), "--nodnsseed", "--nobanning",
		"--trickleinterval=100ms"} // a peer hears of new transactions at once, not within btcd's default 10 s
	if n.peer != "" {
		args = append(args, "--connect="+n.peer)
	}
	// SIGTERM when its parent dies, however (SIGKILL, a crash): btcd
	// flushes its database and frees its ports, and the next start finds
	// the chain as it was.
	n.cmd = childproc.Tie(exec.Command(n.bin, args...), syscall.SIGTERM)
	n.cmd.Stdout, n.cmd.Stderr = f, f
	if err := n.cmd.Start(); err != nil {
		f.Close()
		return err
	}
	exited := n.exited
	go func() { _ = n.cmd.Wait(); f.Close(); close(exited) }()
	if n.Client == nil {
		if n.Client, err = rpcclient.New(&rpcclient.ConnConfig{Host: n.RPCAddr, User: n.User, Pass: n.Pass,
			HTTPPostMode: true, DisableTLS: true}, nil); err != nil {
			return err
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := n.Client.GetBlockCount(); err == nil {
			return nil
		}
		select {
		case <-exited:
			out, _ := os.ReadFile(log)
			return fmt.Errorf("btcd exited: %s", strings.TrimSpace(string(out)))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return errors.New("btcd did not answer within 30s")
		}
	}
}

// URL is the node's JSON-RPC address with its credentials, as the
// engine's configuration names a node.
func (n *Node) URL() string { return "http://" + n.User + ":" + n.Pass + "@" + n.RPCAddr }

// Stop stops the node (and removes its folder if Start made it).
func (n *Node) Stop() {
	if n.Client != nil {
		n.Client.Shutdown()
	}
	n.halt()
	if n.temp != "" {
		os.RemoveAll(n.temp)
	}
}

// halt stops the btcd process, as its operator would.
func (n *Node) halt() {
	if n.cmd != nil && n.cmd.Process != nil {
		_ = n.cmd.Process.Signal(os.Interrupt)
		select {
		case <-n.exited:
		case <-time.After(10 * time.Second):
			_ = n.cmd.Process.Kill()
			<-n.exited
		}
	}
}

// Restart stops the node, waits down, and starts it again at the same
// address: what its callers see of an operator's restart. In regtest btcd
// starts on an empty chain, which a node with a Peer takes again from it;
// and it keeps no mempool across a restart, so the transactions it held
// are gone until a block mines them or someone sends them again.
func (n *Node) Restart(ctx context.Context, down time.Duration) error {
	if n.bin == "" {
		return errors.New("restart: the node was not started by this process")
	}
	n.halt()
	select {
	case <-ctx.Done():
	case <-time.After(down):
	}
	return n.start(ctx)
}

// WaitSynced waits until the node's best block is peer's.
func (n *Node) WaitSynced(ctx context.Context, peer *Node, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		want, _, err := peer.Client.GetBestBlock()
		if err != nil {
			return err
		}
		if got, _, err := n.Client.GetBestBlock(); err == nil && got.IsEqual(want) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the node did not reach its peer's best block %s in %s", want, limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Mine mines blocks, paying their coinbases to the wallet.
func (n *Node) Mine(ctx context.Context, blocks int) ([]*chainhash.Hash, error) {
	hashes, err := n.Client.Generate(uint32(blocks))
	if err != nil {
		return nil, fmt.Errorf("generate %d blocks: %w", blocks, err)
	}
	return hashes, nil
}

// Out is an output of a payment: sats to an address.
type Out struct {
	To   btcutil.Address
	Sats int64
}

// Pay sends sats to addr from the wallet, change back to it, with fee
// sats of fee, and returns the transaction's ID.
func (n *Node) Pay(ctx context.Context, addr btcutil.Address, sats, fee int64) (*chainhash.Hash, error) {
	tx, err := n.Send(ctx, []Out{{addr, sats}}, fee)
	if err != nil {
		return nil, err
	}
	h := tx.TxHash()
	return &h, nil
}

// Send sends one transaction paying outs from one coin of the wallet,
// change back to it, and returns it. The transaction signals
// replaceability (BIP125), as most wallets' do.
func (n *Node) Send(ctx context.Context, outs []Out, fee int64) (*wire.MsgTx, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	total := fee
	for _, o := range outs {
		total += o.Sats
	}
	var tx *wire.MsgTx
	for tries := 0; ; tries++ {
		c, err := n.coin(total)
		if err != nil {
			return nil, err
		}
		tx, err = n.sign(c, outs, fee)
		if err == nil {
			err = n.send(tx)
		}
		if err != nil && tries < 8 && (strings.Contains(err.Error(), "already spent") || strings.Contains(err.Error(), "replacement transaction")) {
			continue // spent by another process's payment, still in the mempool: the next coin
		}
		if err != nil {
			n.coins = append(n.coins, c)
			return nil, err
		}
		break
	}
	n.keepChange(tx, len(outs))
	return tx, nil
}

// keepChange keeps tx's change, its output after the payment's outs, for
// later payments (unless every payment is to spend a coinbase).
func (n *Node) keepChange(tx *wire.MsgTx, outs int) {
	if len(tx.TxOut) > outs && !n.independent {
		n.coins = append(n.coins, coin{out: wire.OutPoint{Hash: tx.TxHash(), Index: uint32(outs)}, value: tx.TxOut[outs].Value})
	}
}

// Replace replaces old, still unmined, by a transaction spending the same
// coin to outs with a higher fee (BIP125): a customer bumping a fee, or
// sending the money elsewhere (a double spend).
func (n *Node) Replace(ctx context.Context, old *wire.MsgTx, outs []Out, fee int64) (*wire.MsgTx, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	prev, err := n.Client.GetRawTransaction(&old.TxIn[0].PreviousOutPoint.Hash)
	if err != nil {
		return nil, err
	}
	in := old.TxIn[0].PreviousOutPoint
	c := coin{out: in, value: prev.MsgTx().TxOut[in.Index].Value}
	tx, err := n.sign(c, outs, fee)
	if err != nil {
		return nil, err
	}
	if err := n.send(tx); err != nil {
		return nil, err
	}
	oldID := old.TxHash()
	for i, k := range n.coins {
		if k.out.Hash == oldID {
			n.coins = append(n.coins[:i], n.coins[i+1:]...)
			break
		}
	}
	n.keepChange(tx, len(outs))
	return tx, nil
}

// sign builds and signs a transaction spending c to outs, the change back
// to the wallet.
func (n *Node) sign(c coin, outs []Out, fee int64) (*wire.MsgTx, error) {
	tx := wire.NewMsgTx(2)
	in := wire.NewTxIn(&c.out, nil, nil)
	in.Sequence = wire.MaxTxInSequenceNum - 2
	tx.AddTxIn(in)
	change := c.value - fee
	for _, o := range outs {
		script, err := txscript.PayToAddrScript(o.To)
		if err != nil {
			return nil, err
		}
		tx.AddTxOut(wire.NewTxOut(o.Sats, script))
		change -= o.Sats
	}
	if change < 0 {
		return nil, fmt.Errorf("the coin of %d sats does not cover the payment", c.value)
	}
	if change > 0 {
		tx.AddTxOut(wire.NewTxOut(change, n.script))
	}
	fetcher := txscript.NewCannedPrevOutputFetcher(n.script, c.value)
	witness, err := txscript.WitnessSignature(tx, txscript.NewTxSigHashes(tx, fetcher), 0, c.value, n.script, txscript.SigHashAll, n.key, true)
	if err != nil {
		return nil, err
	}
	tx.TxIn[0].Witness = witness
	return tx, nil
}

func (n *Node) send(tx *wire.MsgTx) error {
	if _, err := n.Client.SendRawTransaction(tx, false); err != nil {
		return fmt.Errorf("send: %w", err)
	}
	return nil
}

// coin takes a coin of at least value from the wallet: change left by
// earlier payments, or a mature coinbase.
func (n *Node) coin(value int64) (coin, error) {
	for i, c := range n.coins {
		if c.value >= value {
			n.coins = append(n.coins[:i], n.coins[i+1:]...)
			return c, nil
		}
	}
	height, err := n.Client.GetBlockCount()
	if err != nil {
		return coin{}, err
	}
	for ; n.nextCB+Mature <= height; n.nextCB++ {
		hash, err := n.Client.GetBlockHash(n.nextCB)
		if err != nil {
			return coin{}, err
		}
		block, err := n.Client.GetBlock(hash)
		if err != nil {
			return coin{}, err
		}
		cb := block.Transactions[0]
		if cb.TxOut[0].Value < value || !bytes.Equal(cb.TxOut[0].PkScript, n.script) {
			continue
		}
		id := cb.TxHash()
		if out, err := n.Client.GetTxOut(&id, 0, false); err != nil {
			return coin{}, err
		} else if out == nil {
			continue // spent in a block
		}
		n.nextCB++
		return coin{out: wire.OutPoint{Hash: cb.TxHash(), Index: 0}, value: cb.TxOut[0].Value}, nil
	}
	return coin{}, fmt.Errorf("no coin of %d sats is mature: mine more blocks", value)
}

// Account makes a merchant's regtest account key from seed, as a wallet
// would: its extended private key (what the merchant keeps, to sign
// sweeps) and the native SegWit key the engine is given.
func Account(seed byte) (xprv string, key btckeys.Key, err error) {
	master, err := hdkeychain.NewMaster(bytes.Repeat([]byte{seed}, 32), Params)
	if err != nil {
		return "", btckeys.Key{}, err
	}
	pub, err := master.Neuter()
	if err != nil {
		return "", btckeys.Key{}, err
	}
	key, err = btckeys.ParseKey(pub.String(), btckeys.SegWit)
	return master.String(), key, err
}
