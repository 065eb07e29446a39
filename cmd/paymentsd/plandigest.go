package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
)

// A dry run of `refund send` and `payout send` prints the digest of what
// its plan pays, and --execute signs only when the items, fetched again,
// still make that digest (--plan): what a person read is what is signed.
// The digest covers what is paid and by whom, each transfer's item,
// network and chain, asset and token contract, amount in base units,
// source and destination (and a multisend's contract); not the gas price
// nor the nonce, which the network sets when the transaction is signed
// and which pay no one else.

// paidTransfer is one transfer of a plan, as its digest covers it.
type paidTransfer struct {
	Item, Network string
	ChainID       int64
	Asset, Token  string
	Amount        string
	From, To      string
}

// planDigest is the digest of a plan of what (a refund's ID, a batch's)
// paying transfers, through via (a multisend contract, or ""): 32 hex
// digits of SHA-256 over one line a transfer, addresses in lower case.
func planDigest(what, via string, transfers []paidTransfer) string {
	var b strings.Builder
	fmt.Fprintf(&b, "paymentsd plan v1\n%s\nvia %s\n", what, strings.ToLower(via))
	for _, t := range transfers {
		fmt.Fprintf(&b, "%s|%s|%d|%s|%s|%s|%s|%s\n", t.Item, t.Network, t.ChainID, t.Asset, strings.ToLower(t.Token), t.Amount,
			strings.ToLower(t.From), strings.ToLower(t.To))
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:16])
}

// errPlanRequired is --execute without the digest of a dry run.
var errPlanRequired = errors.New("--execute needs --plan DIGEST: run without --execute first, read the plan, " +
	"and pass the digest it prints, so that exactly what you read is signed")

// checkPlan refuses an execution whose plan, made again from the items
// fetched now (digest), is not the one the dry run printed (given).
func checkPlan(what string, execute bool, given, digest string) error {
	switch {
	case !execute:
		return nil
	case given == "":
		return errPlanRequired
	case !strings.EqualFold(strings.TrimSpace(given), digest):
		return fmt.Errorf("%s changed since the plan you read (digest %s; it is now %s): nothing was signed. "+
			"Run without --execute again, read the new plan, and execute that one if it is right", what, given, digest)
	}
	return nil
}

// printDigest ends a dry run: the digest to execute it with.
func printDigest(out io.Writer, digest string) {
	fmt.Fprintf(out, "Plan digest: %s\n", digest)
	fmt.Fprintf(out, "Dry run: nothing was signed or sent. Run again with --execute --plan %s to send exactly this plan.\n", digest)
}

// bitcoinPlanDigest is the digest of a Bitcoin plan paying items on
// network from the project's own coins (which coins, the change and the
// fee rate are the network's, as gas is an EVM network's).
func bitcoinPlanDigest(what, network string, items []bitcoinPayee) string {
	transfers := make([]paidTransfer, len(items))
	for i, it := range items {
		transfers[i] = paidTransfer{Item: it.ID, Network: network, Asset: "bitcoin", Amount: fmt.Sprint(it.Sats),
			From: "the project's own coins", To: it.To}
	}
	return planDigest(what, "", transfers)
}
