package scaleout

import (
	"context"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/tests/prodshape"
	"github.com/paymentsd/paymentsd/worker"
	"github.com/paymentsd/paymentsd/workflows"
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
// replaced (the last release's are unversioned: this code's take their
// executions over as the worker deployment's current version), the last
// release's APIs still serving; then the APIs rolled one at a time. A
// session opened on the last release and paid on this one completes, and
// the reverse; the sessions started after the upgrade are pinned to this
// code's build and record no version marker. Then a next release's
// workers (this code built as v0.1.1) start beside them and take the new
// sessions, while a session opened before finishes on this code's
// workers, whose version then drains and which stop. Every payment is
// recorded once, every event reaches the merchant.
func TestAnUpgradeFromTheLastRelease(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	old, head := releaseBinary(t, ctx), headBinary(t, ctx)
	next := nextReleaseBinary(t, ctx, "v0.1.1")
	headBuild, nextBuild := buildID(t, head), buildID(t, next)
	const n = 8
	// Sessions of a minute with no late-payment window: a version's pinned
	// sessions end, and it drains, within the test (its drain is the wait
	// for the last of them to expire). A minute is three times what the
	// steps between a session's opening and its payment take here.
	sh := startShapeOf(t, ctx, 1000, n, old, func(p *payment.Project) { p.LatePaymentWindow = 0 }, "SESSION_LIFETIME=1m")
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
	tc, err := client.Dial(client.Options{HostPort: sh.Temporal.Address, Namespace: sh.Temporal.Namespace})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	deployment := tc.WorkerDeploymentClient().GetHandle(worker.DeploymentName)
	current := func() string {
		d, err := deployment.Describe(ctx, client.WorkerDeploymentDescribeOptions{})
		if err != nil || d.Info.RoutingConfig.CurrentVersion == nil {
			return ""
		}
		return d.Info.RoutingConfig.CurrentVersion.BuildID
	}

	// The last release on this schema: one session paid and completed,
	// two opened and left for later.
	for range 3 {
		openOn(sh.APIs[0])
	}
	pay(0)
	waitFor(t, ctx, "the last release completing a session on this schema", func() bool { return completed(sh.APIs[1], 0) })

	// The workers replaced: the last release's stopped, this code's
	// started; their version becomes the deployment's current one.
	for i, w := range sh.Workers {
		must(t, w.Stop())
		sh.Workers[i] = startWorker(t, sh, head, fmt.Sprintf("worker%d-new", i+1))
	}
	waitFor(t, ctx, "this code's version current", func() bool { return current() == headBuild })
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
	// Every session that ran since is now this code's: those the last
	// release started moved to it at their next task (session 0, completed
	// on the last release, has had none: it waits for its expiry), those
	// started since are pinned to it from their start, at the version this
	// code starts sessions at, without a marker.
	for i := 1; i < len(open); i++ {
		pinnedTo(t, ctx, tc, open[i].id, headBuild)
	}
	for _, s := range open[3:] {
		noVersionMarker(t, ctx, tc, s.id)
	}

	// The next release beside this one: its workers start, their version
	// becomes current and takes the new sessions; a session opened before
	// stays on this code's workers and completes there.
	openOn(sh.APIs[0]) // 6, pinned to this code's version
	for i := range 2 {
		sh.Workers = append(sh.Workers, startWorker(t, sh, next, fmt.Sprintf("worker%d-next", i+1)))
	}
	waitFor(t, ctx, "the next release's version current", func() bool { return current() == nextBuild })
	pay(6)
	openOn(sh.APIs[1]) // 7, pinned to the next release's version
	pay(7)
	waitFor(t, ctx, "the sessions opened around the next release completed", func() bool {
		return completed(sh.APIs[0], 6) && completed(sh.APIs[1], 7)
	})
	pinnedTo(t, ctx, tc, open[6].id, headBuild)
	pinnedTo(t, ctx, tc, open[7].id, nextBuild)
	noVersionMarker(t, ctx, tc, open[7].id)

	// This code's version drains as its sessions end; then its workers
	// stop, and the next release's carry on alone.
	waitFor(t, ctx, "this code's version drained", func() bool {
		d, err := deployment.DescribeVersion(ctx, client.WorkerDeploymentDescribeVersionOptions{BuildID: headBuild})
		return err == nil && d.Info.DrainageInfo != nil && d.Info.DrainageInfo.DrainageStatus == client.WorkerDeploymentVersionDrainageStatusDrained
	})
	for _, w := range sh.Workers[:2] {
		must(t, w.Stop())
	}
	// Drained: every session of this code's version (all but the last,
	// the next release's, which may still be open) has ended.
	for i := range open[:len(open)-1] {
		if d := describe(t, ctx, tc, open[i].id); d.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
			t.Errorf("session %d's workflow is %s once its version drained; want completed", i, d.GetWorkflowExecutionInfo().GetStatus())
		}
	}

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

// nextReleaseBinary builds this code as the release named, standing for
// the release after it.
func nextReleaseBinary(t *testing.T, ctx context.Context, release string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "paymentsd-"+release)
	build := exec.CommandContext(ctx, "go", "build", "-o", bin,
		"-ldflags", "-X github.com/paymentsd/paymentsd/internal/version.Version="+release, "github.com/paymentsd/paymentsd/cmd/paymentsd")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", release, err, out)
	}
	return bin
}

// buildID is the build ID bin's workers give their version, read from
// `paymentsd version` ("paymentsd v0.1.0 (revision …)").
func buildID(t *testing.T, bin string) string {
	t.Helper()
	out, err := exec.Command(bin, "version").Output()
	m := regexp.MustCompile(`paymentsd (\S+) \(revision (\S+)\)`).FindStringSubmatch(string(out))
	if err != nil || m == nil {
		t.Fatalf("%s version: %v %q", bin, err, out)
	}
	return workflows.BuildID(m[1], m[2])
}

func describe(t *testing.T, ctx context.Context, tc client.Client, sessionID string) *workflowservice.DescribeWorkflowExecutionResponse {
	t.Helper()
	d, err := tc.DescribeWorkflowExecution(ctx, workflows.CheckoutSessionWorkflowID(sessionID), "")
	if err != nil {
		t.Fatalf("describe session %s's workflow: %v", sessionID, err)
	}
	return d
}

// pinnedTo checks that a session's workflow is pinned to the version of
// build buildID of the engine's worker deployment.
func pinnedTo(t *testing.T, ctx context.Context, tc client.Client, sessionID, buildID string) {
	t.Helper()
	v := describe(t, ctx, tc, sessionID).GetWorkflowExecutionInfo().GetVersioningInfo()
	if v.GetBehavior() != enumspb.VERSIONING_BEHAVIOR_PINNED || v.GetDeploymentVersion().GetDeploymentName() != worker.DeploymentName ||
		v.GetDeploymentVersion().GetBuildId() != buildID {
		t.Errorf("session %s's workflow: %s on %s; want pinned to %s:%s", sessionID, v.GetBehavior(), v.GetDeploymentVersion(), worker.DeploymentName, buildID)
	}
}

// noVersionMarker checks that a session's workflow recorded no
// GetVersion marker: its version came from its worker deployment version.
func noVersionMarker(t *testing.T, ctx context.Context, tc client.Client, sessionID string) {
	t.Helper()
	it := tc.GetWorkflowHistory(ctx, workflows.CheckoutSessionWorkflowID(sessionID), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e.GetEventType() == enumspb.EVENT_TYPE_MARKER_RECORDED && e.GetMarkerRecordedEventAttributes().GetMarkerName() == "Version" {
			t.Errorf("session %s's workflow recorded a version marker (event %d)", sessionID, e.GetEventId())
		}
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
