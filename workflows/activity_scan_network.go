package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"
)

// ScanCursor is chainwatch's position: the last scanned block.
type ScanCursor struct {
	Number uint64
	Hash   string
	// Time is the block's timestamp (Unix seconds), when known.
	Time uint64
}

// ScanInput asks to scan the next blocks of a network after Cursor.
type ScanInput struct {
	Network string
	Cursor  ScanCursor
	// SessionsToldUntil is the block time (Unix seconds) up to which the
	// sessions whose expiry or late-payment window the scan passed have
	// been told so (the last scan's DueUntil). Its JSON name, Told, is the
	// one recorded histories hold.
	SessionsToldUntil uint64 `json:"Told,omitempty"`
	// SignalSessions has the scan hand its transfers to their sessions'
	// workflows (a signal-with-start for a session whose start is still
	// pending: ChangeSignalWithStart), and tell the due sessions of its
	// progress once all are handed over, itself (ChangeSignalsFromScan):
	// its output then holds only what it could not hand over or tell.
	SignalSessions bool `json:",omitempty"`
}

// ScanOutput is one scan's result.
type ScanOutput struct {
	Cursor    ScanCursor
	Transfers []SessionTransfer
	// CaughtUp is true when the scan reached the chain's head.
	CaughtUp bool
	// Due are the sessions whose expiry or late-payment window the input's
	// cursor has passed since SessionsToldUntil, for chainwatch to tell
	// once it has handed over the transfers; DueUntil is how far they go
	// (block time, Unix seconds; JSON name Told, as recorded histories
	// hold it).
	Due      []string `json:",omitempty"`
	DueUntil uint64   `json:"Told,omitempty"`
}

// scanNetwork runs ScanNetwork as a (normal) activity: a scan may wait at
// the chain's head for a new block, longer than a local activity should
// hold a workflow task. It heartbeats, so a scan whose worker died is
// retried on another within seconds.
func scanNetwork(ctx workflow.Context, in ScanInput) (ScanOutput, error) {
	ctx = workflow.WithHeartbeatTimeout(ctx, 10*time.Second)
	var out ScanOutput
	err := workflow.ExecuteActivity(ctx, ActivityScanNetwork, in).Get(ctx, &out)
	return out, err
}
