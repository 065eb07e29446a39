// Package scaleout runs the production shape: two `paymentsd api` and two
// `paymentsd worker` processes of the production binary (no dev tag) on
// one Postgres database, one Temporal server and one Redis, and kills one
// of each in the middle of the payments.
package scaleout

import (
	"context"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
)

const sessions = 10

// keyedSessions is the budget of sessions created with the project's key.
const keyedSessions = 2

// Every payment completes once and every event reaches the merchant, signed,
// although a worker is SIGKILLed while payments confirm and an API process
// dies; both APIs count one budget per client through Redis.
func TestTwoAPIsAndTwoWorkersSurviveKills(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	// Customers' session creations: exactly the sessions of the test,
	// counted once across both processes.
	sh := startShape(t, ctx, sessions, sessions, headBinary(t, ctx))
	apis, workers, chain, db, project, receiver := sh.APIs, sh.Workers, sh.Chain, sh.DB, sh.Project, newReceiver(t)
	key := project.SandboxKey
	planID := merchant(t, sh, apis[0], receiver, "*")

	// Sessions opened alternately on both processes; one more is refused
	// whichever process gets it: the budget is shared.
	type opened struct{ token, id, address, due string }
	var open []opened
	for i := range sessions {
		r := call(t, apis[i%2], http.MethodPost, "/api/v1/checkout/sessions", "", map[string]any{"paymentPlanId": planID})
		if r.Status != http.StatusCreated {
			t.Fatalf("open session %d on api %d: %d %s", i, i%2+1, r.Status, r.Raw)
		}
		due := r.Data["paymentOptions"].([]any)[0].(map[string]any)["amountBaseUnits"].(string)
		open = append(open, opened{r.Data["token"].(string), r.Data["id"].(string), r.Data["depositAddress"].(string), due})
	}
	for i := range apis {
		if r := call(t, apis[i], http.MethodPost, "/api/v1/checkout/sessions", "", map[string]any{"paymentPlanId": planID}); r.Status != http.StatusTooManyRequests {
			t.Fatalf("session %d on api %d: %d, want 429: both processes count one budget through Redis", sessions+1, i+1, r.Status)
		}
	}

	// The merchant's server creates sessions with its API key: one budget
	// per key, counted once across both processes too.
	for i := range keyedSessions {
		if r := call(t, apis[i%2], http.MethodPost, "/api/v1/checkout/sessions", key, map[string]any{"paymentPlanId": planID}); r.Status != http.StatusCreated {
			t.Fatalf("keyed session %d on api %d: %d %s", i+1, i%2+1, r.Status, r.Raw)
		}
	}
	for i := range apis {
		if r := call(t, apis[i], http.MethodPost, "/api/v1/checkout/sessions", key, map[string]any{"paymentPlanId": planID}); r.Status != http.StatusTooManyRequests {
			t.Fatalf("keyed session %d on api %d: %d, want 429: both processes count one budget per key", keyedSessions+1, i+1, r.Status)
		}
	}

	pay := func(i int) {
		due, _ := new(big.Int).SetString(open[i].due, 10)
		if _, err := chain.TransferToken(ctx, chain.Accounts[i], common.HexToAddress(open[i].address), due); err != nil {
			t.Fatalf("pay session %d: %v", i, err)
		}
	}
	for i := range sessions / 2 {
		pay(i)
	}
	// Kill a worker while those payments confirm, and an API process:
	// once the first is seen. It may be final already: a payment as deep
	// as the network asks when first seen is finalized by the look right
	// after the one that confirms it, often between two looks of this
	// wait. The rest of the first half are then still on their way, and
	// the second half is paid after the kill.
	waitFor(t, ctx, "a payment seen", func() bool {
		var n int
		_ = db.QueryRow(ctx, `SELECT count(*) FROM transactions`).Scan(&n)
		return n > 0
	})
	must(t, workers[0].Kill())
	must(t, apis[1].Kill())
	for i := sessions / 2; i < sessions; i++ {
		pay(i)
	}

	waitFor(t, ctx, "every session completed (read through the API left)", func() bool {
		for _, s := range open {
			r := call(t, apis[0], http.MethodGet, "/api/v1/checkout/sessions/"+s.token, "", nil)
			if r.Status != http.StatusOK || r.Data["status"] != "completed" {
				return false
			}
		}
		return true
	})
	var pending int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM session_starts`).Scan(&pending); err != nil || pending != 0 {
		t.Errorf("%d session starts pending (%v); want every session's workflow started", pending, err)
	}
	for _, s := range open {
		var txs, finalized int
		var paid string
		if err := db.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE status = 'finalized'),
			(SELECT amount_paid_usd::text FROM checkout_sessions WHERE id = $1)
			FROM transactions WHERE checkout_session_id = $1`, s.id).Scan(&txs, &finalized, &paid); err != nil {
			t.Fatal(err)
		}
		if txs != 1 || finalized != 1 || !strings.HasPrefix(paid, "2") {
			t.Errorf("session %s: %d transactions (%d finalized), paid %s; want one payment of 2 USD recorded once", s.id, txs, finalized, paid)
		}
	}

	// Every event recorded reaches the receiver, with a valid signature.
	want := waitDelivered(t, ctx, sh, receiver)
	for _, s := range open {
		if !receiver.Got(s.id, "checkout.session.completed") {
			t.Errorf("no checkout.session.completed delivered for %s", s.id)
		}
	}
	if n := receiver.BadSignatures(); n > 0 {
		t.Errorf("%d deliveries failed signature verification", n)
	}
	t.Logf("%d events delivered (%d deliveries, at least once each); %d sessions completed across 2 APIs and 2 workers",
		len(want), receiver.Deliveries(), sessions)
}
