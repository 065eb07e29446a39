package testwait

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestUntilReturnsOnceTheConditionHolds(t *testing.T) {
	// The other side takes its time: the condition holds at the fifth ask.
	var calls atomic.Int32
	start := time.Now()
	Until(t, 5*time.Second, func() (bool, string) { return calls.Add(1) == 5, "" })
	if n := calls.Load(); n != 5 {
		t.Fatalf("asked %d times for a condition met at the fifth ask", n)
	}
	if waited := time.Since(start); waited > time.Second {
		t.Fatalf("waited %v for a condition met at the fifth ask", waited)
	}
}

func TestForReportsWhetherTheConditionHeld(t *testing.T) {
	n := 0
	if !For(5*time.Second, func() bool { n++; return n == 3 }) || n != 3 {
		t.Fatalf("a condition met at the third ask: reported unmet, or asked %d times", n)
	}
	start := time.Now()
	if For(30*time.Millisecond, func() bool { return false }) {
		t.Fatal("a condition never met was reported met")
	}
	if waited := time.Since(start); waited < 30*time.Millisecond || waited > time.Second {
		t.Fatalf("gave up after %v, want about 30ms", waited)
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
