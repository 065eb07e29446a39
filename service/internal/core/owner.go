package core

import (
	"github.com/paymentsd/paymentsd/payment"
)

// CanManageKeys is Owns for what only a principal that may manage the
// project's keys may do (payment.Principal.CanManageKeys).
func CanManageKeys(p payment.Principal, projectID string) error {
	if err := Owns(p, projectID); err != nil {
		return err
	}
	if !p.CanManageKeys() {
		return payment.ErrForbidden
	}
	return nil
}

// Owns is the one ownership check of the engine: a caller names its own
// project, or the project does not exist for it (a 404, never a 403, so
// another project's IDs cannot be probed). Every query then filters by the
// caller's project and environment, which makes another project's and the
// other environment's resources "not found" too.
func Owns(p payment.Principal, projectID string) error {
	if projectID != p.ProjectID {
		return payment.NotFound("Project")
	}
	return nil
}

// OwnsID is Owns for a resource of the project: its ID must also be of the
// resource's kind (prefix) to be looked up.
func OwnsID(p payment.Principal, projectID, prefix, id, what string) error {
	if projectID != p.ProjectID || !payment.ValidID(prefix, id) {
		return payment.NotFound(what)
	}
	return nil
}
