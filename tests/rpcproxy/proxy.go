// Package rpcproxy is a flaky HTTP proxy in front of a JSON-RPC node, for
// the reconciliation run: it forwards requests, or answers some with errors,
// or holds some until the caller gives up, or stops listening altogether,
// which is what a stopped node looks like to a client (connection refused).
// It can also lie (SetLie, lie.go): rewrite the node's answers the ways a
// lying or broken node would, for the tests of the engine's checks.
package rpcproxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
)

// Stats counts what the proxy did.
type Stats struct {
	Requests  int64 // requests received while up
	Forwarded int64 // passed to the node
	Errors    int64 // answered with an injected error
	Timeouts  int64 // held, then dropped without an answer
	Outages   int   // times the proxy went down
	Down      time.Duration
	Lies      int64 // answers rewritten by a lie
}

// Proxy is a running proxy. Its URL stays the same across Down and Up.
type Proxy struct {
	URL      string
	addr     string
	upstream string
	client   *http.Client

	mu          sync.Mutex
	srv         *http.Server
	rng         *rand.Rand
	errorRate   float64
	timeoutRate float64
	hold        time.Duration
	down        bool
	downSince   time.Time
	outages     int
	downFor     time.Duration
	release     chan struct{} // closed to let held requests go (Down, Close)
	// lie is told about the blocks from lieFrom on; forged holds the
	// blocks MerkleRoot forged, by their hash.
	lie     Lie
	lieFrom uint64
	forged  map[string]forgedBlock

	requests, forwarded, errs, timeouts, lies atomic.Int64
}

// Start starts a proxy on addr (a free loopback port when empty) that
// forwards to upstream, an http:// JSON-RPC URL. seed makes its choice of
// which requests fail repeatable.
func Start(upstream, addr string, seed uint64) (*Proxy, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("rpcproxy: listen: %w", err)
	}
	p := &Proxy{
		URL:      "http://" + ln.Addr().String(),
		addr:     ln.Addr().String(),
		upstream: upstream,
		client:   &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}},
		rng:      rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		release:  make(chan struct{}),
	}
	p.serve(ln)
	return p, nil
}

func (p *Proxy) serve(ln net.Listener) {
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go func(s *http.Server) { _ = s.Serve(ln) }(p.srv)
}

// SetFaults sets the share of requests answered with an error and the share
// held for hold and then dropped unanswered. Zero rates make the proxy a
// plain pass-through.
func (p *Proxy) SetFaults(errorRate, timeoutRate float64, hold time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.errorRate, p.timeoutRate, p.hold = errorRate, timeoutRate, hold
}

// Down stops listening and closes every open connection: until Up, clients
// get connection refused, as from a stopped node.
func (p *Proxy) Down() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		return nil
	}
	p.down, p.downSince = true, time.Now()
	p.outages++
	close(p.release)
	p.release = make(chan struct{})
	return p.srv.Close()
}

// Up listens again on the same address.
func (p *Proxy) Up() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.down {
		return nil
	}
	var ln net.Listener
	var err error
	if !testwait.For(5*time.Second, func() bool { ln, err = net.Listen("tcp", p.addr); return err == nil }) {
		return fmt.Errorf("rpcproxy: listen again on %s: %w", p.addr, err)
	}
	p.down = false
	p.downFor += time.Since(p.downSince)
	p.serve(ln)
	return nil
}

// Close stops the proxy for good.
func (p *Proxy) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	close(p.release)
	p.release = make(chan struct{})
	if p.down {
		p.downFor += time.Since(p.downSince)
		p.down = false
		return nil
	}
	p.down = true // Up must not start it again
	p.downSince = time.Now()
	return p.srv.Close()
}

// Stats returns the counts so far.
func (p *Proxy) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	down := p.downFor
	if p.down && p.outages > 0 {
		down += time.Since(p.downSince)
	}
	return Stats{Requests: p.requests.Load(), Forwarded: p.forwarded.Load(), Errors: p.errs.Load(),
		Timeouts: p.timeouts.Load(), Outages: p.outages, Down: down, Lies: p.lies.Load()}
}

type fault int

const (
	pass fault = iota
	fail
	hang
)

// pick decides a request's fate.
func (p *Proxy) pick() (fault, time.Duration, chan struct{}, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.rng.Float64()
	asJSON := p.rng.IntN(2) == 0
	switch {
	case r < p.errorRate:
		return fail, 0, nil, asJSON
	case r < p.errorRate+p.timeoutRate:
		return hang, p.hold, p.release, false
	}
	return pass, 0, nil, false
}

// ServeHTTP forwards one request, or fails it.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.requests.Add(1)
	body, err := io.ReadAll(io.LimitReader(r.Body, 32<<20))
	if err != nil {
		http.Error(w, "rpcproxy: read request", http.StatusBadRequest)
		return
	}
	f, hold, release, asJSON := p.pick()
	switch f {
	case fail:
		p.errs.Add(1)
		if asJSON {
			writeRPCError(w, body)
		} else {
			http.Error(w, "rpcproxy: injected error", http.StatusServiceUnavailable)
		}
		return
	case hang:
		p.timeouts.Add(1)
		t := time.NewTimer(hold)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
		case <-release:
		}
		// Drop the connection without an answer, as a node that hung
		// would leave the client to its own timeout.
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler)
	}
	if lie, from := p.lying(); lie != Honest && p.answerLying(w, r, body, lie, from) {
		return
	}
	req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, p.upstream, bytes.NewReader(body))
	if err != nil {
		http.Error(w, "rpcproxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	req.Header.Set("Content-Type", "application/json")
	if auth := r.Header.Get("Authorization"); auth != "" {
		req.Header.Set("Authorization", auth) // a Bitcoin node's credentials
	}
	resp, err := p.client.Do(req)
	if err != nil {
		http.Error(w, "rpcproxy: upstream: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	p.forwarded.Add(1)
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		w.Header().Set("Content-Type", ct)
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// writeRPCError answers a JSON-RPC request (or batch) with an internal
// error for each call, as a node in trouble does.
func writeRPCError(w http.ResponseWriter, body []byte) {
	type call struct {
		ID json.RawMessage `json:"id"`
	}
	answer := func(id json.RawMessage) map[string]any {
		if len(id) == 0 {
			id = json.RawMessage("null")
		}
		return map[string]any{"jsonrpc": "2.0", "id": id,
			"error": map[string]any{"code": -32603, "message": "rpcproxy: injected error"}}
	}
	w.Header().Set("Content-Type", "application/json")
	var batch []call
	if err := json.Unmarshal(body, &batch); err == nil {
		out := make([]map[string]any, len(batch))
		for i, c := range batch {
			out[i] = answer(c.ID)
		}
		_ = json.NewEncoder(w).Encode(out)
		return
	}
	var one call
	if err := json.Unmarshal(body, &one); err != nil && !errors.Is(err, io.EOF) {
		http.Error(w, "rpcproxy: bad request", http.StatusBadRequest)
		return
	}
	_ = json.NewEncoder(w).Encode(answer(one.ID))
}
