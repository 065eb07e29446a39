package db

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// The set holds every deposit address it was given through every growth
// of its filter, and none it was not, whatever the filter lets through.
func TestWatchedSetHoldsExactlyItsAddresses(t *testing.T) {
	var w WatchedSet
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
	// Asked one at a time and all at once, mixed with as many others.
	one := func(k uint64) bool {
		held := []bool{false}
		w.MayHold([]uint64{k}, held)
		return held[0]
	}
	var keys []uint64
	for _, a := range held {
		k, _ := AddressKey(a)
		if !one(k) {
			t.Fatalf("%s was given and is not held", a)
		}
		keys = append(keys, k, 0)
	}
	passed := 0
	for i := range keys {
		if i%2 == 0 {
			continue
		}
		k, _ := AddressKey(address())
		keys[i] = k
		if i, bits := filterBits(k, len(w.filter)); w.filter[i]&bits == bits {
			passed++
		}
		if one(k) {
			t.Fatalf("%x, given to no session, is held", k)
		}
	}
	each := make([]bool, len(keys))
	w.MayHold(keys, each)
	for i, h := range each {
		if h != (i%2 == 0) {
			t.Fatalf("key %d of %d (%x): held %v", i, len(keys), keys[i], h)
		}
	}
	// At 16 bits a session or more, two bits a key, at most about one in
	// fifty gets past the filter to the map.
	if passed > n/50 {
		t.Fatalf("the filter let %d of %d through", passed, n)
	}
}
