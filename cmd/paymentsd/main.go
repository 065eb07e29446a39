// Command paymentsd is the payment engine: one binary whose subcommands run
// the API, the Temporal worker, the database migrations, admin tasks and,
// in the dev build, the whole system on embedded defaults.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/paymentsd/paymentsd/internal/redact"
)

const usage = `usage: paymentsd <command> [flags]

commands:
  api                          serve the REST and Connect API
  worker                       run the Temporal worker
  migrate                      apply database migrations
  admin create-project --name NAME [--json]
                               create a project with a live and a sandbox API key
  admin set-deposit-key --project ID --env sandbox|live --xpub XPUB [--bitcoin [--address-type p2wpkh|p2tr]]
                               set the key deposit addresses are derived from
  admin deposit-addresses --project ID --env sandbox|live [--chain evm|bitcoin] [--format csv|json]
                               list every used deposit address (index, address,
                               session), for the merchant's wallet to find them all
  admin resume-transaction --chain-id ID --hash 0x…
                               start again the workflow of a recorded transaction
                               that is not running (it failed, or was terminated)
  admin rescan --network KEY --from B --to B
                               scan blocks B..B of a network again for transfers
                               to deposit addresses (safe to run twice)
  admin reconcile [--project ID] [--repair] [--json]
                               compare the records with the workflows after a
                               restore; --repair makes the safe repairs
                               (docs/operations.md)
  admin create-user --email E [--owner-of proj_…]
                               make a merchant account (the password read from
                               stdin), optionally the owner of a project
  admin reseal-webhook-secrets [--batch N]
                               seal every webhook secret again under the newest
                               key of WEBHOOK_SECRET_KEY, so older keys can go
                               (docs/operations.md; safe to run twice)
  admin worker-deployment [--set-current BUILD_ID]
                               print the worker deployment's current version and
                               each version's drainage, or make a version current
                               (a rollback; docs/operations.md)
  sweep --project ID --network KEY --rpc URL --to ADDRESS --key-file FILE [--execute]
                               move the funds of the deposit addresses to one
                               address, signing here with the deposit key's xprv
                               (PAYMENTSD_API_KEY; a dry run without --execute;
                               docs/operations.md)
  refund send --project ID --rpc URL --key-file FILE [--execute --plan DIGEST] REFUND_ID
                               sign and send a refund's prepared transfer from
                               its deposit address, here with the deposit key's
                               xprv, and report it (PAYMENTSD_API_KEY; a dry run
                               without --execute; docs/refunds.md)
  payout send --project ID --rpc URL --key-file FILE [--execute --plan DIGEST] BATCH_ID
                               sign and send an approved batch's payouts from its
                               address, here with its hex private key, and report
                               them (PAYMENTSD_API_KEY; a dry run without
                               --execute; docs/payouts.md)
  version                      print the release and the revision built
  probe [--jsonrpc] URL        a container's health check: URL answers 2xx (or
                               a JSON-RPC node its chain ID) within 3 s
  devchain                     run the development EVM chain alone
  dev                          run everything on embedded defaults (dev build)
  dev listen --forward-to URL  receive webhooks and forward them unchanged to URL

Configuration comes from the environment; see README.md.
`

func main() {
	slog.SetDefault(newLogger(os.Stderr))
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "api":
		err = runAPI(ctx)
	case "worker":
		err = runWorker(ctx)
	case "migrate":
		err = runMigrate(ctx)
	case "admin":
		err = runAdmin(ctx, args)
	case "dev":
		err = runDev(ctx, args)
	case "devchain":
		err = runDevchain(ctx, args)
	case "version":
		err = runVersion(os.Stdout)
	case "probe":
		err = runProbe(ctx, args, os.Stderr)
	case "sweep":
		err = runSweep(ctx, args, os.Stdin, os.Stdout)
	case "refund":
		err = runRefund(ctx, args, os.Stdin, os.Stdout)
	case "payout":
		err = runPayout(ctx, args, os.Stdin, os.Stdout)
	case "help", "-h", "--help":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "paymentsd: unknown command %q\n\n%s", cmd, usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "paymentsd: %v\n", redact.Error(err))
		os.Exit(1)
	}
}
