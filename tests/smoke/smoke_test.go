// Package smoke runs the README's first command from a clean clone: the
// dev stack comes up, the curl it prints works, and it shuts down cleanly
// on SIGINT.
package smoke

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
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

	"github.com/paymentsd/paymentsd/dev/freeport"
	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
)

func TestDevCommandFromCleanClone(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	// A folder only its owner can read, as a home folder is: under root the
	// private Postgres runs as the postgres user, which cannot enter it.
	dir, err := os.MkdirTemp("", "paymentsd-smoke-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	clone := filepath.Join(dir, "clone")
	defer func() {
		// A cluster kept outside the folder (see devstack/postgres) goes too.
		if target, err := os.Readlink(filepath.Join(clone, ".data", "postgres")); err == nil {
			os.RemoveAll(target)
		}
		os.RemoveAll(dir)
	}()
	if out, err := exec.Command("git", "clone", "--quiet", root, clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}

	// Ports below the ephemeral range (see dev/freeport): the dev stack
	// binds them only after a build of minutes.
	api := freeport.Pick()
	// A newcomer's environment: no database, Temporal where it goes by
	// default (make test runs the other test packages' Temporal on
	// Postgres, through TEMPORAL_PERSISTENCE).
	env := append(os.Environ(), fmt.Sprintf("HTTP_ADDR=127.0.0.1:%d", api), "DATABASE_URL=", "TEMPORAL_PERSISTENCE=")
	cmd := exec.Command("./dev/scripts/dev.sh",
		"--postgres-port", fmt.Sprint(freeport.Pick()), "--temporal-port", fmt.Sprint(freeport.Pick()),
		"--ui-port", fmt.Sprint(freeport.Pick()), "--chain-addr", fmt.Sprintf("127.0.0.1:%d", freeport.Pick()),
		"--receiver-addr", fmt.Sprintf("127.0.0.1:%d", freeport.Pick()), "--block-interval", "500ms")
	cmd.Dir = clone
	cmd.Env = env
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	started := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()

	// Wait for the ready banner and read what it prints: the Postgres URL,
	// where Temporal keeps its data, and the curl.
	lines := make(chan string, 100)
	go func() {
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			lines <- s.Text()
		}
		close(lines)
	}()
	curl := regexp.MustCompile(`curl -s -X POST (\S+/api/v1/checkout/sessions) .* -d '(\{"paymentPlanId":"plan_[a-z0-9]+"\})'`)
	pgLine := regexp.MustCompile(`^\s+Postgres:\s+(\S+)$`)
	temporalLine := regexp.MustCompile(`^\s+Temporal data:\s+(\w+)`)
	dashLine := regexp.MustCompile(`^\s+Dashboard:\s+(\S+)$`)
	loginLine := regexp.MustCompile(`^\s+sign in as (\S+), password (\S+)$`)
	var url, body, databaseURL, temporalData, dashboard, email, password string
	ready := false
	deadline := time.After(10 * time.Minute) // a cold build of the dev binary is slow on 2 cores
	for url == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the dev stack exited before printing its curl:\n%s", tail(stderr.String()))
			}
			ready = ready || strings.Contains(l, "paymentsd dev is ready")
			if m := pgLine.FindStringSubmatch(l); ready && m != nil {
				databaseURL = m[1]
			}
			if m := temporalLine.FindStringSubmatch(l); ready && m != nil {
				temporalData = m[1]
			}
			if m := dashLine.FindStringSubmatch(l); ready && m != nil {
				dashboard = m[1]
			}
			if m := loginLine.FindStringSubmatch(l); ready && m != nil {
				email, password = m[1], m[2]
			}
			if m := curl.FindStringSubmatch(l); ready && m != nil {
				url, body = m[1], m[2]
			}
		case <-deadline:
			t.Fatal("the dev stack did not come up")
		}
	}
	t.Logf("ready %s after start (build included)", time.Since(started).Round(time.Second))
	if temporalData != "SQLite" {
		t.Errorf("the dev stack keeps Temporal's data in %q, want SQLite by default", temporalData)
	}
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
	var session struct {
		Data struct{ Token string } `json:"data"`
	}
	if res.StatusCode != http.StatusCreated || json.Unmarshal(reply, &session) != nil || session.Data.Token == "" {
		t.Fatalf("the printed curl: %d %s", res.StatusCode, reply)
	}

	// The printed dashboard serves its page, and the printed login signs
	// in.
	if res, err := http.Get(dashboard); err != nil || res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("the printed dashboard %q: %v %v", dashboard, res, err)
	} else {
		res.Body.Close()
	}
	login, _ := json.Marshal(map[string]string{"email": email, "password": password})
	if res, err := http.Post(strings.TrimSuffix(dashboard, "/dashboard/")+"/api/v1/auth/login", "application/json", bytes.NewReader(login)); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("the printed dev login (%s): %v %v", email, res, err)
	} else {
		res.Body.Close()
	}

	// The admin commands: with the printed database URL pasted as it is,
	// and with none from the project folder, where they find the dev
	// stack's database by themselves.
	bin := filepath.Join(clone, "bin", "paymentsd-dev")
	for name, dbURL := range map[string]string{"printed URL": databaseURL, "no DATABASE_URL": ""} {
		admin := exec.Command(bin, "admin", "create-project", "--name", "Smoke "+name, "--json")
		admin.Dir = clone
		admin.Env = append(env, "DATABASE_URL="+dbURL)
		out, err := admin.Output()
		if err != nil || !strings.Contains(string(out), `"sandboxKey":"svc_test_`) {
			t.Errorf("admin create-project with %s (%q): %v\n%s", name, dbURL, err, out)
		}
	}

	// `dev pay` with the dev stack's configuration (HTTP_ADDR) pays the
	// session, which completes.
	pay := exec.Command(bin, "dev", "pay", session.Data.Token)
	pay.Dir = clone
	pay.Env = env
	if out, err := pay.CombinedOutput(); err != nil {
		t.Fatalf("dev pay: %v\n%s", err, out)
	}
	testwait.Until(t, 90*time.Second, func() (bool, string) {
		res, err := http.Get(url + "/" + session.Data.Token)
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Data struct{ Status string } `json:"data"`
		}
		_ = json.NewDecoder(res.Body).Decode(&got)
		res.Body.Close()
		return got.Data.Status == "completed", fmt.Sprintf("the session paid with dev pay is %q", got.Data.Status)
	})

	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the dev stack did not exit cleanly on SIGINT: %v\n%s", err, tail(stderr.String()))
		}
	case <-time.After(90 * time.Second):
		t.Fatal("the dev stack did not stop within 90 s of SIGINT")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := (&net.Dialer{}).DialContext(ctx, "tcp", fmt.Sprintf("127.0.0.1:%d", api)); err == nil {
		t.Fatal("the API still listens after shutdown")
	}
	if _, err := os.Stat(filepath.Join(clone, ".data", "postgres", "postmaster.pid")); err == nil {
		t.Fatal("the private Postgres still runs after shutdown")
	}
}

// tail is the end of a process's log, for a failure message.
func tail(s string) string {
	if len(s) > 4000 {
		return s[len(s)-4000:]
	}
	return s
}
