package scaleout

import (
	"bufio"
	"context"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/paymentsd/paymentsd/tests/prodshape"
)

// A worker allowed to keep 3 workflows in memory (WORKER_WORKFLOW_CACHE_SIZE)
// keeps no more, and still completes every one of 10 sessions paid at
// once: the workflows it let go are replayed from their histories when
// their payments come.
func TestAWorkerWithASmallCacheCompletesEverySession(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const n, cache = 10, 3
	sh, err := prodshape.Start(ctx, prodshape.Options{Bin: headBinary(t, ctx), Dir: t.TempDir(), APIs: 1, Workers: 1, Accounts: n,
		Env: append(prodshape.Limits(100000), "WORKER_WORKFLOW_CACHE_SIZE="+strconv.Itoa(cache))})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Close()
	api := sh.APIs[0]
	planID := merchant(t, sh, api, newReceiver(t), "checkout.session.completed")
	type opened struct{ token, address, due string }
	var open []opened
	for range n {
		r := call(t, api, http.MethodPost, "/api/v1/checkout/sessions", "", map[string]any{"paymentPlanId": planID})
		if r.Status != http.StatusCreated {
			t.Fatalf("open a session: %d %s", r.Status, r.Raw)
		}
		open = append(open, opened{r.Data["token"].(string), r.Data["depositAddress"].(string),
			r.Data["paymentOptions"].([]any)[0].(map[string]any)["amountBaseUnits"].(string)})
	}
	waitFor(t, ctx, "every session's workflow started", func() bool {
		var pending int
		_ = sh.DB.QueryRow(ctx, `SELECT count(*) FROM session_starts`).Scan(&pending)
		return pending == 0
	})
	for i, s := range open {
		due, _ := new(big.Int).SetString(s.due, 10)
		if _, err := sh.Chain.TransferToken(ctx, sh.Chain.Accounts[i], common.HexToAddress(s.address), due); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, ctx, "every session completed", func() bool {
		for _, s := range open {
			if r := call(t, api, http.MethodGet, "/api/v1/checkout/sessions/"+s.token, "", nil); r.Data["status"] != "completed" {
				return false
			}
		}
		return true
	})
	if got := cachedWorkflows(t, sh.Workers[0]); got < 1 || got > cache {
		t.Errorf("the worker keeps %d workflows in memory, want 1 to %d", got, cache)
	}
}

// cachedWorkflows is the worker's sticky cache's size, as its /metrics
// says (the SDK's one figure, under the labels of each workflow type).
func cachedWorkflows(t *testing.T, p *prodshape.Process) int {
	res, err := http.Get(p.MetricsURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	most := -1
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "temporal_sticky_cache_size{") {
			v, _ := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			most = max(most, int(v))
		}
	}
	return most
}
