package chains

import (
	"context"
	"fmt"

	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/workflows"
)

// Rescan scans blocks from..to of a network again for transfers to deposit
// addresses, hands them to their sessions the way chainwatch does, and
// waits for the result. It is safe to run twice, or while the network's
// scanner runs: every transfer counts once.
func (svc Service) Rescan(ctx context.Context, network string, from, to uint64) (workflows.RescanResult, error) {
	var probs payment.Problems
	if network == "" {
		probs.Add("network", "is required")
	}
	if from > to {
		probs.Add("from", "must not be after to")
	}
	if err := probs.Err(); err != nil {
		return workflows.RescanResult{}, err
	}
	in := workflows.RescanInput{Network: network, From: from, To: to, Step: chainwatch.DefaultMaxRange}
	run, err := svc.Temporal.ExecuteWorkflow(ctx, workflows.RescanStartOptions(in), workflows.WorkflowRescan, in)
	if err != nil {
		return workflows.RescanResult{}, fmt.Errorf("start rescan: %w", err)
	}
	var res workflows.RescanResult
	if err := run.Get(ctx, &res); err != nil {
		return res, fmt.Errorf("rescan %s: %w", run.GetID(), err)
	}
	return res, nil
}
