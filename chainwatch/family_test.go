package chainwatch_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"

	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/internal/btcrpc"
	"github.com/paymentsd/paymentsd/payment"
)

// Each family says what its networks do, which addresses are theirs and
// which assets, and refuses what they do not do with ErrNotSupported: the
// engine asks that, never which family a network is of.
func TestEachFamilySaysWhatItsNetworksDo(t *testing.T) {
	evm := &chainwatch.Chain{Network: chainwatch.Network{Key: "devnet", ChainID: 1337}}
	btc := &chainwatch.Chain{Network: chainwatch.Network{Key: "bitcoin-regtest", Kind: chainwatch.KindBitcoin, Chain: "regtest"},
		Bitcoin: &btcrpc.Failover{}, Params: &chaincfg.RegressionNetParams}
	chains := chainwatch.Chains{"devnet": evm, "bitcoin-regtest": btc}

	if f := evm.Family(); f.Kind() != chainwatch.KindEVM ||
		f.Capabilities() != (chainwatch.Capabilities{Rescan: true, Contracts: true, DepositKey: true, MoneyOut: true, PriceFeeds: true}) {
		t.Fatalf("EVM family: %s, %+v", f.Kind(), f.Capabilities())
	}
	if f := btc.Family(); f.Kind() != chainwatch.KindBitcoin ||
		f.Capabilities() != (chainwatch.Capabilities{AccountKey: true, MoneyOut: true}) {
		t.Fatalf("Bitcoin family: %s, %+v", f.Kind(), f.Capabilities())
	}

	evmAddr, regtestAddr := "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080"
	mainnetAddr := "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"
	for _, c := range []struct {
		chain *chainwatch.Chain
		addr  string
		want  bool
	}{{evm, evmAddr, true}, {evm, regtestAddr, false}, {btc, regtestAddr, true}, {btc, mainnetAddr, false}, {btc, evmAddr, false}} {
		if got := c.chain.Family().ValidAddress(c.addr); got != c.want {
			t.Errorf("%s: ValidAddress(%s) = %v, want %v", c.chain.Network.Key, c.addr, got, c.want)
		}
	}

	feed := payment.PriceSource{Kind: payment.PriceChainlink, Network: "devnet"}
	bitcoin := payment.Asset{ID: "btc-regtest", Decimals: 8, Network: "bitcoin-regtest", Price: feed}
	if err := btc.Family().CheckAsset(bitcoin, chains); err != nil {
		t.Fatalf("bitcoin priced on an EVM network refused: %v", err)
	}
	for _, bad := range []payment.Asset{
		{ID: "token", Decimals: 8, TokenAddress: evmAddr, Price: feed},
		{ID: "six", Decimals: 6, Price: feed},
		{ID: "pegged", Decimals: 8, Price: payment.PriceSource{Kind: payment.PriceUSDPegged}},
		{ID: "fed-by-bitcoin", Decimals: 8, Price: payment.PriceSource{Kind: payment.PriceChainlink, Network: "bitcoin-regtest"}},
	} {
		if err := btc.Family().CheckAsset(bad, chains); err == nil || !strings.Contains(err.Error(), bad.ID) {
			t.Errorf("asset %s on a Bitcoin network: %v, want it refused", bad.ID, err)
		}
	}

	seed := make([]byte, 32)
	master, err := hdkeychain.NewMaster(seed, &chaincfg.TestNet3Params)
	if err != nil {
		t.Fatal(err)
	}
	account := master
	for _, i := range []uint32{84, 1, 0} {
		if account, err = account.Derive(hdkeychain.HardenedKeyStart + i); err != nil {
			t.Fatal(err)
		}
	}
	xpub, err := account.Neuter()
	if err != nil {
		t.Fatal(err)
	}
	first, err := btc.Family().DeriveAddress(xpub.String(), "", 0)
	if err != nil || !strings.HasPrefix(first, "bcrt1q") || !btc.Family().ValidAddress(first) {
		t.Fatalf("first address of the account key = %q, %v; want a regtest address", first, err)
	}
	if second, _ := btc.Family().DeriveAddress(xpub.String(), "", 1); second == first || second == "" {
		t.Fatalf("the key's second address %q repeats its first", second)
	}
	if _, err := evm.Family().DeriveAddress(xpub.String(), "", 0); !errors.Is(err, chainwatch.ErrNotSupported) {
		t.Fatalf("an EVM network derived an account key's address: %v", err)
	}
	for _, c := range []struct {
		chain *chainwatch.Chain
		addr  string
		ok    bool
	}{{evm, evmAddr, true}, {evm, regtestAddr, false}, {btc, regtestAddr, true}, {btc, mainnetAddr, false}, {btc, evmAddr, false}} {
		if problem := c.chain.Family().PayeeProblem(c.addr); (problem == "") != c.ok {
			t.Errorf("%s: paying %s: %q", c.chain.Network.Key, c.addr, problem)
		}
	}
	if contract, err := btc.Family().IsContract(context.Background(), regtestAddr); contract || err != nil {
		t.Fatalf("a Bitcoin address taken for a contract: %v, %v", contract, err)
	}
}
