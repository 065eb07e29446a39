// Package testwait lets a test wait for something another goroutine,
// process or workflow makes true, instead of sleeping a guessed time or
// writing its own deadline loop. It is one of the test kits in
// internal/testkit, which use nothing of the engine above internal/.
package testwait

import (
	"testing"
	"time"
)

// Poll intervals: a condition met quickly is noticed quickly, one that
// takes seconds is not asked hundreds of times a second (each ask is often
// an HTTP call or a query, on a machine the test shares).
const (
	firstInterval = 5 * time.Millisecond
	maxInterval   = 100 * time.Millisecond
)

// deadlineMargin is kept before the test binary's own deadline (go test
// -timeout) so that a condition never met fails with its last state
// rather than with the panic and goroutine dump of the timeout.
const deadlineMargin = 5 * time.Second

// Until calls cond until it reports done, and fails the test if that does
// not happen within timeout (or before the test binary's deadline). cond
// also describes what it saw; the description of its last call is the
// failure message, so a test that gives up says where things stood.
//
// cond runs on the test's goroutine, so it may call t.Fatal itself for an
// outcome that waiting cannot change.
func Until(t testing.TB, timeout time.Duration, cond func() (done bool, state string)) {
	t.Helper()
	if last, ok := poll(t, timeout, cond); !ok {
		t.Fatalf("not done after %v: %s", timeout, last)
	}
}

// For calls cond until it reports true, for at most timeout, and reports
// whether it did: Until for a harness with no test to fail, which returns
// an error of its own instead (a proxy listening again, a server started
// for a test).
func For(timeout time.Duration, cond func() bool) bool {
	_, ok := poll(nil, timeout, func() (bool, string) { return cond(), "" })
	return ok
}

// poll is Until without the failure: it reports whether cond was met and
// the state cond last described.
func poll(t testing.TB, timeout time.Duration, cond func() (bool, string)) (string, bool) {
	end := time.Now().Add(timeout)
	if d, ok := testDeadline(t); ok && d.Add(-deadlineMargin).Before(end) {
		end = d.Add(-deadlineMargin)
	}
	interval := firstInterval
	for {
		done, state := cond()
		if done {
			return state, true
		}
		if !time.Now().Before(end) {
			return state, false
		}
		time.Sleep(min(interval, max(time.Until(end), 0)))
		interval = min(2*interval, maxInterval)
	}
}

// testDeadline is the deadline of a *testing.T (benchmarks and For have
// none).
func testDeadline(t testing.TB) (time.Time, bool) {
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		return d.Deadline()
	}
	return time.Time{}, false
}
