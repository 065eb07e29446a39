package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/paymentsd/paymentsd/internal/btcrpc"
	"github.com/paymentsd/paymentsd/internal/btcsweep"
	"github.com/paymentsd/paymentsd/internal/sweep"
)

// bitcoinNode tells whether rpcURL is a Bitcoin node (it answers
// getblockhash with a known network's genesis block).
func bitcoinNode(ctx context.Context, rpcURL string) bool {
	node, err := btcrpc.New(rpcURL)
	if err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	_, err = btcsweep.Network(ctx, node)
	return err == nil
}

// payoutBitcoin is `paymentsd payout send` on a Bitcoin node: the batch's
// bitcoin payouts waiting for their signature are paid in one transaction
// (one output each, in line order) from the project's own coins, and each
// is reported with it (sendBitcoin).
func payoutBitcoin(ctx context.Context, out io.Writer, stdin io.Reader, hc *http.Client, b sweep.Batch, journals string, o bitcoinSend) error {
	var items []bitcoinPayee
	network := ""
	for _, p := range b.Payouts {
		if p.ChainID != 0 || p.Status != "awaiting_signature" {
			continue
		}
		sats, err := strconv.ParseInt(p.AmountBaseUnits, 10, 64)
		if err != nil || sats <= 0 {
			return fmt.Errorf("payout send: payout %s: amount %q", p.ID, p.AmountBaseUnits)
		}
		items = append(items, bitcoinPayee{ID: p.ID, To: p.ToAddress, Sats: sats, Title: fmt.Sprintf("payout %s (line %d)", p.ID, p.Line)})
		network = p.Network
	}
	o.network = network
	o.journal = filepath.Join(journals, fmt.Sprintf("payout-%s.bitcoin.journal.json", b.ID))
	if len(items) == 0 {
		if j, err := readBitcoinJournal(o.journal); err != nil || j == nil || j.Reported {
			fmt.Fprintf(out, "Batch %s has no bitcoin payout waiting for its signature: nothing to send.\n", b.ID)
			return nil
		}
	}
	var funded []btcsweep.Funded
	if network != "" { // else resuming a journaled payment: nothing is planned
		var err error
		if funded, err = btcsweep.FromAPI(ctx, hc, o.apiURL, o.apiKey, o.project, network); err != nil {
			return fmt.Errorf("payout send: %w", err)
		}
	}
	fmt.Fprintf(out, "Batch %s: %d bitcoin payouts in one transaction\n", b.ID, len(items))
	sent := 0
	err := sendBitcoin(ctx, out, stdin, funded, items, o, func(id, txid string) error {
		if err := sweep.ReportPayout(ctx, hc, o.apiURL, o.apiKey, o.project, id, common.HexToHash(txid)); err != nil {
			return err
		}
		fmt.Fprintf(out, "Payout %s sent in %s and reported.\n", id, txid)
		sent++
		return nil
	})
	if err != nil {
		return fmt.Errorf("payout send: %w", err)
	}
	if o.execute {
		fmt.Fprintf(out, "Batch %s on %s: %d sent and reported.\n", b.ID, network, sent)
	}
	return nil
}
