package scaleout

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/testkit/redistest"
	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/tests/prodshape"
)

// headBinary builds this code's production binary, or names the one
// PAYMENTSD_BIN gives (another build, to compare).
func headBinary(t testing.TB, ctx context.Context) string {
	t.Helper()
	bin, err := prodshape.Build(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// startShape starts the production shape of the scale-out tests: two APIs
// and two workers, every process from bin, with Redis for the limits;
// strict is the customers' session creations allowed across both APIs,
// accounts the dev chain's funded payer accounts. It stops at the test's
// end, with the processes' logs in the test's output if it failed.
func startShape(t testing.TB, ctx context.Context, strict, accounts int, bin string, env ...string) *prodshape.Shape {
	t.Helper()
	return startShapeOf(t, ctx, strict, accounts, bin, nil, env...)
}

// startShapeOf is startShape with the project's settings changed by
// project before any process starts.
func startShapeOf(t testing.TB, ctx context.Context, strict, accounts int, bin string, project func(*payment.Project), env ...string) *prodshape.Shape {
	t.Helper()
	redis := redistest.Start(t)
	sh, err := prodshape.Start(ctx, prodshape.Options{Bin: bin, Dir: t.TempDir(), APIs: 2, Workers: 2, Accounts: accounts, Project: project,
		RedisAddr: redis.Addr, Env: append([]string{"RATE_LIMIT_STRICT=" + strconv.Itoa(strict), "RATE_LIMIT_RELAXED=100000",
			"RATE_LIMIT_SEMI_RELAXED=1000", "RATE_LIMIT_STANDARD=1000", "RATE_LIMIT_MODERATE=1000",
			"RATE_LIMIT_STRICT_API_KEY=" + strconv.Itoa(keyedSessions)}, env...)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, p := range append(sh.APIs, sh.Workers...) {
				t.Logf("%s log (end):\n%s", filepath.Base(p.Log), p.Tail(4000))
			}
		}
		sh.Close()
	})
	return sh
}

func newReceiver(t testing.TB) *prodshape.Receiver {
	r := prodshape.NewReceiver()
	t.Cleanup(r.Close)
	return r
}

// merchant sets the project up on api: r as its webhook endpoint for
// events, and a plan of 2 USD in the dev USDC, whose ID it returns.
func merchant(t testing.TB, sh *prodshape.Shape, api *prodshape.Process, r *prodshape.Receiver, events ...string) string {
	t.Helper()
	id, err := sh.Merchant(context.Background(), api, r, "2", events...)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// waitDelivered waits for every event of the project to reach r, and
// returns their IDs.
func waitDelivered(t testing.TB, ctx context.Context, sh *prodshape.Shape, r *prodshape.Receiver) []string {
	t.Helper()
	var ids []string
	waitFor(t, ctx, "every event delivered", func() bool {
		var err error
		ids, err = sh.EventIDs(ctx)
		return err == nil && r.HasAll(ids)
	})
	return ids
}

func call(t testing.TB, p *prodshape.Process, method, path, key string, body any) prodshape.Response {
	t.Helper()
	r, err := p.Call(context.Background(), method, path, key, body)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func startAPI(t testing.TB, ctx context.Context, sh *prodshape.Shape, bin, name string) *prodshape.Process {
	t.Helper()
	p, err := sh.StartAPI(bin, name)
	if err == nil {
		err = p.WaitReady(ctx)
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func startWorker(t testing.TB, sh *prodshape.Shape, bin, name string) *prodshape.Process {
	t.Helper()
	p, err := sh.StartWorker(bin, name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func waitFor(t testing.TB, ctx context.Context, what string, ok func() bool) {
	t.Helper()
	testwait.Until(t, 4*time.Minute, func() (bool, string) {
		if ctx.Err() != nil {
			t.Fatalf("gave up waiting for %s: %v", what, ctx.Err())
		}
		return ok(), "waiting for " + what
	})
}
