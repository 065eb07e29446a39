// Package tsclient runs the TypeScript client's tests (clients/typescript,
// under Node's test runner) against the whole engine.
package tsclient

import (
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/paymentsd/paymentsd/api"
	"github.com/paymentsd/paymentsd/dev/devstack"
	"github.com/paymentsd/paymentsd/tests/stacktest"
)

func TestTypeScriptClient(t *testing.T) {
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed: the TypeScript client is tested where Node.js is (.ci/run installs it)")
	}
	dir, err := filepath.Abs("../../client/typescript")
	if err != nil {
		t.Fatal(err)
	}
	stack, stop, err := stacktest.Start(devstack.StackConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	e := stack.Service(0)
	a, err := api.New(e, api.Config{PublicURL: "http://pay.example.test"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.Handler())
	defer func() { srv.Close(); a.Close() }()
	p, err := stacktest.Project(e, "TypeScript shop")
	if err != nil {
		t.Fatal(err)
	}
	// The client's payout batches pay from a treasury the project proved.
	if err := stacktest.ProveAddress(stack.Store, p.Project.ID, "0x00000000000000000000000000000000000000aa"); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) {
		cmd := exec.Command("npm", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PAYMENTSD_URL="+srv.URL, "PAYMENTSD_API_KEY="+p.SandboxKey, "PAYMENTSD_PROJECT="+p.Project.ID)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("npm %v: %v\n%s", args, err, out)
		}
		t.Logf("npm %v:\n%s", args, out)
	}
	if !installed(dir) {
		run("ci", "--ignore-scripts", "--no-audit", "--no-fund")
	}
	run("test")
}

// installed says whether node_modules was installed from the current
// package-lock.json (npm records what it installed in
// node_modules/.package-lock.json), as `make generate` checks too.
func installed(dir string) bool {
	lock, err := os.Stat(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		return false
	}
	done, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json"))
	return err == nil && done.ModTime().After(lock.ModTime())
}
