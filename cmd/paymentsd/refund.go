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
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/paymentsd/paymentsd/internal/sweep"
)

const refundUsage = `usage: PAYMENTSD_API_KEY=svc_… paymentsd refund send --project ID --rpc URL --key-file FILE [flags] REFUND_ID

Signs and sends a refund's prepared transfer from the deposit address that
received the payment, on this machine with the deposit key's extended
private key, which is never sent anywhere; then reports its hash, and the
engine follows it to finalized. Without --execute it only prints the plan
and its digest; --execute --plan DIGEST signs only while the refund, fetched
again, still makes that plan (refused, nothing signed, when its address,
amount or asset changed since). A run stopped halfway is run again with the same journal: a transfer made
once is reported, never made twice.

`

// runRefund is `paymentsd refund send`, run by the merchant on their own
// machine.
func runRefund(ctx context.Context, args []string, stdin io.Reader, out io.Writer) error {
	if len(args) == 0 || args[0] != "send" {
		fmt.Fprint(out, refundUsage)
		return errors.New("refund: want `refund send`")
	}
	fs := flag.NewFlagSet("refund send", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() { fmt.Fprint(out, refundUsage); fs.PrintDefaults() }
	apiURL, project, rpcURL, gasPrice := signerFlags(fs, "the refund's network")
	keyFile := fs.String("key-file", "", "file holding the deposit key's extended private key (xprv…, the account key m/44'/60'/0'); - reads it from stdin")
	relayerFile := fs.String("relayer-key-file", "", "file holding the hex private key of the account that pays the gas of authorisations, permits and top-ups")
	journal := fs.String("journal", "", "the journal of signed transactions, to resume from (default refund-ID.journal.json here)")
	execute := fs.Bool("execute", false, "sign and send the transfer (default: print the plan only)")
	planFlag := fs.String("plan", "", "with --execute: the digest the dry run printed; the refund must still make that plan")
	wait := fs.Duration("wait", 5*time.Minute, "how long to wait for each transaction to be mined before stopping (run again to resume)")
	feeRate := bitcoinFeeRateFlag(fs)
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	apiKey := os.Getenv("PAYMENTSD_API_KEY")
	if err := requireAll("refund send", fs, "REFUND_ID", map[string]string{"--project": *project, "--rpc": *rpcURL, "--key-file": *keyFile, "PAYMENTSD_API_KEY": apiKey}); err != nil {
		return err
	}
	id := fs.Arg(0)
	if *journal == "" {
		*journal = fmt.Sprintf("refund-%s.journal.json", id)
	}
	hc := &http.Client{Timeout: 30 * time.Second}
	r, err := sweep.RefundFromAPI(ctx, hc, *apiURL, apiKey, *project, id)
	if err != nil {
		return fmt.Errorf("refund send: %w", err)
	}
	switch r.Status {
	case "awaiting_signature":
	case "awaiting_address":
		return fmt.Errorf("refund send: %s has no address yet: the customer gives it through the claim link, or you do (POST …/refunds/%s/address)", id, id)
	case "awaiting_approval":
		return fmt.Errorf("refund send: %s is to an address the merchant gave (%s): an owner approves it in the dashboard before it is signed", id, r.ToAddress)
	case "sent", "confirmed", "finalized":
		fmt.Fprintf(out, "Refund %s is %s (transaction %s): nothing to send.\n", id, r.Status, r.TxHash)
		return nil
	default:
		return fmt.Errorf("refund send: %s is %s: nothing can be sent for it", id, r.Status)
	}
	if done, err := refundBitcoin(ctx, out, stdin, hc, r, bitcoinSend{apiURL: *apiURL, apiKey: apiKey, project: *project, network: r.Network,
		rpcURL: *rpcURL, keyFile: *keyFile, journal: *journal, feeRate: *feeRate, execute: *execute, what: "refund " + id, plan: *planFlag}); done {
		return err
	}
	digest := refundPlanDigest(r)
	if err := checkPlan("refund "+id, *execute, *planFlag, digest); err != nil {
		return fmt.Errorf("refund send: %w", err)
	}
	cfg := sweep.Config{Destination: common.HexToAddress(r.ToAddress), Journal: *journal, Wait: *wait}
	if err := signer(&cfg, *keyFile, *relayerFile, *gasPrice, stdin); err != nil {
		return fmt.Errorf("refund send: %w", err)
	}
	src, err := sweep.FromAPI(ctx, hc, *apiURL, apiKey, *project, r.Network)
	if err != nil {
		return fmt.Errorf("refund send: %w", err)
	}
	from := common.HexToAddress(r.FromAddress)
	i := slices.IndexFunc(src.Addresses, func(a sweep.Address) bool { return a.Address == from })
	if i < 0 {
		return fmt.Errorf("refund send: the refund's funds are at %s, which is not a funded deposit address of this key's environment "+
			"(a shared recipient's refund is signed by the wallet that holds it, in the dashboard)", from)
	}
	j := slices.IndexFunc(src.Assets, func(a sweep.Asset) bool { return a.ID == r.AssetDefinitionID })
	amount, ok := new(big.Int).SetString(r.AmountBaseUnits, 10)
	if j < 0 || !ok {
		return fmt.Errorf("refund send: the API lists no asset %s on %s", r.AssetDefinitionID, r.Network)
	}
	chain, chainID, err := dialRPC(ctx, *rpcURL)
	if err != nil {
		return fmt.Errorf("refund send: %w", err)
	}
	defer chain.Close()
	cfg.Chain = chain
	if chainID.Cmp(src.ChainID) != 0 {
		return fmt.Errorf("refund send: --rpc serves chain %s, but %s is chain %s", chainID, r.Network, src.ChainID)
	}
	report := func(hash common.Hash) error {
		if err := sweep.ReportRefund(ctx, hc, *apiURL, apiKey, *project, id, hash); err != nil {
			return fmt.Errorf("%s was sent (%s) but not reported: run again to report it: %w", id, hash, err)
		}
		fmt.Fprintf(out, "Refund %s sent in %s and reported: the engine follows it to finalized.\n", id, hash)
		return nil
	}
	native := sweep.Asset{Symbol: "wei", Decimals: 0}
	for _, a := range src.Assets {
		if a.Native() {
			native = a
		}
	}
	title := fmt.Sprintf("Refund %s: %s from %s to %s", id, src.Assets[j].Format(amount), from, cfg.Destination)
	if err := sendOnce(ctx, cfg, chainID, src.Addresses[i], src.Assets[j], native, amount, title, digest, *execute, out, report); err != nil {
		return fmt.Errorf("refund send: %w", err)
	}
	return nil
}

// sendOnce makes one prepared transfer, of amount of asset from addr to
// cfg.Destination, and reports its hash: a transfer an earlier run made
// (cfg.Journal) is reported, never made again. Without execute it prints
// the plan only, and its digest when it has one of its own ("" for a
// payout, whose batch's plan has the digest).
func sendOnce(ctx context.Context, cfg sweep.Config, chainID *big.Int, addr sweep.Address, asset, native sweep.Asset, amount *big.Int,
	title, digest string, execute bool, out io.Writer, report func(common.Hash) error) error {
	if _, err := os.Stat(cfg.Journal); err == nil {
		if _, err := sweep.Resume(ctx, cfg, out); err != nil {
			return fmt.Errorf("resume from %s: %w", cfg.Journal, err)
		}
		if hash, ok, err := sweep.MinedTransfer(cfg, chainID); err != nil {
			return err
		} else if ok {
			return report(hash)
		}
	}
	plan, err := sweep.PlanTransfer(ctx, cfg, addr, asset, amount)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, title)
	plan.Print(out, native)
	if !execute {
		if digest != "" {
			printDigest(out, digest)
		} else {
			fmt.Fprintln(out, "Dry run: nothing was signed or sent.")
		}
		return nil
	}
	outcomes, err := sweep.Execute(ctx, cfg, plan, out)
	if err != nil {
		return fmt.Errorf("%w (run again to resume)", err)
	}
	o := outcomes[0]
	if o.Err != nil {
		return o.Err
	}
	return report(o.Hashes[len(o.Hashes)-1])
}

// refundPlanDigest is the digest of what a refund's plan pays.
func refundPlanDigest(r sweep.Refund) string {
	return planDigest("refund "+r.ID, "", []paidTransfer{{Item: r.ID, Network: r.Network, ChainID: r.ChainID, Asset: r.AssetDefinitionID,
		Token: r.TokenAddress, Amount: r.AmountBaseUnits, From: r.FromAddress, To: r.ToAddress}})
}
