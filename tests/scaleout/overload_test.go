package scaleout

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"

	v1 "github.com/paymentsd/paymentsd/api/gen/paymentsd/v1"
	"github.com/paymentsd/paymentsd/api/gen/paymentsd/v1/paymentsdv1connect"
	"github.com/paymentsd/paymentsd/tests/prodshape"
)

// A flood on one `paymentsd api` process, which may serve 4 requests at
// once over a database pool of 2 connections: merchants' servers opening
// sessions with Idempotency-Keys (retrying each refusal after its
// Retry-After), others reading, and Connect clients opening sessions too.
// Every answer is a success, a 429 or a 503, and every refusal says when
// to retry; every key ends with one session, the same one on a replay,
// and every session answered 201 exists once and gets its workflow.
func TestAFloodIsAnsweredWith429Or503AndLosesNoWork(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	sh, err := prodshape.Start(ctx, prodshape.Options{Bin: headBinary(t, ctx), Dir: t.TempDir(), APIs: 1, Workers: 1,
		DatabaseOptions: "pool_max_conns=2",
		Env: []string{"MAX_INFLIGHT_REQUESTS=4", "RATE_LIMIT_STRICT_API_KEY=1000000", "RATE_LIMIT_STRICT=1000000",
			"RATE_LIMIT_RELAXED=3000", "RATE_LIMIT_SEMI_RELAXED=1000"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	api, key := sh.APIs[0], sh.Project.SandboxKey
	planID := merchant(t, sh, api, newReceiver(t), "checkout.session.created")

	const keys, creators, readers, connectors, connectCalls = 300, 32, 32, 8, 20
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 128}, Timeout: time.Minute}
	var tally answers
	created := make([]string, keys) // the session each key got
	work := make(chan int)
	var wg sync.WaitGroup
	for range creators {
		wg.Go(func() {
			for i := range work {
				created[i] = openWithRetries(ctx, t, client, api.URL, key, planID, i, &tally)
			}
		})
	}
	done := make(chan struct{})
	var background sync.WaitGroup
	for r := range readers {
		background.Go(func() {
			paths := []string{"/api/v1/projects/" + sh.Project.Project.ID + "/checkout-sessions?limit=5", "/api/v1/assets"}
			for n := 0; ; n++ {
				select {
				case <-done:
					return
				default:
				}
				res, err := prodshape.Call(ctx, client, api.URL, http.MethodGet, paths[(r+n)%2], key, nil)
				if err != nil {
					t.Errorf("read: %v", err)
					return
				}
				tally.add(t, "read", res.Status, res.Header)
			}
		})
	}
	var connectMu sync.Mutex
	var connectIDs []string
	for range connectors {
		background.Go(func() {
			cc := paymentsdv1connect.NewCheckoutServiceClient(client, api.URL)
			for range connectCalls {
				req := connect.NewRequest(&v1.CreateCheckoutSessionRequest{PaymentPlanId: &planID})
				req.Header().Set("Authorization", "Bearer "+key)
				res, err := cc.CreateCheckoutSession(ctx, req)
				var ce *connect.Error
				switch {
				case err == nil:
					connectMu.Lock()
					connectIDs = append(connectIDs, res.Msg.CheckoutSession.Id)
					connectMu.Unlock()
					tally.add(t, "connect", http.StatusCreated, nil)
				case errors.As(err, &ce) && (ce.Code() == connect.CodeUnavailable || ce.Code() == connect.CodeResourceExhausted):
					if _, perr := strconv.Atoi(ce.Meta().Get("Retry-After")); perr != nil {
						t.Errorf("Connect %v without Retry-After: %v", ce.Code(), ce.Meta())
					}
					tally.add(t, "connect", map[connect.Code]int{connect.CodeUnavailable: 503, connect.CodeResourceExhausted: 429}[ce.Code()],
						http.Header{"Retry-After": {ce.Meta().Get("Retry-After")}})
				default:
					t.Errorf("Connect CreateCheckoutSession: %v; want success, unavailable or resource_exhausted", err)
				}
			}
		})
	}
	started := time.Now()
	for i := range keys {
		work <- i
	}
	close(work)
	wg.Wait()
	close(done)
	background.Wait()
	t.Logf("flood of %v: %s", time.Since(started).Round(time.Millisecond), tally.String())
	if tally.count("create", 503)+tally.count("read", 503) == 0 {
		t.Fatalf("no request was refused with 503: the flood did not reach the bound (%s)", tally.String())
	}

	// A retry of a key answered before replays its first answer.
	for i := 0; i < keys; i += 15 {
		res, err := prodshape.Call(ctx, client, api.URL, http.MethodPost, "/api/v1/checkout/sessions", key,
			sessionBody(planID, i), "Idempotency-Key", floodKey(i))
		if err != nil || res.Status != http.StatusCreated || res.Header.Get("Idempotent-Replayed") != "true" || res.Data["id"] != created[i] {
			t.Errorf("key %d again: %d %v replayed=%q id %v; want the first answer, session %s", i, res.Status, err,
				res.Header.Get("Idempotent-Replayed"), res.Data["id"], created[i])
		}
	}

	// Every key has one session, the one it was answered; every Connect
	// session answered exists once; no session is there that no one got.
	rows, err := sh.DB.Query(ctx, `SELECT id, metadata->>'floodKey' FROM checkout_sessions WHERE project_id = $1`, sh.Project.Project.ID)
	if err != nil {
		t.Fatal(err)
	}
	byKey, ids := map[string][]string{}, map[string]int{}
	for rows.Next() {
		var id string
		var k *string
		if err := rows.Scan(&id, &k); err != nil {
			t.Fatal(err)
		}
		ids[id]++
		if k != nil {
			byKey[*k] = append(byKey[*k], id)
		}
	}
	rows.Close()
	for i, id := range created {
		if got := byKey[floodKey(i)]; len(got) != 1 || got[0] != id {
			t.Errorf("key %d: sessions %v, want exactly the one it was answered (%s)", i, got, id)
		}
	}
	for _, id := range connectIDs {
		if ids[id] != 1 {
			t.Errorf("Connect session %s: %d in the database, want 1", id, ids[id])
		}
	}
	if want := keys + len(connectIDs); len(ids) != want {
		t.Errorf("%d sessions in the database, want %d (one per key, one per Connect success)", len(ids), want)
	}
	waitFor(t, ctx, "every session's workflow started", func() bool {
		var pending int
		_ = sh.DB.QueryRow(ctx, `SELECT count(*) FROM session_starts`).Scan(&pending)
		return pending == 0
	})
}

func floodKey(i int) string { return fmt.Sprintf("flood-%04d", i) }

func sessionBody(planID string, i int) map[string]any {
	return map[string]any{"paymentPlanId": planID, "metadata": map[string]any{"floodKey": floodKey(i)}}
}

// openWithRetries opens key i's session as a careful merchant's server
// does: the same Idempotency-Key and body until it is answered 201, each
// refusal waited out for its Retry-After. It returns the session's ID.
func openWithRetries(ctx context.Context, t *testing.T, client *http.Client, base, key, planID string, i int, tally *answers) string {
	for attempt := 1; attempt <= 60; attempt++ {
		res, err := prodshape.Call(ctx, client, base, http.MethodPost, "/api/v1/checkout/sessions", key, sessionBody(planID, i),
			"Idempotency-Key", floodKey(i))
		if err != nil {
			t.Errorf("key %d: %v", i, err)
			return ""
		}
		tally.add(t, "create", res.Status, res.Header)
		switch res.Status {
		case http.StatusCreated:
			id, _ := res.Data["id"].(string)
			return id
		case http.StatusTooManyRequests, http.StatusServiceUnavailable:
			secs, _ := strconv.Atoi(res.Header.Get("Retry-After"))
			// not a wait: a client backs off as long as Retry-After asks, which is what the test holds the API to
			time.Sleep(time.Duration(max(secs, 1)) * time.Second)
		default:
			t.Errorf("key %d: %d %s", i, res.Status, res.Raw)
			return ""
		}
	}
	t.Errorf("key %d: no session after 60 attempts", i)
	return ""
}

// answers counts what the API answered, by kind of call and status, and
// fails the test on an answer outside 2xx, 429 and 503, or a refusal
// without a Retry-After in seconds.
type answers struct {
	mu sync.Mutex
	n  map[string]int
}

func (a *answers) add(t *testing.T, kind string, status int, h http.Header) {
	switch {
	case status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable:
		if secs, err := strconv.Atoi(h.Get("Retry-After")); err != nil || secs < 1 {
			t.Errorf("%s: %d with Retry-After %q; want a number of seconds", kind, status, h.Get("Retry-After"))
		}
	case status < 200 || status > 299:
		t.Errorf("%s: %d; want 2xx, 429 or 503", kind, status)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.n == nil {
		a.n = map[string]int{}
	}
	a.n[fmt.Sprintf("%s %d", kind, status)]++
}

func (a *answers) count(kind string, status int) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n[fmt.Sprintf("%s %d", kind, status)]
}

func (a *answers) String() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return fmt.Sprint(a.n)
}
