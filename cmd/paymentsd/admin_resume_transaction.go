package main

import (
	"context"
	"flag"
	"fmt"
)

func runResumeTransaction(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("resume-transaction", flag.ContinueOnError)
	chainID := fs.Int64("chain-id", 0, "the transaction's chain ID")
	hash := fs.String("hash", "", "the transaction's hash")
	if err := fs.Parse(args); err != nil {
		return err
	}
	e, closeEngine, err := adminTemporalService(ctx)
	if err != nil {
		return err
	}
	defer closeEngine()
	id, err := e.Payments().ResumeTransaction(ctx, *chainID, *hash)
	if err != nil {
		return err
	}
	fmt.Printf("workflow %s is running\n", id)
	return nil
}
