package core

import (
	"sync"
	"time"

	"github.com/paymentsd/paymentsd/internal/nodetrust"
)

// ReadyCache is the networks' state the chains area's Ready found last.
type ReadyCache struct {
	Mu       sync.Mutex // held while the nodes are asked: callers wait for one answer
	At       time.Time
	Networks []NetworkReadiness
}

// NetworkReadiness is one network's state: its head block, or that no RPC
// URL of it answers; and what the engine believes of its nodes (those set
// aside for a failed check or for disagreeing with the others, and
// whether they disagree with no majority).
type NetworkReadiness struct {
	Key   string
	Head  uint64
	Err   error
	Nodes nodetrust.Status
}
