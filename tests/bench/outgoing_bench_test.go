package bench

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/activities"
	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/store/storetest"
	"github.com/paymentsd/paymentsd/workflows"
)

// BenchmarkOutgoingLookup measures what open money out adds to a scan:
// the lookup, among a scanned range's 500 recipients, of the refunds and
// payouts awaiting their signature that they pay (store.AwaitingOutgoingTo),
// with 10,000 payouts awaiting across 100 projects against none. found=0:
// none of the 500 is a payee, as in most ranges; found=20: 20 are. The
// figure is `items/none`, 1 if flat (≥ 0.90, docs/decisions.md).
func BenchmarkOutgoingLookup(b *testing.B) {
	const projects, perProject = 100, 100
	ctx := context.Background()
	none, items := storetest.NewStore(b), storetest.NewStore(b)
	if err := seedAwaitingPayouts(ctx, items, projects, perProject); err != nil {
		b.Fatal(err)
	}
	for _, found := range []int{0, 20} {
		b.Run(fmt.Sprintf("found=%d", found), func(b *testing.B) {
			lookup := func(st *store.Store, payees bool) func(int64) error {
				return func(i int64) error {
					addrs := make([]string, 500)
					for k := range addrs {
						addrs[k] = address("recipient", i*500+int64(k)) // no payee's
					}
					want := 0
					if payees {
						for k := range found {
							addrs[k*25] = payee((i*7 + int64(k)) % (projects * perProject))
						}
						want = found
					}
					refunds, payouts, err := st.MoneyOut().AwaitingOutgoingTo(ctx, "devnet", addrs)
					if err != nil {
						return err
					}
					if len(refunds)+len(payouts) != want {
						return fmt.Errorf("%d items found, want %d", len(refunds)+len(payouts), want)
					}
					return nil
				}
			}
			// The process reads its set of destinations whole once, at
			// its first lookup: a cost of its start, not of a scan.
			warm(b, lookup(items, true), lookup(none, false))
			compare(b, 1, 20, "items/none", side{"items", lookup(items, true)}, side{"none", lookup(none, false)})
		})
	}
}

// payee is the address of the seeded payout k.
func payee(k int64) string { return address("payee", k) }

// address is an address as the chain's are, spread over the whole range
// (a hash's): of a kind and an index, the same as seedAwaitingPayouts's in
// SQL.
func address(kind string, k int64) string {
	sum := md5.Sum([]byte(fmt.Sprint(kind, k)))
	tail := md5.Sum([]byte(fmt.Sprint(k, kind)))
	return "0x" + hex.EncodeToString(sum[:]) + hex.EncodeToString(tail[:4])
}

// seedAwaitingPayouts records, for each of n projects, an approved batch
// of per payouts awaiting their signature, each to its own payee.
func seedAwaitingPayouts(ctx context.Context, st *store.Store, n, per int) error {
	now := time.Now().UTC()
	for p := range n {
		pid := payment.NewID(payment.PrefixProject, now)
		if err := st.Checkout().CreateProject(ctx, payment.Project{ID: pid, Name: fmt.Sprint("Payouts ", p), CompleteOn: payment.TxFinalized,
			CreatedAt: now}, nil); err != nil {
			return err
		}
		bid := payment.NewID(payment.PrefixPayoutBatch, now)
		if _, err := st.Pool().Exec(ctx, `INSERT INTO payout_batches (id, project_id, is_live, status, from_address, created_by,
			payout_count, version, created_at, updated_at) VALUES ($1, $2, false, 'approved', $3, 'usr_bench', $4, 2, $5, $5)`,
			bid, pid, fmt.Sprintf("0x%040x", 1<<45+p), per, now); err != nil {
			return err
		}
		if _, err := st.Pool().Exec(ctx, `INSERT INTO payouts (id, batch_id, project_id, is_live, line, status, network, chain_id,
			asset_definition_id, symbol, decimals, amount_base_units, from_address, to_address, version, created_at, updated_at)
			SELECT $1 || '_' || g, $1, $2, false, g, 'awaiting_signature', 'devnet', 1337, 'usdc-devnet', 'USDC', 6, 1000000,
				$3, '0x' || md5('payee' || ($4 + g - 1)) || left(md5(($4 + g - 1) || 'payee'), 8), 2, $5, $5
			FROM generate_series(1, $6) g`, bid, pid, fmt.Sprintf("0x%040x", 1<<45+p), int64(p*per), now, per); err != nil {
			return err
		}
	}
	_, err := st.Pool().Exec(ctx, `ANALYZE payouts`)
	return err
}

// BenchmarkScanWithOutgoing scans the same 50 blocks (token and native
// payments to 50 addresses, 10 watched sessions) with 10,000 payouts
// awaiting their signature across 100 projects against none: what open
// money out costs a scan, per block. The figure is `items/none`, 1 if
// flat (≥ 0.90).
func BenchmarkScanWithOutgoing(b *testing.B) {
	ctx := context.Background()
	chain, genesis, catalog := scannedChain(b)
	scan := func(seed bool) func(int64) error {
		st := storetest.NewStore(b)
		seedWatched(b, st, 10)
		if seed {
			if err := seedAwaitingPayouts(ctx, st, 100, 100); err != nil {
				b.Fatal(err)
			}
		}
		chains, err := chainwatch.Connect(ctx, []chainwatch.Network{{Key: "devnet", ChainID: 1337, RPCURLs: []string{chain.URL}}}, catalog, nil)
		if err != nil {
			b.Fatal(err)
		}
		acts := &activities.Activities{Store: st, Chains: chains}
		in := workflows.ScanInput{Network: "devnet", Cursor: workflows.ScanCursor{Number: genesis.Number.Uint64(), Hash: genesis.Hash().Hex()}}
		return func(int64) error {
			out, err := acts.ScanNetwork(ctx, in)
			if err == nil && out.Cursor.Number == in.Cursor.Number {
				err = fmt.Errorf("the scan scanned no block")
			}
			return err
		}
	}
	items, none := scan(true), scan(false)
	warm(b, items, none)
	compare(b, 1, 5, "items/none", side{"items", items}, side{"none", none})
}

// warm makes each operation once before a comparison times them.
func warm(b *testing.B, ops ...func(int64) error) {
	b.Helper()
	for _, op := range ops {
		if err := op(0); err != nil {
			b.Fatal(err)
		}
	}
}
