package service

import "github.com/paymentsd/paymentsd/payment"

// owns is the one ownership check of the engine: a caller names its own
// project, or the project does not exist for it (a 404, never a 403, so
// another project's IDs cannot be probed). Every query then filters by the
// caller's project and environment, which makes another project's and the
// other environment's resources "not found" too.
func owns(p payment.Principal, projectID string) error {
	if projectID != p.ProjectID {
		return payment.NotFound("Project")
	}
	return nil
}

// ownsID is owns for a resource of the project: its ID must also be of the
// resource's kind (prefix) to be looked up.
func ownsID(p payment.Principal, projectID, prefix, id, what string) error {
	if projectID != p.ProjectID || !payment.ValidID(prefix, id) {
		return payment.NotFound(what)
	}
	return nil
}
