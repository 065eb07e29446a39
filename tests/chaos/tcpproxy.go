package chaos

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/paymentsd/paymentsd/dev/freeport"
	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
)

// tcpProxy forwards TCP connections from its address to a target: it
// stands between the worker and Temporal's frontend, so that the worker
// alone can be cut off (worker-cut) while the API, which dials the
// frontend itself, still reaches it.
type tcpProxy struct {
	Addr   string
	target string

	mu    sync.Mutex
	ln    net.Listener // nil while cut
	conns map[net.Conn]bool
	wg    sync.WaitGroup
}

func startTCPProxy(target string) (*tcpProxy, error) {
	p := &tcpProxy{target: target, conns: map[net.Conn]bool{}}
	// A port below the kernel's ephemeral range (freeport), so that no
	// outgoing connection takes it while the proxy is cut.
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", freeport.Pick()))
	if err != nil {
		return nil, err
	}
	p.Addr = ln.Addr().String()
	p.serve(ln)
	return p, nil
}

func (p *tcpProxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.forward(c)
		}
	}()
}

// forward pipes c to a new connection to the target, both ways, until
// either side closes or the proxy cuts them.
func (p *tcpProxy) forward(c net.Conn) {
	up, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		c.Close()
		return
	}
	if !p.track(c, up) {
		return
	}
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(up, c)
	go pipe(c, up)
	<-done
	c.Close()
	up.Close()
	<-done
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, up)
	p.mu.Unlock()
}

// track records a pair of connections to cut; false (both closed) when
// the proxy was cut meanwhile.
func (p *tcpProxy) track(c, up net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln == nil {
		c.Close()
		up.Close()
		return false
	}
	p.conns[c], p.conns[up] = true, true
	return true
}

// Cut stops listening (new connections are refused) and drops every
// connection through the proxy.
func (p *tcpProxy) Cut() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln == nil {
		return errors.New("already cut")
	}
	err := p.ln.Close()
	p.ln = nil
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
	return err
}

// Restore listens again on the same address.
func (p *tcpProxy) Restore() error {
	var ln net.Listener
	var err error
	// The address was the proxy's a moment ago; retry briefly should the
	// kernel not have released it yet.
	if testwait.For(5*time.Second, func() bool { ln, err = net.Listen("tcp", p.Addr); return err == nil }) {
		p.serve(ln)
		return nil
	}
	return err
}

// Close stops the proxy for good.
func (p *tcpProxy) Close() {
	p.mu.Lock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}
