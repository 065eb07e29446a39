package workflows

import (
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"
)

// RescanInput asks to scan blocks From..To (inclusive) of a network again.
type RescanInput struct {
	Network  string
	From, To uint64
	// Step is how many blocks one scan reads (the network's block range).
	Step uint64
}

// RescanResult is what a rescan found.
type RescanResult struct {
	Blocks    uint64
	Transfers int
}

// RescanStartOptions start an operator's rescan of a range: the same range
// asked again while it runs joins the running rescan, and asked after it
// ended runs it again.
func RescanStartOptions(in RescanInput) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                       fmt.Sprintf("rescan/%s/%d-%d", in.Network, in.From, in.To),
		TaskQueue:                TaskQueue,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		TypedSearchAttributes:    networkSearchAttributes(in.Network),
		StaticSummary:            RescanSummary(in),
	}
}

// Rescan scans a range of a network's blocks again, apart from the
// network's chainwatch and without moving its cursor, and hands every
// transfer to a deposit address it finds to its session the way
// chainwatch does. Running it twice is safe: a session counts a transfer
// once, and a transfer is recorded once.
func Rescan(ctx workflow.Context, in RescanInput) (RescanResult, error) {
	ctx = withActivityOptions(ctx)
	var res RescanResult
	step := max(in.Step, 1)
	for from := in.From; from <= in.To; from += step {
		to := min(in.To, from+step-1)
		out, err := scanRange(ctx, ScanRangeInput{Network: in.Network, From: from, To: to})
		if err != nil {
			return res, err
		}
		if err := reportTransfers(ctx, out.Transfers); err != nil {
			return res, err
		}
		res.Blocks += to - from + 1
		res.Transfers += len(out.Transfers)
		workflow.SetCurrentDetails(ctx, fmt.Sprintf("through block %d of %d · %d transfer(s) found", to, in.To, res.Transfers))
		if to == in.To {
			break // to+1 could wrap
		}
	}
	return res, nil
}
