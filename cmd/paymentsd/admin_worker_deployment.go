package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/paymentsd/paymentsd/worker"
)

// runWorkerDeployment is `paymentsd admin worker-deployment`: it prints the
// engine's worker deployment (its current version, and each version's
// drainage), or with --set-current makes a version current, as a rollback
// or a rollout with WORKER_PROMOTE=manual needs.
func runWorkerDeployment(ctx context.Context, out io.Writer, args []string) error {
	fs := flag.NewFlagSet("worker-deployment", flag.ContinueOnError)
	setCurrent := fs.String("set-current", "", "make this build ID's version current (its workers must be polling)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c, err := loadProductionConfig()
	if err != nil {
		return err
	}
	tc, err := dialAdminTemporal(c)
	if err != nil {
		return err
	}
	defer tc.Close()
	h := tc.WorkerDeploymentClient().GetHandle(worker.DeploymentName)
	if *setCurrent != "" {
		if _, err := h.SetCurrentVersion(ctx, client.WorkerDeploymentSetCurrentVersionOptions{BuildID: *setCurrent}); err != nil {
			return fmt.Errorf("set %s current: %w", *setCurrent, err)
		}
		fmt.Fprintf(out, "%s is the current version of worker deployment %s\n", *setCurrent, worker.DeploymentName)
		return nil
	}
	d, err := h.Describe(ctx, client.WorkerDeploymentDescribeOptions{})
	if err != nil {
		return fmt.Errorf("describe worker deployment %s: %w", worker.DeploymentName, err)
	}
	current := "none (unversioned workers)"
	if v := d.Info.RoutingConfig.CurrentVersion; v != nil {
		current = v.BuildID
	}
	fmt.Fprintf(out, "worker deployment %s\ncurrent: %s\n", worker.DeploymentName, current)
	if v := d.Info.RoutingConfig.RampingVersion; v != nil {
		fmt.Fprintf(out, "ramping: %s (%.0f%%)\n", v.BuildID, d.Info.RoutingConfig.RampingVersionPercentage)
	}
	fmt.Fprintln(out, "versions (build ID, created, drainage):")
	for _, v := range d.Info.VersionSummaries {
		fmt.Fprintf(out, "  %s  %s  %s\n", v.Version.BuildID, v.CreateTime.UTC().Format(time.RFC3339), drainage(v.DrainageStatus))
	}
	return nil
}

// drainage names a version's drainage status as an operator reads it.
func drainage(s client.WorkerDeploymentVersionDrainageStatus) string {
	switch s {
	case client.WorkerDeploymentVersionDrainageStatusDraining:
		return "draining: pinned executions still open, keep its workers"
	case client.WorkerDeploymentVersionDrainageStatusDrained:
		return "drained: its workers may stop"
	default:
		return "-" // current or ramping, or not yet checked
	}
}
