package core

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/paymentsd/paymentsd/internal/observability"
	"github.com/paymentsd/paymentsd/payment"
)

// AuditEntry is the audit entry of a change made now by ctx's origin.
func (c *Core) AuditEntry(ctx context.Context, projectID string, isLive bool, action, targetType, targetID string, details map[string]any) payment.AuditEntry {
	now := c.Now()
	a := payment.AuditEntry{ID: payment.NewID(payment.PrefixAudit, now), ProjectID: projectID, IsLive: isLive, OccurredAt: now,
		Origin: payment.OriginOf(ctx), Action: action, TargetType: targetType, TargetID: targetID}
	if a.ActorKind == "" {
		a.ActorKind = payment.AuditActorInternal // an engine call made by the process itself (the dev stack's set-up)
	}
	if details != nil {
		a.Details, _ = json.Marshal(details)
	}
	return a
}

// Audited makes a change and its audit entry in one database transaction:
// both are committed, or neither is. change runs with the transaction's
// context (store.InTx): the store methods it calls with that context write
// in the transaction.
func (c *Core) Audited(ctx context.Context, projectID string, isLive bool, action, targetType, targetID string,
	details map[string]any, change func(ctx context.Context) error) error {
	a := c.AuditEntry(ctx, projectID, isLive, action, targetType, targetID, details)
	return c.Store.InTx(ctx, func(ctx context.Context) error {
		if err := change(ctx); err != nil {
			return err
		}
		return c.recordAudit(ctx, a)
	})
}

// AuditIn records a change's audit entry in ctx's transaction
// (store.InTx), for a change whose entry depends on what it did: a
// failure is returned, so that the transaction, and the change, roll back.
func (c *Core) AuditIn(ctx context.Context, projectID string, isLive bool, action, targetType, targetID string, details map[string]any) error {
	return c.recordAudit(ctx, c.AuditEntry(ctx, projectID, isLive, action, targetType, targetID, details))
}

func (c *Core) recordAudit(ctx context.Context, a payment.AuditEntry) error {
	if err := c.Store.Access().RecordAudit(ctx, a); err != nil {
		observability.AuditFailures.Inc()
		return fmt.Errorf("audit log: %s not recorded, so not made: %w", a.Action, err)
	}
	return nil
}
