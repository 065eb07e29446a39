package bench

import (
	"context"
	"fmt"
	"math/big"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/paymentsd/paymentsd/activities"
	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/dev/devchain"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/store/storetest"
	"github.com/paymentsd/paymentsd/workflows"
)

// countingTransport counts the HTTP requests, i.e. the RPC calls, a client
// makes.
type countingTransport struct{ n atomic.Int64 }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

// BenchmarkScanRPCCallsPerBlock scans the same 50 blocks (holding token and
// native payments) with 10, 1,000 and 10,000 watched deposit addresses and
// reports the RPC calls per scanned block: the same for all three, since
// addresses are matched locally. It reports the process's CPU time per
// scan too (the dev chain serving it included, the database not): on a
// shared machine a steadier measure of what a scan costs than its time.
func BenchmarkScanRPCCallsPerBlock(b *testing.B) {
	ctx := context.Background()
	chain, genesis, catalog := scannedChain(b)
	for _, watched := range []int{10, 1000, 10000} {
		b.Run(fmt.Sprintf("watched=%d", watched), func(b *testing.B) {
			url, drop, err := storetest.CreateDB()
			if err != nil {
				b.Fatal(err)
			}
			defer drop()
			st, err := store.Open(ctx, url)
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			seedWatched(b, st, watched)
			counter := &countingTransport{}
			chains, err := chainwatch.Connect(ctx, []chainwatch.Network{{Key: "devnet", ChainID: 1337, RPCURLs: []string{chain.URL}}}, catalog, counter)
			if err != nil {
				b.Fatal(err)
			}
			acts := &activities.Activities{Store: st, Chains: chains}
			in := workflows.ScanInput{Network: "devnet", Cursor: workflows.ScanCursor{Number: genesis.Number.Uint64(), Hash: genesis.Hash().Hex()}}
			var blocks uint64
			counter.n.Store(0)
			cpu := cpuTime()
			b.ResetTimer()
			for range b.N {
				out, err := acts.ScanNetwork(ctx, in)
				if err != nil {
					b.Fatal(err)
				}
				blocks += out.Cursor.Number - in.Cursor.Number
			}
			b.ReportMetric(float64(counter.n.Load())/float64(blocks), "rpc/block")
			b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/1000/float64(b.N), "cpu-ms/scan")
		})
	}
}

// scannedChain starts a dev chain and mines 50 blocks holding token and
// native payments to 50 addresses; it returns the chain, the block before
// them and the catalog of its assets.
func scannedChain(b *testing.B) (*devchain.Chain, *types.Header, payment.Catalog) {
	ctx := context.Background()
	chain, err := devchain.Start(ctx, devchain.Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = chain.Close() })
	for i := range 50 {
		to := common.BigToAddress(big.NewInt(int64(1000 + i)))
		var h common.Hash
		if i%2 == 0 {
			h, err = chain.TransferToken(ctx, chain.Accounts[0], to, big.NewInt(1_000_000))
		} else {
			h, err = chain.TransferNative(ctx, chain.Accounts[1], to, big.NewInt(1e15))
		}
		if err != nil {
			b.Fatal(err)
		}
		if _, err := chain.Mine(ctx, h); err != nil {
			b.Fatal(err)
		}
	}
	head, _ := chain.Client().BlockNumber(ctx)
	genesis, _ := chain.Client().HeaderByNumber(ctx, big.NewInt(int64(head-50)))
	catalog := payment.Catalog{Assets: []payment.Asset{
		{ID: "usdc-devnet", Symbol: "USDC", Decimals: 6, Network: "devnet", ChainID: 1337, TokenAddress: chain.Token.Hex(), Price: payment.PriceSource{Kind: payment.PriceUSDPegged}},
		{ID: "eth-devnet", Symbol: "ETH", Decimals: 18, Network: "devnet", ChainID: 1337, Price: payment.PriceSource{Kind: payment.PriceChainlink, Aggregator: chain.PriceFeed.Hex()}},
	}}
	return chain, genesis, catalog
}

// seedWatched records n open sessions, each with its own deposit address.
func seedWatched(b *testing.B, st *store.Store, n int) {
	ctx := context.Background()
	e := service.New(service.Deps{Store: st, Catalog: payment.Catalog{Assets: catalog.Assets}})
	p, err := e.Checkout().CreateProject(ctx, "Scan bench")
	if err != nil {
		b.Fatal(err)
	}
	title, amount := "x", "10"
	plan, err := e.Checkout().CreatePlan(ctx, payment.Principal{ProjectID: p.Project.ID}, p.Project.ID, payment.PlanInput{Title: &title, AmountUSD: &amount})
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	_, err = st.Pool().Exec(ctx, `INSERT INTO checkout_sessions (id, token_hash, project_id, payment_plan_id, is_live, status,
		amount_usd, deposit_address, quote_expires_at, expires_at, created_at, updated_at, late_until)
		SELECT 'cs_bench' || i, 'h' || i, $1, $2, false, 'open', 10, '0x' || lpad(to_hex(i + 1000), 40, '0'), $3, $3, $4, $4, $3
		FROM generate_series(1, $5) AS i`, p.Project.ID, plan.ID, now.Add(time.Hour), now, n)
	if err != nil {
		b.Fatal(err)
	}
}
