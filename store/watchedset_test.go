package store

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// The set holds every deposit address it was given through every growth
// of its filter, and none it was not, whatever the filter lets through.
func TestWatchedSetHoldsExactlyItsAddresses(t *testing.T) {
	var w watchedSet
	w.reset()
	r := rand.New(rand.NewPCG(7, 11))
	address := func() string { return fmt.Sprintf("0x%016x%016x%08x", r.Uint64(), r.Uint64(), r.Uint32()) }
	const n = 20000 // the filter grows from 65,536 bits past 4,096 sessions, twice more by 16,384
	var held []string
	for range n {
		a := address()
		w.addDeposits(a)
		held = append(held, a)
	}
	if len(w.filter)*64 < 16*n {
		t.Fatalf("a filter of %d bits for %d sessions", len(w.filter)*64, n)
	}
	for _, a := range held {
		if k, _ := addressKey(a); !w.mayHold(k) {
			t.Fatalf("%s was given and is not held", a)
		}
	}
	passed := 0
	for range 100000 {
		k, _ := addressKey(address())
		if i, bit := filterBit(k, len(w.filter)); w.filter[i]&bit != 0 {
			passed++
		}
		if w.mayHold(k) {
			t.Fatalf("%x, given to no session, is held", k)
		}
	}
	// At 16 bits a session or more, at most about one in sixteen gets
	// past the filter to the map.
	if passed > 100000/10 {
		t.Fatalf("the filter let %d of 100,000 through", passed)
	}
}
