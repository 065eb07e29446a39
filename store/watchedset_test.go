package store

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/payment"
)

// The set finds every session it was given, with its ID, project and
// environment, through every growth of its filter, and no address it was
// not given, whatever the filter lets through; an ID not of the engine's
// form comes back as it was.
func TestWatchedSetFindsExactlyItsSessions(t *testing.T) {
	var w watchedSet
	w.reset()
	r := rand.New(rand.NewPCG(7, 11))
	address := func() string { return fmt.Sprintf("0x%016x%016x%08x", r.Uint64(), r.Uint64(), r.Uint32()) }
	type session struct {
		id, project string
		isLive      bool
	}
	held := map[string]session{}
	const n = 20000 // the filter grows from 65,536 bits past 4,096 sessions, twice more by 16,384
	for i := range n {
		a, s := address(), session{payment.NewID(payment.PrefixSession, time.Now()), fmt.Sprintf("prj_%d", i%7), i%2 == 0}
		if i == 42 {
			s.id = "cs_imported-42"
		}
		w.addSession(a, s.id, s.isLive, s.project)
		held[a] = s
	}
	if len(w.filter)*64 < 16*n {
		t.Fatalf("a filter of %d bits for %d sessions", len(w.filter)*64, n)
	}
	for a, s := range held {
		k, _ := addressKey(a)
		f := w.found(k, a)
		if f == nil || f.SessionID != s.id || f.ProjectID != s.project || f.IsLive != s.isLive || f.Address != a {
			t.Fatalf("%s: found %+v, want %+v", a, f, s)
		}
	}
	passed := 0
	for range 100000 {
		a := address()
		k, _ := addressKey(a)
		if w.mayHold(k) {
			passed++
		}
		if f := w.found(k, a); f != nil {
			t.Fatalf("%s, given to no session, found %+v", a, f)
		}
	}
	// At 16 bits a session or more, at most about one in sixteen gets
	// past the filter to the map.
	if passed > 100000/10 {
		t.Fatalf("the filter let %d of 100,000 through", passed)
	}
}
