package workflows

import (
	"slices"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/paymentsd/paymentsd/payment"
)

// ScanWaitLimit bounds how long past its late-payment window a session
// waits for its networks' chainwatch (a node down for days): a transfer
// reported after that is recorded as unexpected.
const ScanWaitLimit = 7 * 24 * time.Hour

// sessionNetworks are the networks a session takes payments on.
func sessionNetworks(s payment.Session) []string {
	var networks []string
	for _, o := range s.PaymentOptions {
		if !slices.Contains(networks, o.Network) {
			networks = append(networks, o.Network)
		}
	}
	return networks
}

// waitScanned waits until every network the session takes has been
// scanned past before (its chainwatch has handed over every transfer mined
// before), or until limit. Each network's chainwatch tells the session when
// it passes the session's expiry and late-payment window (SignalScanned).
// Without that word, the session reads the scan's progress once (a chain
// whose clock runs ahead passed the time before the session existed), then
// waits for the word; without it for a minute (the session's workflow was
// not running when it was sent, a network with no chainwatch any more), it
// reads again, less and less often (up to every 10 minutes). A workflow
// before ChangeOneWorkflowPerPayment polls the progress instead
// (waitScanRecorded).
func (cs *checkoutSession) waitScanned(ctx workflow.Context, before, limit time.Time) {
	networks := sessionNetworks(cs.s)
	if cs.v < 1 {
		waitScanRecorded(ctx, networks, before, limit)
		return
	}
	told := func() bool {
		for _, n := range networks {
			if time.Unix(int64(cs.scannedTo[n]), 0).Before(before) {
				return false
			}
		}
		return true
	}
	for wait := time.Minute; workflow.Now(ctx).Before(limit); wait = min(2*wait, 10*time.Minute) {
		if told() {
			return
		}
		behind, err := scanBehind(ctx, ScanBehindInput{Networks: networks, Before: before})
		if err != nil || len(behind) == 0 {
			return
		}
		if ok, err := workflow.AwaitWithTimeout(ctx, min(wait, limit.Sub(workflow.Now(ctx))), told); err != nil || ok {
			return
		}
	}
}

// waitScanRecorded waits until every one of the networks has been scanned past
// before, or until limit, reading the scan's progress. It looks every few seconds at first, and less
// often the longer it waits (a tenth of the time waited, up to 10 minutes),
// so that a network down for days does not fill the history.
func waitScanRecorded(ctx workflow.Context, networks []string, before, limit time.Time) {
	started := workflow.Now(ctx)
	next := func(wait time.Duration) time.Duration {
		return min(2*wait, max(10*time.Second, min(workflow.Now(ctx).Sub(started)/10, 10*time.Minute)))
	}
	for wait := time.Second; workflow.Now(ctx).Before(limit); wait = next(wait) {
		behind, err := scanBehind(ctx, ScanBehindInput{Networks: networks, Before: before})
		if err != nil || len(behind) == 0 {
			return
		}
		if err := workflow.Sleep(ctx, wait); err != nil {
			return
		}
	}
}
