package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/psbt"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/internal/btckeys"
	"github.com/paymentsd/paymentsd/internal/btcrpc"
	"github.com/paymentsd/paymentsd/internal/btcsweep"
)

// bitcoinSweep is `paymentsd sweep`'s flags on a Bitcoin network.
type bitcoinSweep struct {
	rpcURL, to, keyFile, psbtFile, journal string
	feeRate, maxFeeRate                    int64
	execute                                bool
	wait                                   time.Duration
}

// sweepBitcoin spends the outputs of the funded deposit addresses'
// finalized payments to one address in one transaction: planned from the
// node's unspent outputs, built as a PSBT, signed here with the account's
// private key, journaled before it is sent, and followed until mined. A
// journaled sweep not yet mined is resent and waited for before anything
// else is planned, so coins are never offered to two sweeps.
func sweepBitcoin(ctx context.Context, out io.Writer, stdin io.Reader, funded []btcsweep.Funded, o bitcoinSweep) error {
	xprv, err := readSecret(o.keyFile, stdin)
	if err != nil {
		return fmt.Errorf("sweep: --key-file: %w", err)
	}
	_, key, err := btcsweep.Account(xprv)
	if err != nil {
		return fmt.Errorf("sweep: --key-file: %w", err)
	}
	node, err := btcrpc.New(o.rpcURL)
	if err != nil {
		return fmt.Errorf("sweep: --rpc: %w", err)
	}
	params, err := btcsweep.Network(ctx, node)
	if err != nil {
		return fmt.Errorf("sweep: --rpc: %w", err)
	}
	dest, err := btcutil.DecodeAddress(o.to, params)
	if err != nil || !dest.IsForNet(params) {
		return fmt.Errorf("sweep: --to %q is not an address of %s", o.to, params.Name)
	}
	if err := checkAccountKey(key, params, funded); err != nil {
		return err
	}

	j, err := btcsweep.ReadJournal(o.journal)
	if err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	if j != nil && !j.Done {
		if !o.execute {
			fmt.Fprintf(out, "The sweep %s (journal %s) is not known mined: run with --execute to resend it and wait for it.\n", j.TxID, o.journal)
			return nil
		}
		if done, err := settle(ctx, out, node, j, o); err != nil || !done {
			return err
		}
	}

	fmt.Fprintf(out, "%d funded deposit addresses listed\n", len(funded))
	coins, total, err := finalCoins(ctx, out, node, funded)
	if err != nil {
		return err
	}
	if len(coins) == 0 {
		fmt.Fprintln(out, "Nothing to move.")
		return nil
	}
	chosen, err := btcsweep.ChooseFeeRate(ctx, node, o.feeRate, o.maxFeeRate, 6)
	if err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	rate := chosen.SatPerVB
	fmt.Fprintf(out, "Fee rate: %s\n", chosen)
	coins, dust := btcsweep.SplitDust(coins, rate)
	total -= leftAsDust(out, dust, rate)
	if len(coins) == 0 {
		fmt.Fprintln(out, "Nothing to move.")
		return nil
	}
	p, fee, err := btcsweep.Build(key, params, coins, dest, rate)
	if err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	fmt.Fprintf(out, "Sweep %d outputs holding %s: %s to %s, %d sats of fee (%d sat/vB)\n", len(coins), btc(total),
		btc(total-fee), dest, fee, rate)
	if o.psbtFile != "" {
		if err := writePSBT(out, p, o.psbtFile); err != nil {
			return err
		}
	}
	if !o.execute {
		fmt.Fprintln(out, "Dry run: nothing was signed or sent. Run again with --execute to sweep.")
		return nil
	}
	tx, err := btcsweep.Sign(p, xprv)
	if err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	if j, err = btcsweep.NewJournal(tx, dest.EncodeAddress(), fee); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	if err := j.Write(o.journal); err != nil {
		return fmt.Errorf("sweep: journal: %w", err)
	}
	_, err = settle(ctx, out, node, j, o)
	return err
}

// checkAccountKey checks that key, the key file's account, derives the
// funded deposit addresses: a wrong key would sign nothing they hold.
func checkAccountKey(key btckeys.Key, params *chaincfg.Params, funded []btcsweep.Funded) error {
	for _, f := range funded {
		a, err := key.DeriveAddress(f.Index, params)
		if err != nil {
			return fmt.Errorf("sweep: %w", err)
		}
		if a.EncodeAddress() != f.Address {
			return fmt.Errorf("sweep: the key file's account derives %s at index %d, not the deposit address %s: it is not the project's Bitcoin account key",
				a, f.Index, f.Address)
		}
	}
	return nil
}

// finalCoins returns the unspent outputs of the funded addresses'
// finalized payments, as the node holds them, and their total; it prints
// how many were already spent and how many are not final yet.
func finalCoins(ctx context.Context, out io.Writer, node btcsweep.Node, funded []btcsweep.Funded) (coins []btcsweep.Coin, total int64, err error) {
	notFinal, spent := 0, 0
	for _, f := range funded {
		for _, p := range f.Outputs {
			if !p.Final {
				notFinal++
				continue
			}
			sats, _, ok, err := btcsweep.Unspent(ctx, node, p.Out, false)
			if err != nil {
				return nil, 0, fmt.Errorf("sweep: %w", err)
			}
			if !ok {
				spent++
				continue
			}
			if sats != p.Sats {
				return nil, 0, fmt.Errorf("sweep: the node holds %d sats at %s, the engine recorded %d: is --rpc a node of this network?", sats, p.Out, p.Sats)
			}
			coins = append(coins, btcsweep.Coin{Out: p.Out, Sats: sats, Index: f.Index})
			total += sats
		}
	}
	if spent > 0 {
		fmt.Fprintf(out, "Already spent: %d outputs\n", spent)
	}
	if notFinal > 0 {
		fmt.Fprintf(out, "Left: %d outputs of payments not final yet (run again once they are)\n", notFinal)
	}
	return coins, total, nil
}

// leftAsDust prints the outputs left as dust at rate, and returns what
// they hold.
func leftAsDust(out io.Writer, dust []btcsweep.Coin, rate int64) (held int64) {
	if len(dust) == 0 {
		return 0
	}
	for _, c := range dust {
		held += c.Sats
	}
	fmt.Fprintf(out, "Left as dust: %d outputs holding %s, each worth no more than the %d sats spending it costs at %d sat/vB\n",
		len(dust), btc(held), btcsweep.DustAt(rate), rate)
	return held
}

// writePSBT writes the unsigned PSBT p, base64, to file.
func writePSBT(out io.Writer, p *psbt.Packet, file string) error {
	b64, err := p.B64Encode()
	if err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	if err := os.WriteFile(file, []byte(b64+"\n"), 0o600); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	fmt.Fprintf(out, "The unsigned PSBT is in %s\n", file)
	return nil
}

// settle sends the journaled sweep j, waits for it and tells whether it
// is done (mined, or its coins found spent); the journal records it.
func settle(ctx context.Context, out io.Writer, node btcsweep.Node, j *btcsweep.Journal, o bitcoinSweep) (bool, error) {
	outcome, err := btcsweep.Settle(ctx, node, j, o.wait)
	if err != nil {
		return false, fmt.Errorf("sweep %s: %w", j.TxID, err)
	}
	switch outcome {
	case btcsweep.Waiting:
		fmt.Fprintf(out, "Sent %s, not mined yet: run again with --execute to wait for it.\n", j.TxID)
		return false, nil
	case btcsweep.Mined:
		fmt.Fprintf(out, "Moved %s to %s in %s\n", btc(j.Sats), j.To, j.TxID)
	case btcsweep.Spent:
		fmt.Fprintf(out, "The sweep %s is neither in the node's mempool nor unspent: its coins were spent (by it, or by another transaction).\n", j.TxID)
	}
	j.Done = true
	if err := j.Write(o.journal); err != nil {
		return false, fmt.Errorf("sweep: journal: %w", err)
	}
	return true, nil
}

// btc writes sats in bitcoin, without trailing zeros.
func btc(sats int64) string { return decimal.New(sats, -8).String() + " BTC" }
