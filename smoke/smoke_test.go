// Package smoke runs the README's first command from a clean clone: the
// dev stack comes up, the curl it prints works, and it shuts down cleanly
// on SIGINT.
package smoke

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func TestDevCommandFromCleanClone(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..")
	// A world-readable folder: the private Postgres cluster runs as the
	// postgres user when the tests run as root.
	dir, err := os.MkdirTemp("", "paymentsd-smoke-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	clone := filepath.Join(dir, "clone")
	if out, err := exec.Command("git", "clone", "--quiet", root, clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}

	api := freePort(t)
	cmd := exec.Command("./scripts/dev.sh", "--data", filepath.Join(dir, "data"),
		"--postgres-port", fmt.Sprint(freePort(t)), "--temporal-port", fmt.Sprint(freePort(t)),
		"--ui-port", fmt.Sprint(freePort(t)), "--chain-addr", fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		"--receiver-addr", fmt.Sprintf("127.0.0.1:%d", freePort(t)), "--block-interval", "500ms")
	cmd.Dir = clone
	cmd.Env = append(os.Environ(), fmt.Sprintf("HTTP_ADDR=127.0.0.1:%d", api), "DATABASE_URL=")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	started := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()

	// Wait for the ready banner and read the curl it prints.
	lines := make(chan string, 100)
	go func() {
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			lines <- s.Text()
		}
		close(lines)
	}()
	curl := regexp.MustCompile(`curl -s -X POST (\S+/api/v1/checkout/sessions) .* -d '(\{"paymentPlanId":"plan_[a-z0-9]+"\})'`)
	var url, body string
	ready := false
	deadline := time.After(10 * time.Minute) // a cold build of the dev binary is slow on 2 cores
	for url == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the dev stack exited before printing its curl")
			}
			ready = ready || strings.Contains(l, "paymentsd dev is ready")
			if m := curl.FindStringSubmatch(l); ready && m != nil {
				url, body = m[1], m[2]
			}
		case <-deadline:
			t.Fatal("the dev stack did not come up")
		}
	}
	t.Logf("ready %s after start (build included)", time.Since(started).Round(time.Second))
	go func() {
		for range lines { // keep draining
		}
	}()

	res, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	reply, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusCreated || !strings.Contains(string(reply), `"token"`) {
		t.Fatalf("the printed curl: %d %s", res.StatusCode, reply)
	}

	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the dev stack did not exit cleanly on SIGINT: %v", err)
		}
	case <-time.After(90 * time.Second):
		t.Fatal("the dev stack did not stop within 90 s of SIGINT")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := (&net.Dialer{}).DialContext(ctx, "tcp", fmt.Sprintf("127.0.0.1:%d", api)); err == nil {
		t.Fatal("the API still listens after shutdown")
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "postgres", "postmaster.pid")); err == nil {
		t.Fatal("the private Postgres still runs after shutdown")
	}
}
