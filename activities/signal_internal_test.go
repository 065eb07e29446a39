package activities

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"go.temporal.io/sdk/client"

	"github.com/paymentsd/paymentsd/workflows"
)

// signalled is a Temporal client whose session workflows in running take
// signals, and that keeps what each was sent.
type signalled struct {
	client.Client
	mu      sync.Mutex
	running map[string]bool
	got     map[string][]string
}

func (c *signalled) SignalWorkflow(_ context.Context, id, _, name string, _ any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.running[id] {
		return errors.New("workflow not found for ID: " + id)
	}
	c.got[id] = append(c.got[id], name)
	return nil
}

// starts starts the workflows of the sessions in pending.
type starts struct {
	c       *signalled
	pending []string
	asked   []string
}

func (s *starts) Ensure(_ context.Context, ids ...string) error {
	s.asked = append(s.asked, ids...)
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	for _, id := range ids {
		if slices.Contains(s.pending, id) {
			s.c.running[workflows.CheckoutSessionWorkflowID(id)] = true
		}
	}
	return nil
}

// A scan's transfer to a session whose workflow's start is still pending
// has the start made at once and is handed to the workflow; what no
// running workflow takes (no session's transfer, an ended session's) is
// left to chainwatch, which then tells the due sessions too. With every
// transfer handed over, the scan tells them itself.
func TestAScanStartsThePendingWorkflowsOfTheSessionsItFindsPaid(t *testing.T) {
	ctx := context.Background()
	c := &signalled{running: map[string]bool{workflows.CheckoutSessionWorkflowID("cs_running"): true,
		workflows.CheckoutSessionWorkflowID("cs_due"): true}, got: map[string][]string{}}
	s := &starts{c: c, pending: []string{"cs_pending"}}
	a := &Activities{Temporal: c, Starts: s}
	transfer := func(session string) workflows.SessionTransfer {
		return workflows.SessionTransfer{SessionID: session, TxHash: "0x" + session}
	}
	out := &workflows.ScanOutput{Transfers: []workflows.SessionTransfer{transfer("cs_running"), transfer("cs_pending"),
		transfer("cs_ended"), transfer("")}, Due: []string{"cs_due"}}
	if err := a.signalSessions(ctx, "devnet", out); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.asked, []string{"cs_pending", "cs_ended"}) {
		t.Fatalf("starts asked for %v, want the two sessions whose workflows did not take the signal", s.asked)
	}
	for _, id := range []string{"cs_running", "cs_pending"} {
		if got := c.got[workflows.CheckoutSessionWorkflowID(id)]; !slices.Equal(got, []string{workflows.SignalTransfer}) {
			t.Fatalf("%s was sent %v, want its transfer once", id, got)
		}
	}
	if len(out.Transfers) != 2 || out.Transfers[0].SessionID != "cs_ended" || out.Transfers[1].SessionID != "" {
		t.Fatalf("left to chainwatch: %+v, want the ended session's transfer and the one no session's", out.Transfers)
	}
	if len(out.Due) != 1 || len(c.got[workflows.CheckoutSessionWorkflowID("cs_due")]) != 0 {
		t.Fatalf("due sessions told before every transfer was handed over (due %v)", out.Due)
	}

	s.pending = []string{"cs_late"}
	out = &workflows.ScanOutput{Transfers: []workflows.SessionTransfer{transfer("cs_late")}, Due: []string{"cs_due"}}
	if err := a.signalSessions(ctx, "devnet", out); err != nil {
		t.Fatal(err)
	}
	if len(out.Transfers) != 0 || len(out.Due) != 0 ||
		!slices.Equal(c.got[workflows.CheckoutSessionWorkflowID("cs_due")], []string{workflows.SignalScanned}) {
		t.Fatalf("left %+v, due %v, the due session sent %v: want all handed over and the due session told",
			out.Transfers, out.Due, c.got[workflows.CheckoutSessionWorkflowID("cs_due")])
	}
}
