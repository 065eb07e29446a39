package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/paymentsd/paymentsd/payment"
)

// runDepositAddresses prints every used deposit index of a project
// environment's EVM deposit key or Bitcoin account key, in index order,
// with the largest run of unused indexes before a used one and of unpaid
// addresses before a paid one: a wallet that finds the payments by
// looking ahead from the last paid address needs a gap limit above it.
func runDepositAddresses(ctx context.Context, out io.Writer, args []string) error {
	fs := flag.NewFlagSet("deposit-addresses", flag.ContinueOnError)
	project := fs.String("project", "", "project ID")
	env := fs.String("env", "sandbox", "environment: sandbox or live")
	format := fs.String("format", "csv", "csv or json (one object per line)")
	chain := fs.String("chain", payment.ChainEVM, "whose addresses: evm (the deposit key's) or bitcoin (the Bitcoin account key's)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := checkEnv(*env); err != nil {
		return err
	}
	if *format != "csv" && *format != "json" {
		return errors.New("--format must be csv or json")
	}
	if *chain != payment.ChainEVM && *chain != payment.ChainBitcoin {
		return errors.New("--chain must be evm or bitcoin")
	}
	e, closeStore, err := adminService(ctx)
	if err != nil {
		return err
	}
	defer closeStore()
	p := payment.Principal{ProjectID: *project, IsLive: *env == "live"}
	w := csv.NewWriter(out)
	if *format == "csv" {
		_ = w.Write([]string{"index", "derivation_path", "address", "checkout_session_id", "session_status", "created_at", "gap_before"})
	}
	enc := json.NewEncoder(out)
	var count, largestGap, largestUnpaid int64
	lastPaid := int64(-1)
	for page := 1; ; page++ {
		q := payment.DepositQuery{ListQuery: payment.ListQuery{Page: page, Limit: payment.MaxLimit}, Chain: *chain}
		items, err := e.Checkout().ListDepositAddresses(ctx, p, *project, q)
		if err != nil {
			return err
		}
		for _, d := range items.Items {
			count++
			largestGap = max(largestGap, d.GapBefore)
			if len(d.Received) > 0 {
				largestUnpaid, lastPaid = max(largestUnpaid, d.Index-lastPaid-1), d.Index
			}
			path := fmt.Sprintf("0/%d", d.Index)
			if *format == "json" {
				err = enc.Encode(map[string]any{"index": d.Index, "derivationPath": path, "address": d.Address,
					"checkoutSessionId": d.SessionID, "sessionStatus": d.Status, "createdAt": d.CreatedAt, "gapBefore": d.GapBefore})
			} else {
				err = w.Write([]string{strconv.FormatInt(d.Index, 10), path, d.Address, d.SessionID, string(d.Status),
					d.CreatedAt.Format(time.RFC3339), strconv.FormatInt(d.GapBefore, 10)})
			}
			if err != nil {
				return err
			}
		}
		if len(items.Items) < q.Limit {
			break
		}
	}
	w.Flush()
	fmt.Fprintf(os.Stderr, "%d used deposit addresses; largest run of unused indexes before a used one: %d; "+
		"of unpaid addresses before a paid one: %d (a wallet's gap limit must be above it)\n", count, largestGap, largestUnpaid)
	return w.Error()
}
