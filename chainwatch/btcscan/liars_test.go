package btcscan

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/dev/btcnode"
	"github.com/paymentsd/paymentsd/dev/btcnode/btcnodetest"
	"github.com/paymentsd/paymentsd/internal/btcrpc"
	"github.com/paymentsd/paymentsd/internal/nodetrust"
	"github.com/paymentsd/paymentsd/tests/rpcproxy"
)

// A Bitcoin node that lies about a block (its transactions paying twice
// what they do under the header's merkle root, or a header mined again
// over another merkle root, which regtest's easy work allows) or about a
// mempool transaction (paying twice what it does, so that it no longer
// hashes to its ID) is caught: alone, the read that meets the lie fails
// with the check it failed (retryable) and finds nothing, and once the
// node is honest again the payment is found for what it pays; beside an
// honest node, it is set aside and the honest one's answer is found.
func TestALyingBitcoinNodeRecordsNoPayment(t *testing.T) {
	ctx := context.Background()
	n, _ := btcnodetest.Start(t)
	to := deposits(t, 1)
	watch := watching(to)
	for _, c := range []struct {
		lie   rpcproxy.Lie
		check string
	}{
		{rpcproxy.BitcoinTx, "merkle_root"},
		{rpcproxy.MerkleRoot, "merkle_root"},
		{rpcproxy.TxID, "txid"},
	} {
		for _, withHonest := range []bool{false, true} {
			liar, f := lyingNodes(t, n, withHonest)
			s := Scanner{Node: f, Params: btcnode.Params}
			head, err := n.Client.GetBlockCount()
			if err != nil {
				t.Fatal(err)
			}
			parent, err := n.Client.GetBlockHash(head)
			if err != nil {
				t.Fatal(err)
			}
			liar.SetLie(c.lie, uint64(head+1))
			tx, err := n.Send(ctx, []btcnode.Out{{To: to[0], Sats: 40_000}}, 2_000)
			if err != nil {
				t.Fatal(err)
			}
			read := func() (Found, error) {
				if c.lie == rpcproxy.TxID {
					found, _, err := s.Mempool(ctx, nil, watch)
					return found, err
				}
				_, found, err := s.Scan(ctx, head+1, head+1, *parent, watch)
				return found, err
			}
			if c.lie != rpcproxy.TxID {
				if _, err := n.Mine(ctx, 1); err != nil {
					t.Fatal(err)
				}
			}
			if !withHonest {
				for range 3 {
					if found, err := read(); nodetrust.CheckOf(err) != c.check || len(found.Outputs) != 0 {
						t.Fatalf("%s: a read over the lie = %+v, %v; want the %s check failed and nothing found", c.lie, found, err,
							c.check)
					}
				}
				liar.SetLie(rpcproxy.Honest, 0)
			}
			found, err := read()
			if withHonest && err != nil && c.lie == rpcproxy.MerkleRoot {
				// The liar named the forged block by its hash, which the
				// honest node does not have: the read is retried, as the
				// scan's activity is.
				found, err = read()
			}
			if err != nil || len(found.Outputs) != 1 || found.Outputs[0].TxID != tx.TxHash() || found.Outputs[0].Sats != 40_000 {
				t.Fatalf("%s, honest beside: %v: found %+v, %v; want the 40,000 sats of %s", c.lie, withHonest, found.Outputs, err,
					tx.TxHash())
			}
			if withHonest {
				assertSetAside(t, f, liar, c.check)
			}
			if _, err := n.Mine(ctx, 1); err != nil { // the next case's mempool starts empty
				t.Fatal(err)
			}
		}
	}
}

// A node that serves a forged block (regtest's work is easy: a header
// mined again, with the work its bits claim) is one that disagrees with
// the others when they are compared: of two nodes, neither holds a
// majority, no node is used and every read fails; with a third, honest,
// node the liar is in the minority and set aside, and reads go on.
func TestBitcoinNodesThatDisagreeAreCompared(t *testing.T) {
	ctx := context.Background()
	n, _ := btcnodetest.Start(t)
	head, err := n.Client.GetBlockCount()
	if err != nil {
		t.Fatal(err)
	}
	for _, honest := range []int{1, 2} {
		liar := startProxy(t, n)
		urls := []string{nodeURL(n, liar)}
		for range honest {
			urls = append(urls, nodeURL(n, startProxy(t, n)))
		}
		f, err := btcrpc.Dial(ctx, urls, btcnode.Params)
		if err != nil {
			t.Fatal(err)
		}
		liar.SetLie(rpcproxy.MerkleRoot, 0) // every block, the compared one too
		got, err := f.BlockCount(ctx)
		nodes := f.Nodes()
		if honest == 1 {
			if !errors.Is(err, nodetrust.ErrDisagree) || !nodes.Disagree {
				t.Fatalf("two nodes, one serving a forged block: %d, %v, %+v; want no node used", got, err, nodes)
			}
			continue
		}
		if err != nil || got != int64(head) || nodes.Disagree || len(nodes.SetAside) != 1 ||
			!strings.Contains(nodes.SetAside[0].Reason, "2 of the 3") {
			t.Fatalf("three nodes, one serving a forged block: %d, %v, %+v; want it set aside", got, err, nodes)
		}
	}
}

// lyingNodes is a failover over a liar in front of node n, and an honest
// proxy after it when asked; it compares the nodes only when asked.
func lyingNodes(t *testing.T, n *btcnode.Node, withHonest bool) (*rpcproxy.Proxy, *btcrpc.Failover) {
	liar := startProxy(t, n)
	urls := []string{nodeURL(n, liar)}
	if withHonest {
		urls = append(urls, nodeURL(n, startProxy(t, n)))
	}
	f, err := btcrpc.Dial(context.Background(), urls, btcnode.Params)
	if err != nil {
		t.Fatal(err)
	}
	f.CompareInterval = 0
	return liar, f
}

func startProxy(t *testing.T, n *btcnode.Node) *rpcproxy.Proxy {
	p, err := rpcproxy.Start(n.URL(), "", 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// nodeURL is the proxy's URL with the node's credentials, which the proxy
// passes on.
func nodeURL(n *btcnode.Node, p *rpcproxy.Proxy) string {
	return strings.Replace(p.URL, "http://", "http://"+n.User+":"+n.Pass+"@", 1)
}

// assertSetAside checks that the liar is the one node set aside, for
// check.
func assertSetAside(t *testing.T, f *btcrpc.Failover, liar *rpcproxy.Proxy, check string) {
	t.Helper()
	nodes := f.Nodes()
	if nodes.Disagree || len(nodes.SetAside) != 1 || !strings.Contains(nodes.SetAside[0].Node, strings.TrimPrefix(liar.URL, "http://")) ||
		!strings.Contains(nodes.SetAside[0].Reason, check) {
		t.Fatalf("the nodes after the lie: %+v; want %s set aside for %s", nodes, liar.URL, check)
	}
	if liar.Stats().Lies == 0 {
		t.Fatal("the liar told no lie")
	}
}
