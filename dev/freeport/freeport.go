// Package freeport picks TCP ports on 127.0.0.1 for servers that bind them
// themselves, later: the embedded Temporal server's services, and the
// ports a test hands to a process it starts.
//
// A port is picked below 32768, under the kernel's range of ephemeral
// ports (32768-60999 on Linux, 49152 and up elsewhere), so that no
// outgoing connection of this or another process takes it between the
// pick and the bind, as one may take a port the kernel handed out. It also
// fits the cluster_membership table, whose Postgres schema keeps a
// member's port in a smallint. A process never gets the same port twice,
// nor one it reserved: two servers of one process, each handed a port that
// was free when picked, would otherwise race for one of them. What is left
// is another process binding a picked port in that window; Retry starts a
// server again on fresh ports when that happens.
package freeport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
)

const low, high = 20000, 32768

var (
	mu    sync.Mutex
	taken = map[int]bool{}
)

// Pick returns a port that is free now and that this process has neither
// picked nor reserved before.
func Pick() int {
	mu.Lock()
	defer mu.Unlock()
	for {
		port := low + rand.IntN(high-low)
		if taken[port] {
			continue
		}
		if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			l.Close()
			taken[port] = true
			return port
		}
	}
}

// Reserve marks ports the process will bind, so that Pick hands none of
// them out.
func Reserve(ports ...int) {
	mu.Lock()
	defer mu.Unlock()
	for _, p := range ports {
		taken[p] = true
	}
}

// Retry calls start, at most attempts times, until it succeeds or fails
// for another reason than a port it picked (with the pick it is given)
// being in use by the time it bound it. It returns start's last error.
func Retry(attempts int, start func(pick func() int) error) error {
	var err error
	for range attempts {
		var picked []int
		err = start(func() int {
			p := Pick()
			picked = append(picked, p)
			return p
		})
		if err == nil || !takenFrom(err, picked) {
			return err
		}
	}
	return err
}

// takenFrom tells whether err reports one of the ports as in use: an
// "address already in use" error that names the port after a colon.
func takenFrom(err error, ports []int) bool {
	msg := err.Error()
	if !strings.Contains(msg, "address already in use") {
		return false
	}
	for _, p := range ports {
		s := ":" + strconv.Itoa(p)
		for i := strings.Index(msg, s); i >= 0; {
			end := i + len(s)
			if end == len(msg) || msg[end] < '0' || msg[end] > '9' {
				return true
			}
			next := strings.Index(msg[end:], s)
			if next < 0 {
				break
			}
			i = end + next
		}
	}
	return false
}
