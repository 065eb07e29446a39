package postgrestls

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/dev/freeport"
	"github.com/paymentsd/paymentsd/internal/postgres"
	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service"
	"github.com/paymentsd/paymentsd/store"
)

// cluster starts a private cluster in a folder of the test's, stopped and
// removed when the test ends.
func cluster(t *testing.T, name string, o postgres.Options) *postgres.Cluster {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	c, err := postgres.StartWith(context.Background(), dir, freeport.Pick(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Stop(context.Background())
		if target, err := os.Readlink(dir); err == nil {
			os.RemoveAll(target)
		}
	})
	return c
}

// With a read replica (DATABASE_READ_URL), the lists read it and the rest
// reads the primary: a plan created while the replica's replay is paused
// is found by its ID at once and listed once the replica has it; a replica
// that stops answering leaves the lists to the primary.
func TestListsReadTheReplica(t *testing.T) {
	ctx := context.Background()
	primary := cluster(t, "primary", postgres.Options{})
	if err := store.Migrate(ctx, primary.URL()); err != nil {
		t.Fatal(err)
	}
	replica := cluster(t, "replica", postgres.Options{StandbyOf: primary.Port})
	st, err := store.Open(ctx, primary.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.UseReplica(ctx, replica.URL()); err != nil {
		t.Fatal(err)
	}
	svc := service.New(service.Deps{Store: st})
	project, err := svc.Checkout().CreateProject(ctx, "Replicated shop")
	if err != nil {
		t.Fatal(err)
	}
	who := payment.Principal{ProjectID: project.Project.ID}
	create := func(title string) payment.Plan {
		now, usd := time.Now().Truncate(time.Microsecond), decimal.RequireFromString("5")
		p := payment.Plan{ID: payment.NewID(payment.PrefixPlan, now), ProjectID: who.ProjectID, Title: title,
			PricingModel: payment.PricingFixedUSD, AmountUSD: &usd, Status: payment.PlanActive, CreatedAt: now}
		if err := st.Checkout().CreatePlan(ctx, p, nil); err != nil {
			t.Fatal(err)
		}
		return p
	}
	listed := func() []string {
		plans, _, err := st.Checkout().ListPlans(ctx, who, payment.ListQuery{Page: 1, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, p := range plans {
			ids = append(ids, p.ID)
		}
		return ids
	}
	first := create("Streamed")
	testwait.Until(t, 30*time.Second, func() (bool, string) {
		return slices.Contains(listed(), first.ID), "the replica streaming the first plan"
	})

	replay := func(sql string) {
		conn, err := store.Open(ctx, replica.URL())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.Pool().Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	replay("SELECT pg_wal_replay_pause()")
	held := create("Held back")
	if _, err := st.Checkout().GetPlan(ctx, who, held.ID); err != nil {
		t.Fatalf("a plan read by its ID right after its creation: %v", err)
	}
	if ids := listed(); slices.Contains(ids, held.ID) || !slices.Contains(ids, first.ID) {
		t.Fatalf("listed %v while the replica's replay is paused; want the first plan only: the list reads the replica", ids)
	}
	replay("SELECT pg_wal_replay_resume()")
	testwait.Until(t, 30*time.Second, func() (bool, string) {
		return slices.Contains(listed(), held.ID), "the replica replaying the held plan"
	})

	if err := replica.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	late := create("Replica down")
	if ids := listed(); !slices.Contains(ids, late.ID) || len(ids) != 3 {
		t.Fatalf("listed %v with the replica down; want the three plans, from the primary", ids)
	}
}
