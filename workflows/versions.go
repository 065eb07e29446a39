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
)
