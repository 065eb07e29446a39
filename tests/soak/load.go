package soak

import (
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/paymentsd/paymentsd/dev/devchain"
	"github.com/paymentsd/paymentsd/tests/prodshape"
)

// load is the steady mix: sessions opened at a fixed rate by the
// merchant's server (its API key and an Idempotency-Key each, retried
// after every 429 or 503 as its Retry-After says), a share of them paid
// from the dev chain's accounts, and reads of sessions and transactions.
type load struct {
	sh     *prodshape.Shape
	planID string
	o      Options
	client *http.Client

	mu       sync.Mutex
	sessions []opened
	// payments hands the sessions to pay to the payers, one per funded
	// account.
	payments chan opened

	created, paid, reads, refused, errors atomic.Int64
	lastErr                               atomic.Value // string
}

// opened is a session the load was answered 201 for.
type opened struct {
	key, id, token, address, due string
	pay                          bool
}

// LoadCounts are what the load did.
type LoadCounts struct {
	Created, Paid, Reads, Refused, Errors int64
	LastError                             string
}

func (c LoadCounts) String() string {
	s := fmt.Sprintf("%d sessions opened, %d paid, %d reads, %d refusals (429/503, retried), %d errors", c.Created, c.Paid, c.Reads, c.Refused, c.Errors)
	if c.LastError != "" {
		s += " (last: " + c.LastError + ")"
	}
	return s
}

func newLoad(sh *prodshape.Shape, planID string, o Options) *load {
	return &load{sh: sh, planID: planID, o: o, payments: make(chan opened, 10_000),
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: time.Minute}}
}

func (l *load) counts() LoadCounts {
	last, _ := l.lastErr.Load().(string)
	return LoadCounts{Created: l.created.Load(), Paid: l.paid.Load(), Reads: l.reads.Load(), Refused: l.refused.Load(),
		Errors: l.errors.Load(), LastError: last}
}

func (l *load) fail(format string, args ...any) {
	l.errors.Add(1)
	l.lastErr.Store(fmt.Sprintf(format, args...))
}

// run runs the load until ctx ends, then waits for the calls under way:
// every session whose opening began is opened, and paid if its turn.
func (l *load) run(ctx context.Context) {
	var creators, payers, readers sync.WaitGroup
	for _, account := range l.sh.Chain.Accounts {
		payers.Go(func() {
			for s := range l.payments {
				l.pay(context.WithoutCancel(ctx), account, s)
			}
		})
	}
	creators.Go(func() {
		every(ctx, l.o.CreateRate, func(n int) { creators.Go(func() { l.open(ctx, n) }) })
	})
	readers.Go(func() {
		every(ctx, l.o.ReadRate, func(n int) { readers.Go(func() { l.read(ctx, n) }) })
	})
	creators.Wait()
	close(l.payments)
	payers.Wait()
	readers.Wait()
}

// every calls f(n) rate times a second, n counting from 0, until ctx ends.
func every(ctx context.Context, rate float64, f func(n int)) {
	if rate <= 0 {
		return
	}
	tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
	defer tick.Stop()
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			f(n)
		}
	}
}

// open opens the nth session, retrying refusals with the same key.
func (l *load) open(ctx context.Context, n int) {
	key := fmt.Sprintf("soak-%07d", n)
	api := l.sh.APIs[n%len(l.sh.APIs)]
	body := map[string]any{"paymentPlanId": l.planID, "metadata": map[string]any{"soakKey": key}}
	for attempt := 0; attempt < 20; attempt++ {
		// A session the load began opening is opened whatever the run's
		// clock says: its answer is waited for.
		res, err := prodshape.Call(context.WithoutCancel(ctx), l.client, api.URL, http.MethodPost, "/api/v1/checkout/sessions",
			l.sh.Project.SandboxKey, body, "Idempotency-Key", key)
		if err != nil {
			l.fail("open %s: %v", key, err)
			return
		}
		switch res.Status {
		case http.StatusCreated:
			l.record(n, key, res)
			return
		case http.StatusTooManyRequests, http.StatusServiceUnavailable:
			l.refused.Add(1)
			secs, _ := strconv.Atoi(res.Header.Get("Retry-After"))
			// not a wait: a client backs off as long as Retry-After asks, as the load's clients are to
			time.Sleep(time.Duration(max(secs, 1)) * time.Second)
		default:
			l.fail("open %s: %d %.200s", key, res.Status, res.Raw)
			return
		}
	}
	l.fail("open %s: refused 20 times", key)
}

// record keeps a session answered 201 and hands every payShare-th one
// to the payers.
func (l *load) record(n int, key string, res prodshape.Response) {
	s := opened{key: key}
	s.id, _ = res.Data["id"].(string)
	s.token, _ = res.Data["token"].(string)
	s.address, _ = res.Data["depositAddress"].(string)
	if options, _ := res.Data["paymentOptions"].([]any); len(options) > 0 {
		s.due, _ = options[0].(map[string]any)["amountBaseUnits"].(string)
	}
	share := l.o.PayShare
	s.pay = int(float64(n+1)*share) > int(float64(n)*share) && s.due != ""
	l.created.Add(1)
	l.mu.Lock()
	l.sessions = append(l.sessions, s)
	l.mu.Unlock()
	if s.pay {
		l.payments <- s
	}
}

// pay pays a session in full from account.
func (l *load) pay(ctx context.Context, account devchain.Account, s opened) {
	due, ok := new(big.Int).SetString(s.due, 10)
	if !ok {
		l.fail("pay %s: amount %q", s.id, s.due)
		return
	}
	if _, err := l.sh.Chain.TransferToken(ctx, account, common.HexToAddress(s.address), due); err != nil {
		l.fail("pay %s: %v", s.id, err)
		return
	}
	l.paid.Add(1)
}

// read reads what a merchant's dashboard and a customer's page read: a
// session by its token, the project's sessions and transactions, a
// session by its ID.
func (l *load) read(ctx context.Context, n int) {
	base := "/api/v1/projects/" + l.sh.Project.Project.ID
	s, ok := l.recent()
	paths := []string{base + "/checkout-sessions?limit=20", base + "/transactions?limit=20"}
	if ok {
		paths = append(paths, "/api/v1/checkout/sessions/"+s.token, base+"/checkout-sessions/"+s.id)
	}
	path := paths[n%len(paths)]
	api := l.sh.APIs[n%len(l.sh.APIs)]
	res, err := prodshape.Call(context.WithoutCancel(ctx), l.client, api.URL, http.MethodGet, path, l.sh.Project.SandboxKey, nil)
	switch {
	case err != nil:
		l.fail("read: %v", err)
	case res.Status == http.StatusOK:
		l.reads.Add(1)
	case res.Status == http.StatusTooManyRequests || res.Status == http.StatusServiceUnavailable:
		l.refused.Add(1)
	default:
		l.fail("read %s: %d %.200s", path, res.Status, res.Raw)
	}
}

// recent is one of the last hundred sessions opened.
func (l *load) recent() (opened, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.sessions) == 0 {
		return opened{}, false
	}
	return l.sessions[len(l.sessions)-1-rand.IntN(min(100, len(l.sessions)))], true
}

// opened returns every session the load was answered 201 for.
func (l *load) all() []opened {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]opened(nil), l.sessions...)
}
