package testwait

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestUntilReturnsOnceTheConditionHolds(t *testing.T) {
	var calls atomic.Int32
	go func() {
		time.Sleep(30 * time.Millisecond) // the other side takes its time
		calls.Store(100)
	}()
	start := time.Now()
	Until(t, 5*time.Second, func() (bool, string) { return calls.Load() == 100, "" })
	if waited := time.Since(start); waited > time.Second {
		t.Fatalf("waited %v for a condition met after 30ms", waited)
	}
}

func TestPollGivesUpWithTheLastState(t *testing.T) {
	n := 0
	start := time.Now()
	last, ok := poll(t, 50*time.Millisecond, func() (bool, string) {
		n++
		return false, strings.Repeat("x", n)
	})
	if ok {
		t.Fatal("a condition never met was reported met")
	}
	if waited := time.Since(start); waited < 50*time.Millisecond || waited > time.Second {
		t.Fatalf("gave up after %v, want about 50ms", waited)
	}
	if len(last) != n || n < 2 {
		t.Fatalf("last state %q after %d calls", last, n)
	}
}

func TestPollAsksOnceMoreAtTheEnd(t *testing.T) {
	// A condition met only at the last moment still counts: the last ask is
	// made at the deadline, not before the last sleep.
	start := time.Now()
	_, ok := poll(t, 40*time.Millisecond, func() (bool, string) { return time.Since(start) >= 40*time.Millisecond, "" })
	if !ok {
		t.Fatal("a condition met at the deadline was reported unmet")
	}
}
