package workflows

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
// A session's workflow started with CheckoutSessionInput.Version set takes
// its version from there and records no marker; one started without it
// (by v0.1.0, or from a start queued before the upgrade) asks GetVersion.
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
