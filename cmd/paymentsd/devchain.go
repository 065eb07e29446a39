package main

import (
	"context"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/paymentsd/paymentsd/dev/devchain"
)

// runDevchain runs a development EVM chain (`paymentsd devchain`) until ctx
// is done: JSON-RPC over HTTP, a dev USDC and an ETH/USD price feed, and
// funded accounts whose keys it prints so wallets and scripts can pay with
// them. It needs no database and no Temporal, so it is in every build.
func runDevchain(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("devchain", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8545", "HTTP JSON-RPC listen address")
	interval := fs.Duration("block-interval", 2*time.Second, "mine a block this often (0: never, the chain then stands still)")
	accounts := fs.Int("accounts", 5, "number of funded dev accounts")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("devchain: unexpected arguments %q", fs.Args())
	}
	if *accounts < 1 {
		return fmt.Errorf("devchain: --accounts must be at least 1, got %d", *accounts)
	}
	c, err := devchain.Start(ctx, devchain.Config{Addr: *addr, BlockInterval: *interval, Accounts: *accounts})
	if err != nil {
		return err
	}
	defer c.Close()
	printDevchain(os.Stdout, c)
	<-ctx.Done()
	return c.Close()
}

// printDevchain prints what a wallet or a dev config needs to use the chain.
// The keys are dev-only: they are derived from fixed labels and public.
func printDevchain(w io.Writer, c *devchain.Chain) {
	fmt.Fprintf(w, "dev chain running\n  rpc url:    %s\n  chain id:   %s\n  usdc:       %s (%d decimals)\n  price feed: %s (ETH / USD, %d decimals)\n",
		c.URL, c.ChainID, c.Token, devchain.USDCDecimals, c.PriceFeed, devchain.PriceFeedDecimals)
	fmt.Fprintf(w, "accounts (%d ETH and %d USDC each; dev keys, never use them on a real network):\n",
		devchain.AccountETH, devchain.AccountUSDC)
	for i, a := range c.Accounts {
		fmt.Fprintf(w, "  (%d) %s  key 0x%s\n", i, a.Address, hex.EncodeToString(crypto.FromECDSA(a.Key)))
	}
}
