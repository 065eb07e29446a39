package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/paymentsd/paymentsd/service"
)

// runReconcile compares the records with the workflows after a restore,
// and money out with the chain, and, with --repair, repairs what is safe
// to (docs/operations.md, "Backups and restores"). It reads the networks
// the worker reads (NETWORKS). It exits non-zero while findings are left
// unrepaired.
func runReconcile(ctx context.Context, out io.Writer, args []string) error {
	fs := flag.NewFlagSet("reconcile", flag.ContinueOnError)
	project := fs.String("project", "", "only this project's records and workflows")
	repair := fs.Bool("repair", false, "make the safe repairs; without it nothing changes")
	asJSON := fs.Bool("json", false, "print the findings as one JSON array")
	if err := fs.Parse(args); err != nil {
		return err
	}
	e, closeEngine, err := adminChainService(ctx)
	if err != nil {
		return err
	}
	defer closeEngine()
	findings, err := e.Chains().Reconcile(ctx, service.ReconcileOptions{ProjectID: *project, Repair: *repair})
	if err != nil {
		return err
	}
	left := 0
	for _, f := range findings {
		if !f.Repaired {
			left++
		}
	}
	if *asJSON {
		if findings == nil {
			findings = []service.Finding{}
		}
		b, _ := json.MarshalIndent(findings, "", "  ")
		fmt.Fprintln(out, string(b))
	} else {
		for _, f := range findings {
			state := "found"
			switch {
			case f.Repaired:
				state = "repaired"
			case f.Error != "":
				state = "left: " + f.Error
			}
			fmt.Fprintf(out, "%-29s %s  %s  (%s)\n", f.Kind, f.ObjectID, f.Detail, state)
		}
		fmt.Fprintf(out, "%d findings, %d repaired, %d left\n", len(findings), len(findings)-left, left)
	}
	if left > 0 {
		return fmt.Errorf("%d findings left: see docs/operations.md, Backups and restores", left)
	}
	return nil
}
