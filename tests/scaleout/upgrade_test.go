package scaleout

import (
	"context"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/paymentsd/paymentsd/tests/prodshape"
)

// lastRelease is the latest release (CHANGELOG.md) and its commit, whose
// processes must run on this code's schema and beside this code's.
var lastRelease = struct{ version, commit string }{"v0.1.0", "836115e5000e6d32bdaaf852cd27404bff74987b"}

// releaseBinary builds the production binary of the last release from its
// commit in this clone's history.
func releaseBinary(t *testing.T, ctx context.Context) string {
	t.Helper()
	if err := exec.Command("git", "cat-file", "-e", lastRelease.commit+"^{commit}").Run(); err != nil {
		if out, _ := exec.Command("git", "rev-parse", "--is-shallow-repository").Output(); strings.TrimSpace(string(out)) == "true" {
			t.Skipf("this shallow clone lacks %s's commit %s: a full clone runs this test", lastRelease.version, lastRelease.commit)
		}
		t.Fatalf("%s's commit %s is not in this clone: %v", lastRelease.version, lastRelease.commit, err)
	}
	dir := t.TempDir()
	archive := filepath.Join(dir, "release.tar")
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatal(err)
	}
	git := exec.Command("git", "archive", "-o", archive, lastRelease.commit)
	git.Dir = strings.TrimSpace(string(top))
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("git archive %s: %v\n%s", lastRelease.commit, err, out)
	}
	src := filepath.Join(dir, "src")
	if err := os.Mkdir(src, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("tar", "-xf", archive, "-C", src).CombinedOutput(); err != nil {
		t.Fatalf("tar: %v\n%s", err, out)
	}
	bin := filepath.Join(dir, "paymentsd-"+lastRelease.version)
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/paymentsd")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", lastRelease.version, err, out)
	}
	if out, err := exec.Command(bin, "version").CombinedOutput(); err != nil || !strings.Contains(string(out), lastRelease.version) {
		t.Fatalf("%s version: %v %s", bin, err, out)
	}
	return bin
}

// An upgrade from the last release as docs/operations.md tells it, with
// payments in flight at every step: the new schema migrated first, under
// the last release's APIs and workers (they run on it); the workers
// replaced (stopped, then the new ones started), the last release's APIs
// still serving; then the APIs rolled one at a time. A session opened on
// the last release and paid on this one completes, and the reverse: every
// payment is recorded once, every event reaches the merchant.
func TestAnUpgradeFromTheLastRelease(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	old, head := releaseBinary(t, ctx), headBinary(t, ctx)
	const n = 6
	sh := startShape(t, ctx, 1000, n, old)
	receiver := newReceiver(t)
	planID := merchant(t, sh, sh.APIs[0], receiver, "*")
	type opened struct{ token, id, address, due string }
	var open []opened
	openOn := func(api *prodshape.Process) {
		r := call(t, api, http.MethodPost, "/api/v1/checkout/sessions", "", map[string]any{"paymentPlanId": planID})
		if r.Status != http.StatusCreated {
			t.Fatalf("open a session: %d %s", r.Status, r.Raw)
		}
		due := r.Data["paymentOptions"].([]any)[0].(map[string]any)["amountBaseUnits"].(string)
		open = append(open, opened{r.Data["token"].(string), r.Data["id"].(string), r.Data["depositAddress"].(string), due})
	}
	pay := func(i int) {
		due, _ := new(big.Int).SetString(open[i].due, 10)
		if _, err := sh.Chain.TransferToken(ctx, sh.Chain.Accounts[i], common.HexToAddress(open[i].address), due); err != nil {
			t.Fatalf("pay session %d: %v", i, err)
		}
	}
	completed := func(api *prodshape.Process, i int) bool {
		r := call(t, api, http.MethodGet, "/api/v1/checkout/sessions/"+open[i].token, "", nil)
		return r.Status == http.StatusOK && r.Data["status"] == "completed"
	}

	// The last release on this schema: one session paid and completed,
	// two opened and left for later.
	for range 3 {
		openOn(sh.APIs[0])
	}
	pay(0)
	waitFor(t, ctx, "the last release completing a session on this schema", func() bool { return completed(sh.APIs[1], 0) })

	// The workers replaced: the last release's stopped, this code's started.
	for i, w := range sh.Workers {
		must(t, w.Stop())
		sh.Workers[i] = startWorker(t, sh, head, fmt.Sprintf("worker%d-new", i+1))
	}
	pay(1) // opened on the last release, paid on this code's workers
	openOn(sh.APIs[1])
	pay(3) // opened on the last release's API, run by this code's workers

	// The APIs rolled one at a time; the other serves meanwhile.
	for i, a := range sh.APIs {
		must(t, a.Stop())
		sh.APIs[i] = startAPI(t, ctx, sh, head, fmt.Sprintf("api%d-new", i+1))
		openOn(sh.APIs[i])
	}
	pay(2)
	pay(4)
	pay(5)

	waitFor(t, ctx, "every session completed", func() bool {
		for i := range open {
			if !completed(sh.APIs[i%2], i) {
				return false
			}
		}
		return true
	})
	for _, s := range open {
		var txs, finalized int
		if err := sh.DB.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE status = 'finalized') FROM transactions
			WHERE checkout_session_id = $1`, s.id).Scan(&txs, &finalized); err != nil {
			t.Fatal(err)
		}
		if txs != 1 || finalized != 1 {
			t.Errorf("session %s: %d transactions, %d finalized; want one payment recorded once, final", s.id, txs, finalized)
		}
	}
	waitDelivered(t, ctx, sh, receiver)
	for _, s := range open {
		if !receiver.Got(s.id, "checkout.session.completed") {
			t.Errorf("no checkout.session.completed delivered for %s", s.id)
		}
	}
	if n := receiver.BadSignatures(); n > 0 {
		t.Errorf("%d deliveries failed signature verification", n)
	}
}

// A worker stopped by SIGTERM (a deploy, Kubernetes scaling down) takes no
// new task and lets its running activities finish: a webhook delivery the
// merchant's server takes seconds to answer is answered, recorded once and
// never sent again, and the worker exits as soon as it is done.
func TestAStoppedWorkerFinishesItsActivities(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	head := headBinary(t, ctx)
	sh := startShape(t, ctx, 1000, 1, head)
	const hold = 3 * time.Second
	receiver := newReceiver(t)
	receiver.Hold(hold)
	planID := merchant(t, sh, sh.APIs[0], receiver, "checkout.session.created")
	r := call(t, sh.APIs[0], http.MethodPost, "/api/v1/checkout/sessions", "", map[string]any{"paymentPlanId": planID})
	if r.Status != http.StatusCreated {
		t.Fatalf("open a session: %d %s", r.Status, r.Raw)
	}
	waitFor(t, ctx, "the delivery held by the merchant's server", func() bool { return receiver.Holding() > 0 })

	// Both workers stopped while the delivery is in flight.
	stopped := time.Now()
	var took [2]time.Duration
	done := make(chan int, 2)
	for i, w := range sh.Workers {
		go func() {
			_ = w.Cmd.Process.Signal(syscall.SIGTERM)
			<-w.Done
			took[i] = time.Since(stopped)
			done <- i
		}()
	}
	<-done
	<-done
	for i, w := range sh.Workers {
		if err := w.Exit(); err != nil {
			t.Errorf("worker %d stopped by SIGTERM: %v, want exit 0", i+1, err)
		}
	}
	slowest := max(took[0], took[1])
	if slowest < hold-time.Second || slowest > hold+15*time.Second {
		t.Errorf("the workers exited %v and %v after SIGTERM; want the one delivering to wait for the answer (%v), and no longer", took[0], took[1], hold)
	}
	var attempts, code int
	if err := sh.DB.QueryRow(ctx, `SELECT count(*), coalesce(max(a.status_code), 0) FROM webhook_attempts a
		JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.project_id = $1`, sh.Project.Project.ID).Scan(&attempts, &code); err != nil {
		t.Fatal(err)
	}
	if attempts != 1 || code != http.StatusNoContent {
		t.Errorf("the delivery in flight at SIGTERM: %d attempts recorded, the last answered %d; want one, answered 204", attempts, code)
	}
	if got, cut := receiver.Deliveries(), receiver.Cut(); got != 1 || cut != 0 {
		t.Errorf("the merchant's server got %d deliveries, %d cut off; want one, answered", got, cut)
	}
	t.Logf("SIGTERM to exit: %v and %v, a delivery held %v in flight", took[0].Round(10*time.Millisecond), took[1].Round(10*time.Millisecond), hold)

	// The delivery is finished by the workers that follow, and nothing is
	// sent again.
	sh.Workers[0] = startWorker(t, sh, head, "worker-after")
	waitFor(t, ctx, "the delivery marked delivered", func() bool {
		var status string
		_ = sh.DB.QueryRow(ctx, `SELECT status FROM webhook_deliveries WHERE project_id = $1`, sh.Project.Project.ID).Scan(&status)
		return status == "delivered"
	})
	second := call(t, sh.APIs[0], http.MethodPost, "/api/v1/checkout/sessions", "", map[string]any{"paymentPlanId": planID})
	if second.Status != http.StatusCreated {
		t.Fatalf("open a session: %d %s", second.Status, second.Raw)
	}
	waitFor(t, ctx, "the next session's event delivered", func() bool { return receiver.Got(second.Data["id"].(string), "checkout.session.created") })
	if got := receiver.Deliveries(); got != 2 {
		t.Errorf("the merchant's server got %d deliveries of 2 events; want each once", got)
	}
}
