package freeport

import (
	"errors"
	"fmt"
	"net"
	"testing"
)

func TestPickNeverHandsOutAPortTwiceNorAReservedOne(t *testing.T) {
	reserved := Pick()
	Reserve(reserved + 1)
	seen := map[int]bool{}
	for range 3000 {
		p := Pick()
		if p < low || p >= high {
			t.Fatalf("picked %d, outside [%d, %d)", p, low, high)
		}
		if seen[p] || p == reserved || p == reserved+1 {
			t.Fatalf("picked %d twice", p)
		}
		seen[p] = true
	}
}

// listen binds the ports as a server does.
func listen(t *testing.T, ports ...int) error {
	for _, p := range ports {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			return err
		}
		t.Cleanup(func() { l.Close() })
	}
	return nil
}

func TestRetryStartsAgainOnFreshPortsWhenAnotherProcessTookOne(t *testing.T) {
	var attempts [][]int
	err := Retry(3, func(pick func() int) error {
		ports := []int{pick(), pick(), pick()}
		attempts = append(attempts, ports)
		if len(attempts) == 1 {
			// Another process binds the second port between the pick and
			// the server's bind.
			if err := listen(t, ports[1]); err != nil {
				t.Fatal(err)
			}
		}
		return listen(t, ports...)
	})
	if err != nil {
		t.Fatalf("Retry = %v, want the second attempt to start", err)
	}
	if len(attempts) != 2 {
		t.Fatalf("%d attempts, want 2", len(attempts))
	}
	for _, p := range attempts[1] {
		for _, q := range attempts[0] {
			if p == q {
				t.Fatalf("the second attempt got port %d of the first", p)
			}
		}
	}
}

func TestRetryReturnsOtherErrorsAtOnce(t *testing.T) {
	fixed := Pick()
	if err := listen(t, fixed); err != nil {
		t.Fatal(err)
	}
	for name, fail := range map[string]func(pick func() int) error{
		"not a port":        func(pick func() int) error { pick(); return errors.New("no database") },
		"a port not picked": func(pick func() int) error { pick(); return listen(t, fixed) },
		"a longer port number": func(pick func() int) error {
			return fmt.Errorf("listen tcp 127.0.0.1:%d9: bind: address already in use", pick())
		},
	} {
		calls := 0
		err := Retry(3, func(pick func() int) error { calls++; return fail(pick) })
		if err == nil || calls != 1 {
			t.Errorf("%s: Retry = %v after %d calls, want the error after one", name, err, calls)
		}
	}
	calls := 0
	err := Retry(3, func(pick func() int) error {
		calls++
		return fmt.Errorf("start temporal server: Failed to start ringpop listener error=listen tcp 127.0.0.1:%d: bind: address already in use address=x", pick())
	})
	if err == nil || calls != 3 {
		t.Errorf("Retry = %v after %d calls, want the error after 3", err, calls)
	}
}
