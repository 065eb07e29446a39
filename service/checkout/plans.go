package checkout

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/payment/views"
	"github.com/paymentsd/paymentsd/service/internal/core"
)

// CreatePlan validates and records a payment plan.
func (svc Service) CreatePlan(ctx context.Context, p payment.Principal, projectID string, in payment.PlanInput) (payment.Plan, error) {
	if err := core.Owns(p, projectID); err != nil {
		return payment.Plan{}, err
	}
	now := svc.Now()
	plan, err := payment.NewPlan(in, p.ProjectID, p.IsLive, svc.Catalog, now)
	if err != nil {
		return plan, err
	}
	if plan.SharedRecipient() {
		if err := svc.ownsRecipient(ctx, plan, "recipientAddress"); err != nil {
			return plan, err
		}
	}
	plan.ID = payment.NewID(payment.PrefixPlan, now)
	plan.CreatedAt, plan.UpdatedAt = now, now
	if err := svc.Audited(ctx, p.ProjectID, p.IsLive, payment.AuditPlanCreated, "payment_plan", plan.ID, map[string]any{"title": plan.Title},
		func(ctx context.Context) error { return svc.Store.Checkout().CreatePlan(ctx, plan, RenderPlan) }); err != nil {
		return plan, fmt.Errorf("create plan: %w", err)
	}
	return plan, nil
}

// GetPlan returns one of the principal's plans.
func (svc Service) GetPlan(ctx context.Context, p payment.Principal, projectID, id string) (payment.Plan, error) {
	if err := core.OwnsID(p, projectID, payment.PrefixPlan, id, "Payment plan"); err != nil {
		return payment.Plan{}, err
	}
	plan, err := svc.Store.Checkout().GetPlan(ctx, p, id)
	if errors.Is(err, payment.ErrNotFound) {
		return plan, payment.NotFound("Payment plan")
	}
	return plan, err
}

// ListPlans lists the principal's plans.
func (svc Service) ListPlans(ctx context.Context, p payment.Principal, projectID string, q payment.ListQuery) (core.Page[payment.Plan], error) {
	if err := core.Owns(p, projectID); err != nil {
		return core.Page[payment.Plan]{}, err
	}
	items, total, err := svc.Store.Checkout().ListPlans(ctx, p, q)
	return core.Page[payment.Plan]{Items: items, Total: total, Query: q}, err
}

// RenderPlan renders a plan with its version v, as the data of its event
// (views.Versioned): the store writes it with the plan's change.
func RenderPlan(p payment.Plan, v int) ([]byte, error) { return views.Versioned(views.PlanOf(p), v) }

// UpdatePlan changes a plan's title, redirect URL, merchant info or expiry.
func (svc Service) UpdatePlan(ctx context.Context, p payment.Principal, projectID, id string, in payment.PlanInput) (payment.Plan, error) {
	if _, err := svc.GetPlan(ctx, p, projectID, id); err != nil {
		return payment.Plan{}, err
	}
	now := svc.Now()
	var plan payment.Plan
	err := svc.Audited(ctx, p.ProjectID, p.IsLive, payment.AuditPlanUpdated, "payment_plan", id, map[string]any{"fields": planFields(in)},
		func(ctx context.Context) (err error) {
			plan, err = svc.Store.Checkout().UpdatePlan(ctx, p, id, now, func(plan *payment.Plan) (payment.EventType, error) {
				if plan.Status == payment.PlanArchived {
					return "", payment.Conflict("An archived payment plan cannot change")
				}
				return payment.EventPlanUpdated, payment.ChangePlan(plan, in, now)
			}, RenderPlan)
			return err
		})
	return plan, err
}

// planFields names the fields a plan update sets, for its audit entry.
func planFields(in payment.PlanInput) []string {
	fields := []string{}
	for name, set := range map[string]bool{"title": in.Title != nil, "redirectUrl": in.RedirectURL != nil,
		"merchantInfo": in.MerchantInfo != nil, "expiresAt": in.ExpiresAt != nil, "amountUsd": in.AmountUSD != nil,
		"acceptedAssetPolicies": in.AcceptedAssetPolicies != nil} {
		if set {
			fields = append(fields, name)
		}
	}
	slices.Sort(fields)
	return fields
}

// ArchivePlan archives a plan: it starts no more sessions; open sessions
// go on.
func (svc Service) ArchivePlan(ctx context.Context, p payment.Principal, projectID, id string) (payment.Plan, error) {
	if _, err := svc.GetPlan(ctx, p, projectID, id); err != nil {
		return payment.Plan{}, err
	}
	var plan payment.Plan
	err := svc.Audited(ctx, p.ProjectID, p.IsLive, payment.AuditPlanArchived, "payment_plan", id, nil, func(ctx context.Context) (err error) {
		plan, err = svc.Store.Checkout().UpdatePlan(ctx, p, id, svc.Now(), func(plan *payment.Plan) (payment.EventType, error) {
			if plan.Status == payment.PlanArchived {
				return "", payment.Conflict("The payment plan is archived already")
			}
			plan.Status = payment.PlanArchived
			return payment.EventPlanArchived, nil
		}, RenderPlan)
		return err
	})
	return plan, err
}
