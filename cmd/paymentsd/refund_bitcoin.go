package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/ethereum/go-ethereum/common"

	"github.com/paymentsd/paymentsd/internal/btcsweep"
	"github.com/paymentsd/paymentsd/internal/sweep"
)

// refundBitcoin is `paymentsd refund send` for a refund of a session paid
// in bitcoin (done false for another): paid from the project's own coins,
// its session's first, and reported (sendBitcoin).
func refundBitcoin(ctx context.Context, out io.Writer, stdin io.Reader, hc *http.Client, r sweep.Refund, o bitcoinSend) (done bool, _ error) {
	funded, err := btcsweep.FromAPI(ctx, hc, o.apiURL, o.apiKey, o.project, r.Network)
	if errors.Is(err, btcsweep.ErrNotBitcoin) {
		return false, nil
	}
	if err != nil {
		return true, fmt.Errorf("refund send: %w", err)
	}
	sats, err := strconv.ParseInt(r.AmountBaseUnits, 10, 64)
	if err != nil || sats <= 0 {
		return true, fmt.Errorf("refund send: %s: amount %q", r.ID, r.AmountBaseUnits)
	}
	o.prefer = r.FromAddress
	title := fmt.Sprintf("refund %s", r.ID)
	fmt.Fprintf(out, "Refund %s: %s to %s on %s\n", r.ID, btc(sats), r.ToAddress, r.Network)
	err = sendBitcoin(ctx, out, stdin, funded, []bitcoinPayee{{ID: r.ID, To: r.ToAddress, Sats: sats, Title: title}}, o,
		func(id, txid string) error {
			if err := sweep.ReportRefund(ctx, hc, o.apiURL, o.apiKey, o.project, id, common.HexToHash(txid)); err != nil {
				return err
			}
			fmt.Fprintf(out, "Refund %s sent in %s and reported: the engine follows it to finalized.\n", id, txid)
			return nil
		})
	if err != nil {
		return true, fmt.Errorf("refund send: %w", err)
	}
	return true, nil
}
