// Package redistest starts a redis-server of a test's own, for the tests
// of the rate limits shared through Redis. It is one of the test kits in
// internal/testkit, which use nothing of the engine above internal/.
package redistest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
)

// Server is a redis-server of the test's own, on a free port, without
// persistence; it stops when the test ends.
type Server struct {
	Addr string
}

// Start starts a redis-server for tb. A machine without one fails the
// test: what needs Redis is tested against the real server or not at all.
func Start(tb testing.TB) *Server {
	tb.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		tb.Fatalf("redis-server is not on PATH: install it (Debian: apt-get install redis-server) to run this test")
	}
	var lastErr error
	for range 3 { // the free port may be taken between its probe and the server's bind
		srv, err := tryStartRedis(tb, bin)
		if err == nil {
			return srv
		}
		lastErr = err
	}
	tb.Fatalf("start redis-server: %v", lastErr)
	return nil
}

func tryStartRedis(tb testing.TB, bin string) (*Server, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()

	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", tb.TempDir())
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Kill()
		<-exited
	}

	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	client := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer client.Close()
	var exit, pingErr error
	up := testwait.For(10*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		pingErr = client.Ping(ctx).Err()
		cancel()
		if pingErr == nil {
			return true
		}
		select {
		case exit = <-exited:
			return true
		default:
			return false
		}
	})
	switch {
	case up && pingErr != nil:
		return nil, fmt.Errorf("redis-server exited (%v):\n%s", exit, out.String())
	case !up:
		stop()
		return nil, fmt.Errorf("redis-server on %s does not answer PING: %v\n%s", addr, pingErr, out.String())
	}
	tb.Cleanup(stop)
	return &Server{Addr: addr}, nil
}

// Client returns a new client of the server, closed when the test ends.
func (s *Server) Client(tb testing.TB) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// syncBuffer collects the server's output, written from exec's copying
// goroutine.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
