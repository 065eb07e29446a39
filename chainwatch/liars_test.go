package chainwatch_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/dev/devchain"
	"github.com/paymentsd/paymentsd/internal/evmrpc"
	"github.com/paymentsd/paymentsd/internal/nodetrust"
	"github.com/paymentsd/paymentsd/internal/observability"
	"github.com/paymentsd/paymentsd/internal/redact"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/tests/rpcproxy"
)

// A node that lies about an EVM chain, each way and behind a proxy in
// front of the dev chain, is caught by the check its lie fails: alone, the
// scan that reads the lie fails with it (retryable) and reports nothing,
// and once the node tells the truth again the payment is found in its
// real block; beside an honest node, it is set aside (named in the
// metrics and in the network's nodes) and the same scan finds the payment
// through the honest one at once, without asking the liar again.
func TestALyingNodeRecordsNoPayment(t *testing.T) {
	for _, c := range []struct {
		lie        rpcproxy.Lie
		headerHash string
		check      string
		// before is how many blocks come between the last one scanned
		// and the payment's: with one, a log moved to the block before
		// its own is in the range scanned, by a transaction that block
		// does not hold; with none, it is out of the range.
		before int
	}{
		{rpcproxy.BlockHash, chainwatch.HeaderHashRecompute, "block_hash", 0},
		{rpcproxy.ParentLink, chainwatch.HeaderHashRecompute, "parent_link", 0},
		{rpcproxy.ParentLink, chainwatch.HeaderHashNode, "parent_link", 0},
		{rpcproxy.LogBlock, chainwatch.HeaderHashRecompute, "log_block", 0},
		{rpcproxy.LogBlock, chainwatch.HeaderHashNode, "log_block", 1},
	} {
		t.Run(fmt.Sprintf("%s/%s/%d", c.lie, c.headerHash, c.before), func(t *testing.T) {
			for _, withHonest := range []bool{false, true} {
				n := lyingNetwork(t, c.headerHash, withHonest)
				w := n.watcher(t)
				w.pollToHead()
				kept := slices.Clone(w.blocks.blocks)
				n.liar.SetLie(c.lie, w.cursor.Number+1+uint64(c.before))
				w.commit(c.before)
				txs, r := w.pay()
				w.commit(2)
				if !withHonest {
					for range 3 { // a retry meets the same lie, and records nothing either
						out, err := w.poller.Poll(context.Background(), w.cursor, w.watch)
						if nodetrust.CheckOf(err) != c.check || len(out.Transfers) != 0 || out.Cursor != w.cursor {
							t.Fatalf("a poll over the lie = %+v, %v; want the %s check failed and nothing found", out, err, c.check)
						}
					}
					if !slices.Equal(w.blocks.blocks, kept) {
						t.Fatal("a poll over the lie kept its blocks")
					}
					n.liar.SetLie(rpcproxy.Honest, 0)
				}
				got := reported(w.pollToHead())
				if len(got) != 2 || len(got[txs[0]]) != 1 || got[txs[0]][0] != r.BlockHash || len(got[txs[1]]) != 1 ||
					got[txs[1]][0] != r.BlockHash {
					t.Fatalf("reported %v, want %v once each in their block %s", got, txs, r.BlockHash)
				}
				if !withHonest {
					continue
				}
				n.assertSetAside(t, c.check)
				if n.liar.Stats().Lies == 0 {
					t.Fatal("the liar told no lie")
				}
				w.commit(3)
				asked := n.liar.Stats().Requests
				w.pollToHead()
				if again := n.liar.Stats().Requests - asked; again != 0 {
					t.Fatalf("the node set aside was asked %d more times", again)
				}
			}
		})
	}
}

// A node whose receipt of a payment says another block than its own is
// caught: alone, the look at the payment fails (retryable) and says
// nothing of where it is; beside an honest node, it is set aside and the
// look finds the payment in its real block.
func TestALyingReceiptIsCaught(t *testing.T) {
	for _, withHonest := range []bool{false, true} {
		n := lyingNetwork(t, chainwatch.HeaderHashRecompute, withHonest)
		w := n.watcher(t)
		w.pollToHead()
		n.liar.SetLie(rpcproxy.ReceiptBlock, w.cursor.Number+1)
		txs, r := w.pay()
		s := n.chain.Scanner()
		st, err := s.CheckTransaction(context.Background(), txs[0], false)
		if !withHonest {
			if nodetrust.CheckOf(err) != "receipt_block" || st.Mined || len(st.Transfers) != 0 {
				t.Fatalf("a look at a moved receipt = %+v, %v; want the receipt_block check failed", st, err)
			}
			continue
		}
		if err != nil || !st.Mined || st.BlockHash != r.BlockHash || st.BlockNumber != r.BlockNumber.Uint64() || len(st.Transfers) != 1 {
			t.Fatalf("a look with an honest node beside = %+v, %v; want mined in %s", st, err, r.BlockHash)
		}
		n.assertSetAside(t, "receipt_block")
	}
}

// Two nodes that disagree on the chain (two dev chains of one chain ID:
// each holds together, neither lies by itself) leave no majority: no
// node is used, every read fails and the network says so, and nothing
// is recorded. A third node siding with one of them makes a majority:
// the other is set aside and the scan goes on.
func TestNodesThatDisagreeWithoutAMajorityAreNotUsed(t *testing.T) {
	ctx := context.Background()
	a, b := startChain(t), startChain(t)
	for _, c := range []*devchain.Chain{a, b} {
		for range 8 {
			c.Commit()
		}
	}
	two := connect(t, chainwatch.HeaderHashRecompute, a.Token, a.URL, b.URL)
	if _, err := two.Family().Head(ctx); !errors.Is(err, nodetrust.ErrDisagree) {
		t.Fatalf("the head from two nodes that disagree: %v; want ErrDisagree", err)
	}
	if nodes := two.Family().Nodes(); !nodes.Disagree || nodes.Nodes != 2 {
		t.Fatalf("the nodes of two that disagree: %+v", nodes)
	}
	if testutil.ToFloat64(observability.NodesDisagree.WithLabelValues("devnet")) != 1 {
		t.Error("the metric does not say the nodes disagree")
	}
	p := &chainwatch.Poller{Scanner: two.Scanner(), Blocks: &memBlocks{}, HeadWait: time.Millisecond, PollInterval: time.Millisecond}
	if out, err := p.Poll(ctx, chainwatch.Cursor{}, func(context.Context, []common.Address) (map[common.Address]bool, error) {
		return nil, nil
	}); !errors.Is(err, nodetrust.ErrDisagree) || out.Cursor != (chainwatch.Cursor{}) {
		t.Fatalf("a poll while the nodes disagree = %+v, %v", out, err)
	}

	three := connect(t, chainwatch.HeaderHashRecompute, a.Token, a.URL, b.URL, a.URL)
	head, err := three.Family().Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := a.Client().BlockNumber(ctx)
	nodes := three.Family().Nodes()
	if head != want || nodes.Disagree || len(nodes.SetAside) != 1 || nodes.SetAside[0].Node != redact.URL(b.URL) ||
		!strings.Contains(nodes.SetAside[0].Reason, "2 of the 3") {
		t.Fatalf("three nodes, one disagreeing: head %d (want %d), nodes %+v", head, want, nodes)
	}
	if testutil.ToFloat64(observability.NodesDisagree.WithLabelValues("devnet")) != 0 {
		t.Error("the metric still says the nodes disagree")
	}
}

// lying is a network of the dev chain read through a liar, and an honest
// node after it when asked.
type lying struct {
	chain *chainwatch.Chain
	dev   *devchain.Chain
	liar  *rpcproxy.Proxy
}

func lyingNetwork(t *testing.T, headerHash string, withHonest bool) *lying {
	dev := startChain(t)
	liar := startProxy(t, dev.URL)
	urls := []string{liar.URL}
	if withHonest {
		urls = append(urls, startProxy(t, dev.URL).URL)
	}
	return &lying{chain: connect(t, headerHash, dev.Token, urls...), dev: dev, liar: liar}
}

func startProxy(t *testing.T, upstream string) *rpcproxy.Proxy {
	p, err := rpcproxy.Start(upstream, "", 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// connect dials the devnet network over urls, with the dev chain's token
// and coin.
func connect(t *testing.T, headerHash string, token common.Address, urls ...string) *chainwatch.Chain {
	t.Helper()
	catalog := payment.Catalog{Assets: []payment.Asset{
		{ID: "usdc-devnet", Symbol: "USDC", Decimals: 6, Network: "devnet", ChainID: 1337, TokenAddress: token.Hex()},
		{ID: "eth-devnet", Symbol: "ETH", Decimals: 18, Network: "devnet", ChainID: 1337},
	}}
	chains, err := chainwatch.Connect(context.Background(), []chainwatch.Network{{Key: "devnet", ChainID: 1337, RPCURLs: urls,
		HeaderHash: headerHash}}, catalog, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := chains["devnet"]
	f := c.Client.(*evmrpc.Failover)
	t.Cleanup(f.Close)
	return c
}

// watcher is a watcher over the network's chain, polling through its
// failover.
func (n *lying) watcher(t *testing.T) *watcher {
	w := &watcher{t: t, chain: n.dev, blocks: &memBlocks{}, deposit: common.HexToAddress("0x00000000000000000000000000000000DeadBeef")}
	w.poller = &chainwatch.Poller{Scanner: n.chain.Scanner(), Blocks: w.blocks, MaxRange: 4, FreshDepth: 8, Keep: 16,
		HeadWait: 20 * time.Millisecond, PollInterval: 5 * time.Millisecond}
	return w
}

// assertSetAside checks that the liar is the one node set aside, for
// check, in the network's nodes and the metrics.
func (n *lying) assertSetAside(t *testing.T, check string) {
	t.Helper()
	name := redact.URL(n.liar.URL)
	nodes := n.chain.Family().Nodes()
	if nodes.Disagree || len(nodes.SetAside) != 1 || nodes.SetAside[0].Node != name || !strings.Contains(nodes.SetAside[0].Reason, check) {
		t.Fatalf("the nodes after the lie: %+v; want %s set aside for %s", nodes, name, check)
	}
	if got := testutil.ToFloat64(observability.AnswersRejected.WithLabelValues("devnet", name, check)); got < 1 {
		t.Fatalf("paymentsd_rpc_answers_rejected_total{check=%q} = %v", check, got)
	}
	if testutil.ToFloat64(observability.NodeSetAside.WithLabelValues("devnet", name)) != 1 {
		t.Fatal("the metric does not say the liar is set aside")
	}
}
