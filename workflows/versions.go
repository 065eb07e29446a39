package workflows

// Change IDs for workflow.GetVersion live here, one constant per change to
// a workflow's logic that running executions must replay around.
const (
	// changeExpiryWaitsForPayments: a session whose payments seen before
	// expiresAt are still confirming then waits for them, and completes
	// if they reach the amount due, instead of expiring at once.
	changeExpiryWaitsForPayments = "expiry-waits-for-payments"
	// changePendingTimeoutFromPending: a transaction's pending timeout
	// runs from when it (re)entered pending, not from the workflow's start.
	changePendingTimeoutFromPending = "pending-timeout-from-pending"
	// changeTransfers: a transaction's workflow records every transfer of
	// the transaction to any session's deposit address, one record per
	// transfer, and resolves the payers' claims; a session keeps one line
	// per record and takes payers' hashes as an update.
	changeTransfers = "transfers"
	// changeEveryTransfer: every deposit address ever issued is watched
	// and a transfer is judged by its block's time: the scanner starts the
	// transaction's workflow itself when the session's has ended (it is
	// recorded as unexpected), a session does not count a transfer both
	// mined and seen after its late-payment window, and it waits for its
	// networks to be scanned past expiresAt and past the window (up to
	// ScanWaitLimit) rather than until the window's end.
	changeEveryTransfer = "every-transfer"
	// changeAttemptNow: a webhook delivery takes the attempt-now update (a
	// merchant's redelivery), which ends its wait and makes the next
	// attempt at once.
	changeAttemptNow = "attempt-now"
	// changeOneLinePerTransfer: a session keeps one line per transfer
	// even when the transfer's record is made again under another ID (its
	// first record lost in a restore, the transaction's workflow run
	// again): the new record takes the old one's line instead of adding a
	// second.
	changeOneLinePerTransfer = "one-line-per-transfer"
)
