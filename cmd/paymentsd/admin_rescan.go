package main

import (
	"context"
	"flag"
	"fmt"
)

func runRescan(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("rescan", flag.ContinueOnError)
	network := fs.String("network", "", "the network's key")
	from := fs.Uint64("from", 0, "the first block to scan")
	to := fs.Uint64("to", 0, "the last block to scan")
	if err := fs.Parse(args); err != nil {
		return err
	}
	e, closeEngine, err := adminTemporalService(ctx)
	if err != nil {
		return err
	}
	defer closeEngine()
	res, err := e.Chains().Rescan(ctx, *network, *from, *to)
	if err != nil {
		return err
	}
	fmt.Printf("%s: blocks %d to %d scanned, %d transfers to deposit addresses handed to their sessions\n",
		*network, *from, *to, res.Transfers)
	return nil
}
