package chainwatch

import (
	"context"
	"fmt"
	"math/big"
	"slices"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/paymentsd/paymentsd/internal/evmrpc"
)

// Chainwatch reads the blocks of every network in its own published
// format (OP-stack deposits, Arbitrum's system transactions, blob and
// set-code transactions, Polygon's state-sync transactions), with every
// block's hash recomputed from its header and every answer checked,
// finds every payment to a watched address and skips the rest; the
// transaction check confirms each found payment from its receipt. Only the Ethereum fixture
// has call traces: its Safe payment is found with them and not without.
func TestScannerReadsEveryNetworksBlocks(t *testing.T) {
	ctx := context.Background()
	for _, name := range stubNetworks {
		t.Run(name, func(t *testing.T) {
			fx, client := dialStubNode(t, name)
			_, watch := watchOnly(fx.Watched)
			key := func(h common.Hash, logIndex int, to, token common.Address, amount *big.Int) string {
				return fmt.Sprintf("%s/%d %s %s %s", h.Hex(), logIndex, to.Hex(), token.Hex(), amount)
			}
			traces := name == "ethereum"
			want := map[string]bool{}
			internal := 0
			for _, e := range fx.Expect {
				li := e.LogIndex
				if e.Internal {
					li, internal = InternalIndex(1), internal+1
				}
				want[key(e.TxHash, li, e.To, e.Token, e.Amount)] = true
			}
			first, last := fx.blocks[0].number, fx.blocks[len(fx.blocks)-1].number
			for _, withTraces := range []bool{traces, false} {
				s := Scanner{Client: client, Tokens: fx.Tokens, Native: true, Traces: withTraces, Recompute: true}
				blocks, transfers, err := s.Scan(ctx, first, last, fx.blocks[0].parent, watch)
				if err != nil {
					t.Fatalf("scan (traces %v): %v", withTraces, err)
				}
				if len(blocks) != len(fx.blocks) || blocks[len(blocks)-1].Hash != fx.blocks[len(fx.blocks)-1].hash {
					t.Fatalf("blocks %+v", blocks)
				}
				found := map[string]bool{}
				for _, tr := range transfers {
					k := key(tr.TxHash, tr.LogIndex, tr.To, tr.Token, tr.Amount)
					found[k] = true
					st, err := s.CheckTransaction(ctx, tr.TxHash, false)
					if err != nil || !st.Mined {
						t.Fatalf("check %s: %+v %v", k, st, err)
					}
					if !want[k] && st.Succeeded {
						t.Errorf("found %s, which the fixture does not expect", k)
					}
					if want[k] && !st.Succeeded {
						t.Errorf("%s: receipt not successful", k)
					}
				}
				missing := 0
				for k := range want {
					if !found[k] {
						missing++
						if withTraces == traces {
							t.Errorf("not found: %s", k)
						}
					}
				}
				if withTraces != traces && missing != internal {
					t.Errorf("without traces, %d expected transfers missing; want the %d internal ones", missing, internal)
				}
				if traces == withTraces {
					for _, e := range fx.Expect {
						st, err := Scanner{Client: client, Traces: traces, Recompute: true}.CheckTransaction(ctx, e.TxHash, false)
						if err != nil || !st.Succeeded {
							t.Fatalf("check %s: %+v %v", e.TxHash, st, err)
						}
						li := e.LogIndex
						if e.Internal {
							li = InternalIndex(1)
						}
						ok := false
						for _, tr := range st.Transfers {
							ok = ok || tr.LogIndex == li && tr.To == e.To && tr.Amount.Cmp(e.Amount) == 0
						}
						if !ok {
							t.Errorf("the receipt check of %s does not show the transfer to %s: %+v", e.TxHash, e.To, st.Transfers)
						}
					}
				}
				if traces != withTraces || !traces {
					break
				}
			}
		})
	}
}

// A network without a native asset accepted is read by headers and logs
// only: no native transfer is reported, and no block is traced.
func TestScannerWithoutNativeReadsHeadersAndLogs(t *testing.T) {
	ctx := context.Background()
	fx, client := dialStubNode(t, "ethereum")
	watch := func(_ context.Context, recipients []common.Address) (map[common.Address]bool, error) {
		out := map[common.Address]bool{}
		for _, r := range recipients {
			out[r] = true
		}
		return out, nil
	}
	tokens := 0
	for _, e := range fx.Expect {
		if e.Token != (common.Address{}) {
			tokens++
		}
	}
	fx.Calls.Reset()
	s := Scanner{Client: client, Tokens: fx.Tokens, Traces: true, Recompute: true}
	_, transfers, err := s.Scan(ctx, fx.blocks[0].number, fx.blocks[len(fx.blocks)-1].number, fx.blocks[0].parent, watch)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range transfers {
		if tr.Token == (common.Address{}) {
			t.Errorf("a native transfer reported: %+v", tr)
		}
	}
	if len(transfers) < tokens || fx.Calls.Of("debug_traceBlockByNumber") != 0 {
		t.Fatalf("%d token transfers (want at least %d), %d traces", len(transfers), tokens, fx.Calls.Of("debug_traceBlockByNumber"))
	}
}

// A look at a transaction still in the block whose transfers were read
// there does not read them again: no trace, no transaction read, and the
// rest of the look (mined, block, confirmations) as a full one gives it. In
// another block (a reorg moved it), the transfers are read again.
func TestRecheckInTheSameBlockReadsNoTransfers(t *testing.T) {
	ctx := context.Background()
	fx, client := dialStubNode(t, "ethereum")
	var hash common.Hash
	for _, e := range fx.Expect {
		if e.Internal {
			hash = e.TxHash
		}
	}
	if hash == (common.Hash{}) {
		t.Fatal("the ethereum fixture has no internal transfer")
	}
	s := Scanner{Client: client, Traces: true, Recompute: true}
	full, err := s.CheckTransaction(ctx, hash, false)
	if err != nil || !full.Mined || full.SameBlock || len(full.Transfers) == 0 {
		t.Fatalf("first look: %+v %v", full, err)
	}
	fx.Calls.Reset()
	again, err := s.RecheckTransaction(ctx, hash, false, full.BlockHash)
	if err != nil {
		t.Fatal(err)
	}
	if !again.SameBlock || len(again.Transfers) != 0 || again.BlockHash != full.BlockHash ||
		again.Confirmations != full.Confirmations || !again.Succeeded {
		t.Fatalf("look in the same block: %+v, want the first look's state without transfers", again)
	}
	if n := fx.Calls.Of("debug_traceTransaction") + fx.Calls.Of("eth_getTransactionByHash"); n != 0 || fx.Calls.Total() != 3 {
		t.Fatalf("a look in the same block made %d calls, %d of them trace or transaction calls; want 3 "+
			"(the receipt, the head, the block's header)", fx.Calls.Total(), n)
	}
	fx.Calls.Reset()
	moved, err := s.RecheckTransaction(ctx, hash, false, common.HexToHash("0x01"))
	if err != nil || moved.SameBlock || len(moved.Transfers) != len(full.Transfers) || fx.Calls.Of("debug_traceTransaction") != 1 ||
		fx.Calls.Total() != 5 {
		t.Fatalf("look after a reorg: %+v %v, %d calls, %d traces", moved, err, fx.Calls.Total(), fx.Calls.Of("debug_traceTransaction"))
	}
}

// dialStubNode starts a network's stub node and a client of it, closed
// when the test ends.
func dialStubNode(t *testing.T, name string) (*stubFixture, evmrpc.Client) {
	url, fx := startStubNode(t, name)
	client, err := evmrpc.Dial(context.Background(), int64(fx.ChainID), []string{url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	return fx, client
}

// What a scan finds of a transaction is what a look at it finds among the
// watched recipients, internal transfers included: a session's first look
// takes the scan's transfers instead of reading them again. A block whose
// trace fails marks its transfers Untraced, so that a look reads those.
func TestAScanFindsWhatALookFindsOrSaysItCouldNotTrace(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		network  string
		untraced bool // the fixture's node serves no traces
	}{{"ethereum", false}, {"base", true}} {
		t.Run(c.network, func(t *testing.T) {
			fx, client := dialStubNode(t, c.network)
			watched, watch := watchOnly(fx.Watched)
			s := Scanner{Client: client, Tokens: fx.Tokens, Native: true, Traces: true, Recompute: true}
			_, found, err := s.Scan(ctx, fx.blocks[0].number, fx.blocks[len(fx.blocks)-1].number, fx.blocks[0].parent, watch)
			if err != nil || len(found) == 0 {
				t.Fatalf("scan: %d transfers, %v", len(found), err)
			}
			key := func(tr Transfer) string {
				return fmt.Sprintf("%d %s %s %s", tr.LogIndex, tr.To.Hex(), tr.Token.Hex(), tr.Amount)
			}
			scanned := map[common.Hash][]string{}
			for _, tr := range found {
				if tr.Untraced != c.untraced {
					t.Fatalf("%s/%d: untraced %v, want %v", tr.TxHash, tr.LogIndex, tr.Untraced, c.untraced)
				}
				scanned[tr.TxHash] = append(scanned[tr.TxHash], key(tr))
			}
			if c.untraced {
				return
			}
			for hash, got := range scanned {
				st, err := s.CheckTransaction(ctx, hash, false)
				if err != nil {
					t.Fatal(err)
				}
				if !st.Succeeded {
					continue // a reverted transaction's transfers count for nothing, whoever read them
				}
				var looked []string
				for _, tr := range st.Transfers {
					if watched[tr.To] && (tr.Token == common.Address{} || slices.Contains(fx.Tokens, tr.Token)) {
						looked = append(looked, key(tr))
					}
				}
				slices.Sort(got)
				slices.Sort(looked)
				if !slices.Equal(got, looked) {
					t.Errorf("%s: the scan found %v, a look %v", hash, got, looked)
				}
			}
		})
	}
}

// watchOnly is a watchlist of the given addresses, with their set.
func watchOnly(addresses []common.Address) (map[common.Address]bool, Watchlist) {
	watched := map[common.Address]bool{}
	for _, a := range addresses {
		watched[a] = true
	}
	return watched, func(_ context.Context, recipients []common.Address) (map[common.Address]bool, error) {
		out := map[common.Address]bool{}
		for _, r := range recipients {
			out[r] = watched[r]
		}
		return out, nil
	}
}
