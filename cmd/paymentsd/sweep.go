package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/internal/btcsweep"
	"github.com/paymentsd/paymentsd/internal/sweep"
)

const sweepUsage = `usage: PAYMENTSD_API_KEY=svc_… paymentsd sweep --project ID --network KEY --rpc URL --to ADDRESS --key-file FILE [flags]

Moves the funds of the project's deposit addresses (of the API key's
environment) to one address, signing on this machine with the deposit
key's extended private key, which is never sent anywhere. Without
--execute it only prints the plan. On a Bitcoin network it spends the
finalized payments' outputs in one transaction (a PSBT signed with the
Bitcoin account key's xprv, tprv, zprv or vprv), at --fee-rate or the
node's estimate, never above --max-fee-rate; outputs worth no more than
what spending them costs at that rate are left where they are (dust).

`

// runSweep is `paymentsd sweep`, run by the merchant on their own
// machine: it lists the funded deposit addresses through the API, plans
// from the chain, prints the plan, and with --execute signs and sends it.
func runSweep(ctx context.Context, args []string, stdin io.Reader, out io.Writer) error {
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() { fmt.Fprint(out, sweepUsage); fs.PrintDefaults() }
	apiURL, project, rpcURL, gasPrice := signerFlags(fs, "that network")
	network := fs.String("network", "", "the network to sweep, as the API's assets name it (devnet, base, …)")
	to := fs.String("to", "", "the address that receives everything")
	keyFile := fs.String("key-file", "", "file holding the deposit key's extended private key (xprv…, the account key m/44'/60'/0'; on Bitcoin the Bitcoin account key's, m/84'/0'/0'); - reads it from stdin")
	relayerFile := fs.String("relayer-key-file", "", "file holding the hex private key of the account that pays the gas of authorisations, permits and top-ups")
	journal := fs.String("journal", "", "the journal of signed transactions, to resume from (default sweep-PROJECT-NETWORK.journal.json here)")
	execute := fs.Bool("execute", false, "sign and send the plan (default: print it only)")
	wait := fs.Duration("wait", 5*time.Minute, "how long each round waits to be mined before stopping (run again to resume)")
	feeRate := fs.Int64("fee-rate", 0, "Bitcoin: the fee rate in sat/vB (default: the node's estimate for 6 blocks, capped at --max-fee-rate)")
	maxFeeRate := fs.Int64("max-fee-rate", btcsweep.DefaultMaxFeeRate, "Bitcoin: the ceiling of the fee rate in sat/vB: the node's estimate above it is capped to it, a --fee-rate above it refused")
	psbtFile := fs.String("psbt", "", "Bitcoin: also write the unsigned PSBT (base64) to this file, for a hardware wallet")
	if err := fs.Parse(args); err != nil {
		return err
	}
	apiKey := os.Getenv("PAYMENTSD_API_KEY")
	if err := requireAll("sweep", fs, "", map[string]string{"--project": *project, "--network": *network, "--rpc": *rpcURL, "--to": *to, "--key-file": *keyFile, "PAYMENTSD_API_KEY": apiKey}); err != nil {
		return err
	}
	if *journal == "" {
		*journal = fmt.Sprintf("sweep-%s-%s.journal.json", *project, *network)
	}
	hc := &http.Client{Timeout: 30 * time.Second}
	funded, err := btcsweep.FromAPI(ctx, hc, *apiURL, apiKey, *project, *network)
	switch {
	case err == nil:
		return sweepBitcoin(ctx, out, stdin, funded, bitcoinSweep{rpcURL: *rpcURL, to: *to, keyFile: *keyFile, feeRate: *feeRate, maxFeeRate: *maxFeeRate,
			psbtFile: *psbtFile, journal: *journal, execute: *execute, wait: *wait})
	case !errors.Is(err, btcsweep.ErrNotBitcoin):
		return fmt.Errorf("sweep: %w", err)
	}
	if !common.IsHexAddress(*to) || common.HexToAddress(*to) == (common.Address{}) {
		return fmt.Errorf("sweep: --to %q is not an address", *to)
	}
	cfg := sweep.Config{Destination: common.HexToAddress(*to), Journal: *journal, Wait: *wait}
	if err := signer(&cfg, *keyFile, *relayerFile, *gasPrice, stdin); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}

	src, err := sweep.FromAPI(ctx, hc, *apiURL, apiKey, *project, *network)
	if err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	chain, id, err := dialRPC(ctx, *rpcURL)
	if err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	defer chain.Close()
	cfg.Chain = chain
	if id.Cmp(src.ChainID) != 0 {
		return fmt.Errorf("sweep: --rpc serves chain %s, but %s is chain %s", id, *network, src.ChainID)
	}
	native := nativeAsset(src.Assets)
	if _, err := os.Stat(*journal); err == nil {
		if _, err := sweep.Resume(ctx, cfg, out); err != nil {
			return fmt.Errorf("sweep: resume from %s: %w", *journal, err)
		}
	}
	fmt.Fprintf(out, "%d funded deposit addresses listed\n", len(src.Addresses))
	plan, err := sweep.MakePlan(ctx, cfg, src.Addresses, src.Assets)
	if err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	plan.Print(out, native)
	if len(plan.Steps) == 0 {
		return nil
	}
	if !*execute {
		fmt.Fprintln(out, "Dry run: nothing was signed or sent. Run again with --execute to sweep.")
		return nil
	}
	outcomes, err := sweep.Execute(ctx, cfg, plan, out)
	failed := printMoved(out, outcomes, src.Assets, cfg.Destination)
	if err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	if failed > 0 {
		return fmt.Errorf("sweep: %d of %d steps failed (see above); run again to retry them", failed, len(outcomes))
	}
	return nil
}

// nativeAsset is the network's native coin among assets, which the plan
// names when it prints; wei when the API lists none.
func nativeAsset(assets []sweep.Asset) sweep.Asset {
	native := sweep.Asset{Symbol: "wei", Decimals: 0}
	for _, a := range assets {
		if a.Native() {
			native = a
		}
	}
	return native
}

// printMoved prints what the steps that succeeded moved to dest, per
// asset, and returns how many failed.
func printMoved(out io.Writer, outcomes []sweep.Outcome, assets []sweep.Asset, dest common.Address) (failed int) {
	moved := map[string]*big.Int{}
	for _, o := range outcomes {
		if o.Err != nil {
			failed++
			continue
		}
		if moved[o.Step.Asset.ID] == nil {
			moved[o.Step.Asset.ID] = new(big.Int)
		}
		moved[o.Step.Asset.ID].Add(moved[o.Step.Asset.ID], o.Amount)
	}
	for _, a := range assets {
		if m := moved[a.ID]; m != nil && m.Sign() > 0 {
			fmt.Fprintf(out, "Moved %s to %s\n", a.Format(m), dest)
		}
	}
	return failed
}

// signer reads into cfg what signs on the merchant's machine: the deposit
// key's xprv (keyFile), the relayer's key (relayerFile, optional) and the
// gas price in gwei (optional).
func signer(cfg *sweep.Config, keyFile, relayerFile, gasPrice string, stdin io.Reader) error {
	if err := setGasPrice(cfg, gasPrice); err != nil {
		return err
	}
	xprv, err := readSecret(keyFile, stdin)
	if err != nil {
		return fmt.Errorf("--key-file: %w", err)
	}
	if cfg.Wallet, err = sweep.ParseWallet(xprv); err != nil {
		return fmt.Errorf("--key-file: %w", err)
	}
	if relayerFile != "" {
		hexKey, err := readSecret(relayerFile, stdin)
		if err != nil {
			return fmt.Errorf("--relayer-key-file: %w", err)
		}
		if cfg.Relayer, err = crypto.HexToECDSA(strings.TrimPrefix(hexKey, "0x")); err != nil {
			return errors.New("--relayer-key-file does not hold a hex private key")
		}
	}
	return nil
}

// requireAll refuses a signing command (cmd) run without its flags and
// variables (values, by name) or its one argument (arg, when it takes
// one), naming every one missing.
func requireAll(cmd string, fs *flag.FlagSet, arg string, values map[string]string) error {
	var missing []string
	for name, v := range values {
		if v == "" {
			missing = append(missing, name)
		}
	}
	if arg != "" && fs.NArg() != 1 {
		missing = append(missing, arg)
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s: missing %s (paymentsd %s --help)", cmd, strings.Join(slices.Sorted(slices.Values(missing)), ", "), cmd)
	}
	return nil
}

// setGasPrice sets the gas price of --gas-price-gwei, when given.
func setGasPrice(cfg *sweep.Config, gasPrice string) error {
	if gasPrice == "" {
		return nil
	}
	gwei, err := decimal.NewFromString(gasPrice)
	if err != nil || !gwei.IsPositive() {
		return fmt.Errorf("--gas-price-gwei %q is not a positive number", gasPrice)
	}
	cfg.GasPrice = gwei.Shift(9).BigInt()
	return nil
}

// readSecret reads a one-line secret from path, or from stdin when path
// is "-". A file others can read is refused: it holds a key to funds.
func readSecret(path string, stdin io.Reader) (string, error) {
	var b []byte
	var err error
	if path == "-" {
		b, err = io.ReadAll(io.LimitReader(stdin, 4096))
	} else {
		info, serr := os.Stat(path)
		if serr != nil {
			return "", serr
		}
		if info.Mode().Perm()&0o077 != 0 {
			return "", fmt.Errorf("%s can be read by others (mode %v): chmod 600 it", path, info.Mode().Perm())
		}
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return "", err
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", errors.New("empty")
	}
	return s, nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// signerFlags adds the flags every command that signs on the merchant's
// machine takes: the API's URL, the project, the node of rpcOf and the gas
// price.
func signerFlags(fs *flag.FlagSet, rpcOf string) (apiURL, project, rpcURL, gasPrice *string) {
	apiURL = fs.String("api", envOr("PAYMENTSD_URL", "http://localhost:8080"), "the API's base URL (default $PAYMENTSD_URL or http://localhost:8080)")
	project = fs.String("project", "", "the project's ID (proj_…)")
	rpcURL = fs.String("rpc", "", "a JSON-RPC endpoint of "+rpcOf+" (your own node or provider)")
	gasPrice = fs.String("gas-price-gwei", "", "gas price of every transaction (default: the node's suggestion and a quarter more)")
	return apiURL, project, rpcURL, gasPrice
}

// dialRPC connects to the node at url (--rpc) and returns it with the ID
// of the chain it serves.
func dialRPC(ctx context.Context, url string) (*ethclient.Client, *big.Int, error) {
	chain, err := ethclient.DialContext(ctx, url)
	if err != nil {
		return nil, nil, fmt.Errorf("--rpc: %w", err)
	}
	id, err := chain.ChainID(ctx)
	if err != nil {
		chain.Close()
		return nil, nil, fmt.Errorf("--rpc: %w", err)
	}
	return chain, id, nil
}
