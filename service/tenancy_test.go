package service_test

import (
	"context"
	"testing"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service"
)

// Another project's records do not exist for a caller: its project, its
// plans by ID, its audit log and its members are all "not found", never
// "forbidden", so that IDs cannot be probed; and lists hold only the
// caller's own records of the caller's environment.
func TestAnotherProjectsRecordsAreNotFound(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	alice, mallory := e.owner(t, "Alice's shop"), e.owner(t, "Mallory's shop")
	plan := e.plan(t, alice.principal, "Alice's plan")

	victim := alice.principal.ProjectID
	_, err := e.svc.Checkout().GetProject(ctx, mallory.principal, victim)
	wantKind(t, "another project", err, payment.KindNotFound)
	_, err = e.svc.Checkout().GetPlan(ctx, mallory.principal, victim, plan.ID)
	wantKind(t, "another project's plan under its project", err, payment.KindNotFound)
	_, err = e.svc.Checkout().GetPlan(ctx, mallory.principal, mallory.principal.ProjectID, plan.ID)
	wantKind(t, "another project's plan under one's own project", err, payment.KindNotFound)
	_, err = e.svc.Access().ListAudit(ctx, mallory.principal, victim, payment.ListQuery{Page: 1, Limit: 10})
	wantKind(t, "another project's audit log", err, payment.KindNotFound)
	_, err = e.svc.Access().Members(ctx, mallory.principal, victim)
	wantKind(t, "another project's members", err, payment.KindNotFound)
	_, _, err = e.svc.Access().Invite(ctx, mallory.principal, victim, "friend@example.test", "owner")
	wantKind(t, "an invitation to another project", err, payment.KindNotFound)
	_, err = e.svc.Checkout().UpdateProject(ctx, mallory.principal, victim, service.ProjectInput{Name: ptr("Mine now")})
	wantKind(t, "renaming another project", err, payment.KindNotFound)

	plans, err := e.svc.Checkout().ListPlans(ctx, mallory.principal, mallory.principal.ProjectID, payment.ListQuery{Page: 1, Limit: 10})
	if err != nil || plans.Total != 0 || len(plans.Items) != 0 {
		t.Fatalf("the other project's plan list = %+v, %v; want empty", plans, err)
	}
	if got, err := e.svc.Checkout().GetPlan(ctx, alice.principal, victim, plan.ID); err != nil || got.Title != "Alice's plan" {
		t.Fatalf("the owner's own plan = %+v, %v", got, err)
	}

	// The live environment of the same project does not see the sandbox's
	// plan either.
	live := alice.principal
	live.IsLive = true
	_, err = e.svc.Checkout().GetPlan(ctx, live, victim, plan.ID)
	wantKind(t, "a sandbox plan read in live", err, payment.KindNotFound)

	// Someone who is not a member has no principal in the project at all.
	_, err = e.svc.Access().MemberPrincipal(ctx, mallory.user, mallory.session, victim, false)
	wantKind(t, "a non-member acting in a project", err, payment.KindNotFound)

	// An ID of the wrong kind is not looked up.
	_, err = e.svc.Checkout().GetPlan(ctx, alice.principal, victim, "not-a-plan-id")
	wantKind(t, "a malformed plan ID", err, payment.KindNotFound)
}
