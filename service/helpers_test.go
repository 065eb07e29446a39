package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/store/storetest"
)

// The service tests run the operations against a real database and no
// Temporal: the operations they cover decide and record on their own.

var catalog = payment.Catalog{Assets: []payment.Asset{
	{ID: "usdc-devnet", Symbol: "USDC", Decimals: 6, Network: "devnet", ChainID: 1337,
		TokenAddress: "0x5FbDB2315678afecb367f032d93F642f64180aa3", Price: payment.PriceSource{Kind: payment.PriceUSDPegged}},
}}

// clock is a settable clock for the service.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time          { return c.now }
func (c *clock) Advance(d time.Duration) { c.now = c.now.Add(d) }
func newClock() *clock                   { return &clock{now: time.Now().UTC()} }
func (c *clock) deps(st *store.Store) service.Deps {
	return service.Deps{Store: st, Catalog: catalog, Now: c.Now}
}

type env struct {
	svc   *service.Service
	store *store.Store
	clock *clock
}

func newEnv(t *testing.T) env {
	t.Helper()
	st := storetest.NewStore(t)
	c := newClock()
	return env{svc: service.New(c.deps(st)), store: st, clock: c}
}

// member is a signed-in user acting in one project's sandbox.
type member struct {
	user      payment.User
	session   payment.UserSession
	principal payment.Principal
}

var userSeq int

// signup makes a user with a unique email.
func (e env) signup(t *testing.T) service.SignedIn {
	t.Helper()
	userSeq++
	in, err := e.svc.Identity().Signup(context.Background(), fmt.Sprintf("user%d-%d@example.test", userSeq, time.Now().UnixNano()),
		"correct horse battery staple", service.Client{IP: "192.0.2.1", UserAgent: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// owner makes a user and a project they own, and returns them acting in
// the project's sandbox.
func (e env) owner(t *testing.T, name string) member {
	t.Helper()
	in := e.signup(t)
	p, err := e.svc.Checkout().CreateProjectFor(context.Background(), in.User.ID, name)
	if err != nil {
		t.Fatal(err)
	}
	return e.as(t, in, p.ID)
}

// as is a signed-in user acting in projectID's sandbox.
func (e env) as(t *testing.T, in service.SignedIn, projectID string) member {
	t.Helper()
	p, err := e.svc.Access().MemberPrincipal(context.Background(), in.User, in.Session, projectID, false)
	if err != nil {
		t.Fatal(err)
	}
	return member{user: in.User, session: in.Session, principal: p}
}

// join makes a new user a member of m's project with role, through an
// invitation.
func (e env) join(t *testing.T, m member, role payment.Role) member {
	t.Helper()
	ctx := context.Background()
	in := e.signup(t)
	_, token, err := e.svc.Access().Invite(ctx, m.principal, m.principal.ProjectID, in.User.Email, string(role))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Access().AcceptInvitation(ctx, in.User, token); err != nil {
		t.Fatal(err)
	}
	return e.as(t, in, m.principal.ProjectID)
}

// audit is the project's audit log (sandbox), newest first.
func (e env) audit(t *testing.T, m member) []payment.AuditEntry {
	t.Helper()
	page, err := e.svc.Access().ListAudit(context.Background(), m.principal, m.principal.ProjectID, payment.ListQuery{Page: 1, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return page.Items
}

// findAudit returns the newest entry of action, failing if there is none.
func findAudit(t *testing.T, entries []payment.AuditEntry, action string) (payment.AuditEntry, map[string]any) {
	t.Helper()
	for _, a := range entries {
		if a.Action == action {
			var details map[string]any
			if len(a.Details) > 0 {
				if err := json.Unmarshal(a.Details, &details); err != nil {
					t.Fatalf("%s details %s: %v", action, a.Details, err)
				}
			}
			return a, details
		}
	}
	var got []string
	for _, a := range entries {
		got = append(got, a.Action)
	}
	t.Fatalf("no %s entry in the audit log: %v", action, got)
	return payment.AuditEntry{}, nil
}

func countAudit(entries []payment.AuditEntry, action string) int {
	n := 0
	for _, a := range entries {
		if a.Action == action {
			n++
		}
	}
	return n
}

// wantKind fails unless err is a payment.Error of kind.
func wantKind(t *testing.T, what string, err error, kind payment.Kind) {
	t.Helper()
	if err == nil || payment.KindOf(err) != kind {
		t.Fatalf("%s: %v (kind %v), want kind %v", what, err, payment.KindOf(err), kind)
	}
}

// wantField fails unless err is a validation error naming field.
func wantField(t *testing.T, what string, err error, field string) {
	t.Helper()
	var e *payment.Error
	if !errors.As(err, &e) || e.Kind != payment.KindValidation {
		t.Fatalf("%s: %v, want a validation error", what, err)
	}
	for _, d := range e.Details {
		if d.Field == field {
			return
		}
	}
	t.Fatalf("%s: %+v, want a detail naming %s", what, e.Details, field)
}

func ptr[T any](v T) *T { return &v }

// plan creates a fixed-price plan.
func (e env) plan(t *testing.T, p payment.Principal, title string) payment.Plan {
	t.Helper()
	plan, err := e.svc.Checkout().CreatePlan(context.Background(), p, p.ProjectID, payment.PlanInput{Title: ptr(title), AmountUSD: ptr("12.50")})
	if err != nil {
		t.Fatal(err)
	}
	return plan
}
