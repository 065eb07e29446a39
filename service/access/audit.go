package access

import (
	"context"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service/internal/core"
)

// ListAudit lists the principal's audit log, newest first; q.Status
// filters by action.
func (svc Service) ListAudit(ctx context.Context, p payment.Principal, projectID string, q payment.ListQuery) (core.Page[payment.AuditEntry], error) {
	if err := core.Owns(p, projectID); err != nil {
		return core.Page[payment.AuditEntry]{}, err
	}
	items, total, err := svc.Store.Access().ListAudit(ctx, p, q)
	return core.Page[payment.AuditEntry]{Items: items, Total: total, Query: q}, err
}
