package main

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/paymentsd/paymentsd/internal/sweep"
)

const payoutUsage = `usage: PAYMENTSD_API_KEY=svc_… paymentsd payout send --project ID --rpc URL --key-file FILE [flags] BATCH_ID

Signs and sends the payouts of an approved batch that wait for their
signature, on the network --rpc serves, from the batch's address with its
private key (a hex key file, never sent anywhere): one transaction each,
or with --multisend one transaction per asset through a multisend
contract (DevMultisend's interface: dev/contracts/DevMultisend.sol, after
an allowance to it for a token). It reports each hash, and the engine
follows each payout to finalized. Without --execute it only prints the
plans and their digest; --execute --plan DIGEST signs only while the
batch's payouts waiting here, fetched again, still make that plan
(refused, nothing signed, when one was canceled, added or changed since).
A run stopped halfway is run again, after a dry run of what is left: what
was signed (in the journals) is sent again and reported, never signed
twice.

`

// amount is a payout's amount in base units (checked when listed).
func amount(p sweep.BatchPayout) *big.Int {
	n, _ := new(big.Int).SetString(p.AmountBaseUnits, 10)
	return n
}

// runPayout is `paymentsd payout send`, run by the merchant on their own
// machine.
func runPayout(ctx context.Context, args []string, stdin io.Reader, out io.Writer) error {
	if len(args) == 0 || args[0] != "send" {
		fmt.Fprint(out, payoutUsage)
		return errors.New("payout: want `payout send`")
	}
	fs := flag.NewFlagSet("payout send", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() { fmt.Fprint(out, payoutUsage); fs.PrintDefaults() }
	apiURL, project, rpcURL, gasPrice := signerFlags(fs, "the payouts' network")
	keyFile := fs.String("key-file", "", "file holding the hex private key of the batch's address (its fromAddress); - reads it from stdin")
	journals := fs.String("journal-dir", ".", "the folder of the journals of signed transactions, one per payout (payout-ID.journal.json)")
	execute := fs.Bool("execute", false, "sign and send the transfers (default: print the plans only)")
	planFlag := fs.String("plan", "", "with --execute: the digest the dry run printed; the payouts must still make that plan")
	wait := fs.Duration("wait", 5*time.Minute, "how long to wait for each transaction to be mined before stopping (run again to resume)")
	multisend := fs.String("multisend", "", "a multisend contract's address: one transaction per asset instead of one per payout")
	feeRate := bitcoinFeeRateFlag(fs)
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	apiKey := os.Getenv("PAYMENTSD_API_KEY")
	if err := requireAll("payout send", fs, "BATCH_ID", map[string]string{"--project": *project, "--rpc": *rpcURL, "--key-file": *keyFile, "PAYMENTSD_API_KEY": apiKey}); err != nil {
		return err
	}
	id := fs.Arg(0)
	hc := &http.Client{Timeout: 30 * time.Second}
	b, err := sweep.BatchFromAPI(ctx, hc, *apiURL, apiKey, *project, id)
	if err != nil {
		return fmt.Errorf("payout send: %w", err)
	}
	if b.Status == "completed" {
		fmt.Fprintf(out, "Batch %s is completed: nothing to send.\n", id)
		return nil
	}
	if b.Status != "approved" {
		return fmt.Errorf("payout send: batch %s is %s: only an approved batch is paid (an owner approves it in the dashboard)", id, b.Status)
	}
	if bitcoinNode(ctx, *rpcURL) {
		return payoutBitcoin(ctx, out, stdin, hc, b, *journals, bitcoinSend{apiURL: *apiURL, apiKey: apiKey, project: *project,
			rpcURL: *rpcURL, keyFile: *keyFile, feeRate: *feeRate, execute: *execute, what: "payout batch " + id, plan: *planFlag})
	}
	key, from, err := batchKey(*keyFile, stdin, id, b)
	if err != nil {
		return err
	}
	cfg := sweep.Config{Wallet: sweep.AccountWallet(key), Wait: *wait}
	if err := setGasPrice(&cfg, *gasPrice); err != nil {
		return fmt.Errorf("payout send: %w", err)
	}
	chain, chainID, err := dialRPC(ctx, *rpcURL)
	if err != nil {
		return fmt.Errorf("payout send: %w", err)
	}
	defer chain.Close()
	cfg.Chain = chain
	if *multisend != "" && !common.IsHexAddress(*multisend) {
		return fmt.Errorf("payout send: --multisend %q is not an address", *multisend)
	}
	assets, groups, elsewhere, err := payoutsHere(b, chainID)
	if err != nil {
		return err
	}
	planned := plannedPayouts(b, assets, groups)
	digest := planDigest("payout batch "+id, *multisend, planned)
	if err := checkPlan("batch "+id, *execute, *planFlag, digest); err != nil {
		return fmt.Errorf("payout send: %w", err)
	}
	ps := &payoutSender{out: out, hc: hc, apiURL: *apiURL, apiKey: apiKey, project: *project, batch: id, journals: *journals,
		cfg: cfg, chainID: chainID, from: from, execute: *execute}
	for _, assetID := range assets {
		group := groups[assetID]
		if *multisend != "" {
			if err := ps.multisend(ctx, common.HexToAddress(*multisend), assetID, group); err != nil {
				return fmt.Errorf("payout send: %w", err)
			}
			continue
		}
		ps.each(ctx, group)
	}
	if !*execute {
		fmt.Fprintf(out, "Batch %s on chain %s: %d payouts to send.\n", id, chainID, len(planned))
		printDigest(out, digest)
		if ps.failed > 0 {
			return fmt.Errorf("payout send: %d payouts could not be planned: fix them before executing", ps.failed)
		}
		return nil
	}
	fmt.Fprintf(out, "Batch %s on chain %s: %d sent and reported, %d not sent", id, chainID, ps.sent, ps.failed)
	if elsewhere > 0 {
		fmt.Fprintf(out, "; %d wait on other networks (run again with their --rpc)", elsewhere)
	}
	fmt.Fprintln(out, ".")
	if ps.failed > 0 {
		return fmt.Errorf("payout send: %d payouts not sent: run again once fixed", ps.failed)
	}
	return nil
}

// batchKey reads the private key of batch id's address from keyFile.
func batchKey(keyFile string, stdin io.Reader, id string, b sweep.Batch) (*ecdsa.PrivateKey, common.Address, error) {
	hexKey, err := readSecret(keyFile, stdin)
	if err != nil {
		return nil, common.Address{}, fmt.Errorf("payout send: --key-file: %w", err)
	}
	key, err := crypto.HexToECDSA(strings.TrimPrefix(hexKey, "0x"))
	if err != nil {
		return nil, common.Address{}, errors.New("payout send: --key-file does not hold a hex private key")
	}
	from := crypto.PubkeyToAddress(key.PublicKey)
	if !strings.EqualFold(from.Hex(), b.FromAddress) {
		return nil, common.Address{}, fmt.Errorf("payout send: the key is %s's, but batch %s is paid from %s", from, id, b.FromAddress)
	}
	return key, from, nil
}

// payoutsHere groups the payouts of b that wait for their signature on
// chain chainID by asset, the assets in the order first listed, and
// counts those that wait on other chains.
func payoutsHere(b sweep.Batch, chainID *big.Int) (assets []string, groups map[string][]sweep.BatchPayout, elsewhere int, err error) {
	groups = map[string][]sweep.BatchPayout{}
	for _, p := range b.Payouts {
		if p.ChainID != chainID.Int64() {
			if p.Status == "awaiting_signature" {
				elsewhere++
			}
			continue
		}
		if p.Status != "awaiting_signature" {
			continue
		}
		if _, ok := new(big.Int).SetString(p.AmountBaseUnits, 10); !ok {
			return nil, nil, 0, fmt.Errorf("payout send: payout %s: amount %q", p.ID, p.AmountBaseUnits)
		}
		if groups[p.AssetDefinitionID] == nil {
			assets = append(assets, p.AssetDefinitionID)
		}
		groups[p.AssetDefinitionID] = append(groups[p.AssetDefinitionID], p)
	}
	return assets, groups, elsewhere, nil
}

// plannedPayouts is the transfers the payouts grouped by payoutsHere
// make, in the order they are sent, for the plan's digest.
func plannedPayouts(b sweep.Batch, assets []string, groups map[string][]sweep.BatchPayout) []paidTransfer {
	var planned []paidTransfer
	for _, assetID := range assets {
		for _, p := range groups[assetID] {
			planned = append(planned, paidTransfer{Item: p.ID, ChainID: p.ChainID, Asset: p.AssetDefinitionID, Token: p.TokenAddress,
				Amount: p.AmountBaseUnits, From: b.FromAddress, To: p.ToAddress})
		}
	}
	return planned
}

// payoutSender sends a batch's payouts on one chain (or, without
// execute, prints them) and counts what it sent and what failed.
type payoutSender struct {
	out                            io.Writer
	hc                             *http.Client
	apiURL, apiKey, project, batch string
	journals                       string
	cfg                            sweep.Config
	chainID                        *big.Int
	from                           common.Address
	execute                        bool
	sent, failed                   int
}

// report reports payout p sent in hash.
func (ps *payoutSender) report(ctx context.Context, p sweep.BatchPayout, hash common.Hash) error {
	if err := sweep.ReportPayout(ctx, ps.hc, ps.apiURL, ps.apiKey, ps.project, p.ID, hash); err != nil {
		return fmt.Errorf("%s was sent (%s) but not reported: run again to report it: %w", p.ID, hash, err)
	}
	fmt.Fprintf(ps.out, "Payout %s (line %d) sent in %s and reported.\n", p.ID, p.Line, hash)
	ps.sent++
	return nil
}

// multisend sends the payouts of one asset in one transaction through
// contract. A transaction not sent counts its payouts failed; a payout
// sent but not reported is an error.
func (ps *payoutSender) multisend(ctx context.Context, contract common.Address, assetID string, group []sweep.BatchPayout) error {
	asset := payoutAsset(group[0])
	to, amounts, total := make([]common.Address, len(group)), make([]*big.Int, len(group)), new(big.Int)
	for i, p := range group {
		to[i], amounts[i] = common.HexToAddress(p.ToAddress), amount(p)
		total.Add(total, amounts[i])
	}
	fmt.Fprintf(ps.out, "Multisend of %d payouts, %s from %s through %s\n", len(group), asset.Format(total), ps.from, contract)
	if !ps.execute {
		return nil
	}
	c := ps.cfg
	c.Journal = filepath.Join(ps.journals, fmt.Sprintf("payout-%s-%s.multisend.journal.json", ps.batch, assetID))
	hash, err := sweep.Multisend(ctx, c, contract, asset, to, amounts, ps.out)
	if err != nil {
		fmt.Fprintf(ps.out, "Multisend of %s not sent: %v\n", asset.Symbol, err)
		ps.failed += len(group)
		return nil
	}
	for _, p := range group {
		if err := ps.report(ctx, p, hash); err != nil {
			return err
		}
	}
	return nil
}

// each sends the payouts of one asset one transaction each.
func (ps *payoutSender) each(ctx context.Context, group []sweep.BatchPayout) {
	asset := payoutAsset(group[0])
	for _, p := range group {
		c := ps.cfg
		c.Destination = common.HexToAddress(p.ToAddress)
		c.Journal = filepath.Join(ps.journals, fmt.Sprintf("payout-%s.journal.json", p.ID))
		title := fmt.Sprintf("Payout %s (line %d): %s from %s to %s", p.ID, p.Line, asset.Format(amount(p)), ps.from, c.Destination)
		if err := sendOnce(ctx, c, ps.chainID, sweep.Address{Address: ps.from}, asset, sweep.Asset{Symbol: "wei"}, amount(p), title, "", ps.execute, ps.out,
			func(h common.Hash) error { return ps.report(ctx, p, h) }); err != nil {
			// One payout that cannot be sent (its gas, its balance) does
			// not stop the others.
			fmt.Fprintf(ps.out, "Payout %s (line %d) not sent: %v\n", p.ID, p.Line, err)
			ps.failed++
		}
	}
}

// payoutAsset is the asset payout p pays in.
func payoutAsset(p sweep.BatchPayout) sweep.Asset {
	a := sweep.Asset{ID: p.AssetDefinitionID, Symbol: p.Symbol, Decimals: p.Decimals}
	if p.TokenAddress != "" {
		a.Token = common.HexToAddress(p.TokenAddress)
	}
	return a
}
