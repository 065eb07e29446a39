package nodetrust

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// report records what a ledger reports.
type report struct {
	rejected map[string]int
	aside    map[string]bool
	disagree bool
}

func (r *report) AnswerRejected(_, node, check string)    { r.rejected[node+" "+check]++ }
func (r *report) NodeSetAside(_, node string, aside bool) { r.aside[node] = aside }
func (r *report) NodesDisagree(_ string, disagree bool)   { r.disagree = disagree }

func ledger(nodes ...string) (*Ledger, *report, *time.Time) {
	r := &report{rejected: map[string]int{}, aside: map[string]bool{}}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := New("net", nodes, r)
	l.Now = func() time.Time { return now }
	return l, r, &now
}

// A node whose answer fails a check is set aside for a minute, then asked
// again; failing again in a row doubles the time, and agreeing with the
// others at a comparison ends the doubling. A network's only node is
// never set aside: its reads fail instead.
func TestAFailedCheckSetsTheNodeAsideForAWhile(t *testing.T) {
	l, r, now := ledger("a", "b")
	bad := Bad("block_hash", "block 7 hashes to 0x01")
	l.Failed(0, fmt.Errorf("read: %w", bad))
	if l.Usable(0) || !l.Usable(1) || !r.aside["a"] || r.rejected["a block_hash"] != 1 {
		t.Fatalf("after a failed check: usable %v %v, report %+v", l.Usable(0), l.Usable(1), r)
	}
	st := l.Status()
	if len(st.SetAside) != 1 || st.SetAside[0].Node != "a" || st.SetAside[0].Until.Sub(*now) > time.Minute ||
		st.SetAside[0].Until.Sub(*now) < 50*time.Second || !errors.Is(bad, ErrBadAnswer) {
		t.Fatalf("status %+v", st)
	}
	*now = now.Add(time.Minute)
	if !l.Usable(0) || r.aside["a"] {
		t.Fatal("not asked again after its minute")
	}
	l.Failed(0, bad)
	if until := l.Status().SetAside[0].Until.Sub(*now); until < 100*time.Second || until > 2*time.Minute {
		t.Fatalf("a second failure in a row sets it aside for %s; want about two minutes", until)
	}
	*now = now.Add(2 * time.Minute)
	l.Vote("block 5", map[int]string{0: "x", 1: "x"})
	l.Failed(0, bad)
	if until := l.Status().SetAside[0].Until.Sub(*now); until > time.Minute {
		t.Fatalf("after agreeing with the others, a failure sets it aside for %s; want a minute again", until)
	}

	alone, r, _ := ledger("only")
	alone.Failed(0, bad)
	if !alone.Usable(0) || r.aside["only"] || r.rejected["only block_hash"] != 1 {
		t.Fatal("a network's only node was set aside")
	}
}

// A comparison sets aside the nodes out of the majority until they agree
// again; without a majority no node is used until one is found, and the
// nodes set aside for a failed check have no vote.
func TestAComparisonFollowsTheMajority(t *testing.T) {
	l, r, _ := ledger("a", "b", "c")
	l.Vote("block 9", map[int]string{0: "x", 1: "y", 2: "x"})
	if !l.Usable(0) || l.Usable(1) || !l.Usable(2) || !r.aside["b"] {
		t.Fatalf("b is in the minority: usable %v %v %v", l.Usable(0), l.Usable(1), l.Usable(2))
	}
	if st := l.Status(); len(st.SetAside) != 1 || !st.SetAside[0].Until.IsZero() {
		t.Fatalf("status %+v: want b set aside until it agrees", st)
	}
	l.Vote("block 10", map[int]string{0: "x", 1: "x", 2: "x"})
	if !l.Usable(1) || r.aside["b"] {
		t.Fatal("b agrees again but is not used")
	}

	l.Failed(2, Bad("txid", "no"))
	if voters := l.Voters(); len(voters) != 2 || voters[0] != 0 || voters[1] != 1 {
		t.Fatalf("voters %v: a node that failed a check has no vote", voters)
	}
	l.Vote("block 11", map[int]string{0: "x", 1: "y"})
	if l.Usable(0) || l.Usable(1) || !l.Split() || !r.disagree || !errors.Is(l.Why(), ErrDisagree) || !l.Status().Disagree {
		t.Fatal("two nodes that disagree: one is still used")
	}
	l.Vote("block 12", map[int]string{0: "x", 1: "x"})
	if !l.Usable(0) || !l.Usable(1) || l.Split() || r.disagree {
		t.Fatal("the nodes agree again but are not used")
	}
}
