package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"

	"github.com/paymentsd/paymentsd/internal/btckeys"
	"github.com/paymentsd/paymentsd/internal/btcrpc"
	"github.com/paymentsd/paymentsd/internal/btcsweep"
	"github.com/paymentsd/paymentsd/internal/sweep"
)

// Bitcoin money out (docs/refunds.md and docs/payouts.md, "Bitcoin"): a
// refund of a session paid in bitcoin, or a batch's bitcoin payouts, are
// paid from the project's own coins, the outputs its finalized payments
// left at its deposit addresses (as `paymentsd sweep` lists them), signed
// here with the account's extended private key (the sweep's key file),
// the change going back to a deposit address of the account. The engine
// takes the transaction only when it spends those coins alone.

// bitcoinSend is a Bitcoin send's settings.
type bitcoinSend struct {
	apiURL, apiKey, project, network string
	rpcURL, keyFile, journal         string
	feeRate                          int64
	execute                          bool
	// what names the plan (a refund, a batch); plan is the digest of the
	// dry run that --execute signs (--plan).
	what, plan string
	// prefer is the address whose coins are spent first (a refund's own
	// session's deposit address); "" for none.
	prefer string
}

// bitcoinJournal is a Bitcoin payment signed and about to be (or already)
// sent, written before it is sent: a run that stops resends and reports
// it instead of signing another.
type bitcoinJournal struct {
	TxID     string   `json:"txid"`
	Hex      string   `json:"hex"`
	Items    []string `json:"items"`
	Fee      int64    `json:"fee"`
	Reported bool     `json:"reported"`
}

func readBitcoinJournal(path string) (*bitcoinJournal, error) {
	var j bitcoinJournal
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err == nil {
		err = json.Unmarshal(b, &j)
	}
	if err != nil || j.TxID == "" {
		return nil, fmt.Errorf("journal %s is not a Bitcoin payment's journal (%v): move it aside to plan again", path, err)
	}
	return &j, nil
}

// bitcoinPayee is one item to pay: its ID, its destination and amount.
type bitcoinPayee struct {
	ID, To, Title string
	Sats          int64
}

// sendBitcoin pays items in one transaction from the project's own coins
// and reports its ID for each with report; without execute it prints the
// plan only. A journaled payment is resent and reported, never signed
// again.
func sendBitcoin(ctx context.Context, out io.Writer, stdin io.Reader, funded []btcsweep.Funded, items []bitcoinPayee, o bitcoinSend,
	report func(id, txid string) error) error {
	node, err := btcrpc.New(o.rpcURL)
	if err != nil {
		return fmt.Errorf("--rpc: %w", err)
	}
	params, err := btcsweep.Network(ctx, node)
	if err != nil {
		return fmt.Errorf("--rpc is not a Bitcoin node: %w", err)
	}
	if j, err := readBitcoinJournal(o.journal); err != nil || j != nil {
		if err != nil {
			return err
		}
		if !o.execute {
			fmt.Fprintf(out, "The payment %s (journal %s) was signed already: run with --execute to send and report it.\n", j.TxID, o.journal)
			return nil
		}
		return sendJournaled(ctx, out, node, j, o.journal, report)
	}
	digest := bitcoinPlanDigest(o.what, o.network, items)
	if err := checkPlan(o.what, o.execute, o.plan, digest); err != nil {
		return err
	}
	xprv, err := readSecret(o.keyFile, stdin)
	if err != nil {
		return fmt.Errorf("--key-file: %w", err)
	}
	_, key, err := btcsweep.Account(xprv)
	if err != nil {
		return fmt.Errorf("--key-file: %w", err)
	}
	var payments []btcsweep.Payment
	for _, it := range items {
		to, err := btcutil.DecodeAddress(it.To, params)
		if err != nil || !to.IsForNet(params) {
			return fmt.Errorf("%s pays %q, which is not an address of %s, the network --rpc serves", it.ID, it.To, params.Name)
		}
		payments = append(payments, btcsweep.Payment{To: to, Sats: it.Sats})
	}
	coins, prefer, err := spendableCoins(ctx, out, node, key, params, funded, o.prefer)
	if err != nil {
		return err
	}
	rate := o.feeRate
	if rate == 0 {
		if rate, err = btcsweep.FeeRate(ctx, node, 6); err != nil {
			return err
		}
	}
	plan, err := btcsweep.PlanPayment(key, params, coins, prefer, payments, rate)
	if err != nil {
		return err
	}
	printBitcoinPlan(out, key, params, plan, items)
	if !o.execute {
		printDigest(out, digest)
		return nil
	}
	p, err := plan.PSBT(key, params)
	if err != nil {
		return err
	}
	tx, err := btcsweep.Sign(p, xprv)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := tx.Serialize(&buf); err != nil {
		return err
	}
	j := &bitcoinJournal{TxID: tx.TxHash().String(), Hex: hex.EncodeToString(buf.Bytes()), Fee: plan.Fee}
	for _, it := range items {
		j.Items = append(j.Items, it.ID)
	}
	if err := sweep.SaveJSON(o.journal, j); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	return sendJournaled(ctx, out, node, j, o.journal, report)
}

// spendableCoins are the project's coins to spend: the final payments'
// outputs at deposit addresses of the key (each checked against the key,
// as the sweep checks them) that the node holds unspent, none spent by a
// transaction in its mempool; and the index of the deposit address
// prefer, when its coins are among them.
func spendableCoins(ctx context.Context, out io.Writer, node btcsweep.Node, key btckeys.Key, params *chaincfg.Params,
	funded []btcsweep.Funded, prefer string) ([]btcsweep.Coin, *uint32, error) {
	var coins []btcsweep.Coin
	var preferred *uint32
	for _, f := range funded {
		a, err := key.DeriveAddress(f.Index, params)
		if err != nil {
			return nil, nil, err
		}
		if a.EncodeAddress() != f.Address {
			return nil, nil, fmt.Errorf("the key file's account derives %s at index %d, not the deposit address %s: it is not the project's Bitcoin account key",
				a, f.Index, f.Address)
		}
		for _, p := range f.Outputs {
			if !p.Final {
				continue
			}
			sats, _, ok, err := btcsweep.Unspent(ctx, node, p.Out, true)
			if err != nil {
				return nil, nil, err
			}
			if !ok {
				continue // spent (by a sweep, an earlier payment), or in the mempool's spending
			}
			if sats != p.Sats {
				return nil, nil, fmt.Errorf("the node holds %d sats at %s, the engine recorded %d: is --rpc a node of this network?", sats, p.Out, p.Sats)
			}
			coins = append(coins, btcsweep.Coin{Out: p.Out, Sats: sats, Index: f.Index})
			if strings.EqualFold(f.Address, prefer) {
				i := f.Index
				preferred = &i
			}
		}
	}
	if len(coins) == 0 {
		return nil, nil, errors.New("the project's deposit addresses hold no final, unspent coin to pay from")
	}
	return coins, preferred, nil
}

func printBitcoinPlan(out io.Writer, key btckeys.Key, params *chaincfg.Params, plan btcsweep.Plan, items []bitcoinPayee) {
	var in int64
	fmt.Fprintf(out, "Inputs (%d), the project's own coins:\n", len(plan.Coins))
	for _, c := range plan.Coins {
		addr, _ := key.DeriveAddress(c.Index, params)
		fmt.Fprintf(out, "  %s  %s  deposit address %d (%s)\n", c.Out, btc(c.Sats), c.Index, addr)
		in += c.Sats
	}
	fmt.Fprintln(out, "Outputs:")
	for i, it := range items {
		fmt.Fprintf(out, "  %d  %s to %s  %s\n", i, btc(it.Sats), it.To, it.Title)
	}
	if plan.Change > 0 {
		fmt.Fprintf(out, "  %d  %s change to %s (deposit address %d)\n", len(items), btc(plan.Change), plan.ChangeTo, plan.ChangeIndex)
	} else {
		fmt.Fprintln(out, "  no change: what is left is below dust and goes to the fee")
	}
	fmt.Fprintf(out, "Fee: %d sats (%d sat/vB); inputs %s\n", plan.Fee, plan.FeeRate, btc(in))
}

// sendJournaled sends j's transaction to the node (again: a node that has
// it keeps it) and reports it for each of its items; the journal records
// that it was reported.
func sendJournaled(ctx context.Context, out io.Writer, node btcsweep.Node, j *bitcoinJournal, path string, report func(id, txid string) error) error {
	if !j.Reported {
		if err := node.Call(ctx, nil, "sendrawtransaction", j.Hex); err != nil {
			// Known already (sent by an earlier run, or mined) is fine; a
			// transaction whose coins another spent is not.
			var tx wire.MsgTx
			raw, _ := hex.DecodeString(j.Hex)
			if derr := tx.Deserialize(bytes.NewReader(raw)); derr != nil {
				return derr
			}
			id := tx.TxHash()
			if _, _, ok, uerr := btcsweep.Unspent(ctx, node, *wire.NewOutPoint(&id, 0), true); uerr != nil || !ok {
				return fmt.Errorf("the node refused %s (%v): its coins may be spent by another transaction; move %s aside to plan again", j.TxID, err, path)
			}
		}
		fmt.Fprintf(out, "Sent %s (fee %d sats).\n", j.TxID, j.Fee)
	}
	for _, id := range j.Items {
		if err := report(id, j.TxID); err != nil {
			return fmt.Errorf("%s was sent in %s but not reported: run again to report it: %w", id, j.TxID, err)
		}
	}
	j.Reported = true
	return sweep.SaveJSON(path, j)
}

// bitcoinFeeRateFlag is `refund send`'s and `payout send`'s fee rate on a
// Bitcoin network.
func bitcoinFeeRateFlag(fs *flag.FlagSet) *int64 {
	return fs.Int64("fee-rate", 0, "on a Bitcoin network: the fee rate in sat/vB (default: the node's estimate for 6 blocks)")
}
