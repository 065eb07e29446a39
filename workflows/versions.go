package workflows

import (
	"strings"

	"go.temporal.io/sdk/workflow"
)

// Change IDs for workflow.GetVersion live here, one constant per change to
// a workflow's logic that running executions must replay around. v0.1.0 is
// the replay floor: every execution started before it has ended. A change
// that the recorded histories of a release (testdata/releases) cannot
// replay adds its ID here.

// ChangeOneWorkflowPerPayment (version 1): a session's workflow follows a
// transfer that pays it alone to its end itself, with no transaction
// workflow (followInline); chainwatch tells sessions when its scan has
// passed their expiry or late-payment window (SignalScanned), and a session
// waits for that word instead of reading the scan's progress from the
// database; a session that completes or is canceled stops its expiry timer.
// A session's workflow takes version 1 without a marker when its first
// workflow task was completed by a release's worker deployment
// (sessionVersion), or when its input says so (CheckoutSessionInput.Version,
// set by the starters before the engine used Worker Versioning); else, as
// v0.1.0's sessions, it asks GetVersion.
const ChangeOneWorkflowPerPayment = "one-workflow-per-payment"

// ChangeSignalsFromScan (version 1): chainwatch's scan activity signals the
// sessions of the transfers it found, and tells the due sessions its
// progress, with the client (ScanInput.SignalSessions), instead of the
// chainwatch workflow signalling each one: a signal sent from a workflow
// writes to the sender's history twice, and one chainwatch workflow per
// network cannot take hundreds of those a second. What the scan could not
// hand over, chainwatch takes as before.
const ChangeSignalsFromScan = "signals-from-scan"

// ChangeSignalWithStart (version 1): chainwatch's scan activity hands a
// transfer to a session whose workflow's start is still pending with a
// signal-with-start that makes the recorded start, so what it leaves is
// only what no session's workflow can take (no session's transfer, a
// session whose workflow has ended). Chainwatch then gives each of those to
// its transaction's workflow at once, with no hurried start and no wait
// for a sweep (the MakePendingSessionStart(s)Due local activities, still
// registered for the runs that started before).
const ChangeSignalWithStart = "signal-with-start"

// BuildID is the build ID of a release's workers in the engine's worker
// deployment: the release and the VCS revision it was built from,
// "v0.2.0+1a2b3c…" (a "v" is put before a release that lacks one). Every
// build ID it gives starts with "v"; v0.1.0's unversioned workers recorded
// their binary's checksum, hexadecimal, as theirs.
func BuildID(release, revision string) string {
	return "v" + strings.TrimPrefix(release, "v") + "+" + revision
}

// FromWorkerDeployment tells whether a build ID recorded in a history is
// one BuildID gave: the workflow task was completed by a release's worker
// deployment, not by v0.1.0's unversioned workers (their binary's
// checksum) nor by the SDK's test environment (none).
func FromWorkerDeployment(buildID string) bool {
	return strings.HasPrefix(buildID, "v")
}

// sessionVersion is the version of ChangeOneWorkflowPerPayment of a
// session's workflow whose input carries none. The build ID of the worker
// that completed its first workflow task is in the history (the SDK reads
// it back on a replay), so it decides as a marker would, at no cost: a
// session a release's worker deployment started takes version 1, the
// version every release since v0.1.0 starts sessions at; one that v0.1.0's
// workers started asks GetVersion, which finds no marker in its history
// and answers the default version, as before.
func sessionVersion(ctx workflow.Context) workflow.Version {
	if FromWorkerDeployment(workflow.GetInfo(ctx).GetCurrentBuildID()) {
		return 1
	}
	return workflow.GetVersion(ctx, ChangeOneWorkflowPerPayment, workflow.DefaultVersion, 1)
}
