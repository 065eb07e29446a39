package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service"
)

// seedTransactions records n transactions of a sandbox project, one a
// minute back from start, cycling through the statuses.
func seedTransactions(t *testing.T, svc *service.Service, p service.CreatedProject, isLive bool, start time.Time, n int) []payment.Transaction {
	t.Helper()
	ctx := context.Background()
	pr := payment.Principal{ProjectID: p.Project.ID, IsLive: isLive}
	assetID := "usdc-devnet"
	if isLive {
		assetID = "usdc-base"
	}
	plan, err := svc.Checkout().CreatePlan(ctx, pr, p.Project.ID, payment.PlanInput{Title: ptr("Seed"), AmountUSD: ptr("10"),
		AcceptedAssetPolicies: []payment.PolicyInput{{PolicyType: ptr("asset_definition"), AssetDefinitionID: &assetID}}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	cs := payment.Session{ID: payment.NewID(payment.PrefixSession, now), TokenHash: payment.HashSecret(payment.NewSessionToken()),
		ProjectID: p.Project.ID, PaymentPlanID: plan.ID, IsLive: isLive, Status: payment.SessionProcessing,
		AmountUSD: decimal.NewFromInt(10), ExpiresAt: now.Add(time.Hour), QuoteExpiresAt: now.Add(time.Hour), CreatedAt: now}
	if err := st.Checkout().InsertSession(ctx, cs, nil); err != nil {
		t.Fatal(err)
	}
	var out []payment.Transaction
	for i := range n {
		at := start.Add(-time.Duration(i) * time.Minute)
		status := payment.TransactionStatuses[i%4]
		block := int64(100 + i)
		tx := payment.Transaction{ID: payment.NewID(payment.PrefixTx, at), ProjectID: p.Project.ID, CheckoutSessionID: cs.ID,
			PaymentPlanID: plan.ID, IsLive: isLive, Status: status, Network: "devnet", ChainID: 1337,
			TxHash: fmt.Sprintf("0x%063x%d", at.UnixNano(), map[bool]int{false: 0, true: 1}[isLive]), LogIndex: 0, FromAddress: "0x1111111111111111111111111111111111111111",
			ToAddress: "0x2222222222222222222222222222222222222222", AssetDefinitionID: assetID, Symbol: "USDC",
			Amount: "10", AmountBaseUnits: "10000000", AmountUSD: decimal.NewFromInt(10), BlockNumber: &block,
			StatusHistory: []payment.StatusChange{{Status: status, At: at}}, CreatedAt: at, UpdatedAt: at}
		if err := st.Payments().InsertTransaction(ctx, tx); err != nil {
			t.Fatal(err)
		}
		out = append(out, tx)
	}
	return out
}

func ptr[T any](v T) *T { return &v }

func TestTransactionsPaginationAndFilters(t *testing.T) {
	ts, e, p := projectAPI(t, apiOptions{})
	start := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	txs := seedTransactions(t, e, p, false, start, 45) // 12:00 back to 11:16 on March 10
	seedTransactions(t, e, p, true, start, 3)          // live: never seen by the sandbox key
	path := "/api/v1/projects/" + p.Project.ID + "/transactions"

	pages := []struct {
		query                string
		items                int
		page, limit, total   float64
		totalPages           float64
		hasNext, hasPrevious bool
	}{
		{"", 20, 1, 20, 45, 3, true, false},
		{"?page=2", 20, 2, 20, 45, 3, true, true},
		{"?page=3", 5, 3, 20, 45, 3, false, true},
		{"?page=4", 0, 4, 20, 45, 3, false, true},
		{"?limit=45", 45, 1, 45, 45, 1, false, false},
		{"?limit=100", 45, 1, 100, 45, 1, false, false},
		{"?limit=1&page=45", 1, 45, 1, 45, 45, false, true},
	}
	for _, c := range pages {
		r := get(t, ts.URL, path+c.query, p.SandboxKey)
		mustStatus(t, r, http.StatusOK)
		pg := r.pagination()
		if len(r.list()) != c.items || pg["page"] != c.page || pg["limit"] != c.limit || pg["total"] != c.total ||
			pg["totalPages"] != c.totalPages || pg["hasNextPage"] != c.hasNext || pg["hasPreviousPage"] != c.hasPrevious {
			t.Errorf("%q: %d items, pagination %v", c.query, len(r.list()), pg)
		}
	}
	first := get(t, ts.URL, path, p.SandboxKey).list()[0].(map[string]any)
	if first["id"] != txs[0].ID {
		t.Errorf("newest first: got %v, want %s", first["id"], txs[0].ID)
	}

	count := func(q url.Values) int {
		r := get(t, ts.URL, path+"?"+q.Encode(), p.SandboxKey)
		mustStatus(t, r, http.StatusOK)
		for _, it := range r.list() {
			if s := q.Get("status"); s != "" && it.(map[string]any)["status"] != s {
				t.Errorf("status filter %s returned %v", s, it.(map[string]any)["status"])
			}
		}
		return int(r.pagination()["total"].(float64))
	}
	filters := []struct {
		q    url.Values
		want int
	}{
		{url.Values{"status": {"pending"}}, 12},
		{url.Values{"status": {"failed"}}, 11},
		// from and to are inclusive: 11:50 through 11:55 is six transactions.
		{url.Values{"from": {"2026-03-10T11:50:00Z"}, "to": {"2026-03-10T11:55:00Z"}}, 6},
		{url.Values{"from": {"2026-03-10T11:59:00Z"}}, 2},
		{url.Values{"to": {"2026-03-10T11:16:00Z"}}, 1},
		{url.Values{"to": {"2026-03-10"}}, 45}, // a date includes the whole day
		{url.Values{"to": {"2026-03-09"}}, 0},
		{url.Values{"from": {"2026-03-10"}, "status": {"confirmed"}}, 11},
		{url.Values{"isLive": {"false"}}, 45},
		{url.Values{"isLive": {"true"}}, 0},
	}
	for _, f := range filters {
		if got := count(f.q); got != f.want {
			t.Errorf("%s: total %d, want %d", f.q.Encode(), got, f.want)
		}
	}
	liveList := get(t, ts.URL, path+"?isLive=true", p.LiveKey)
	if liveList.pagination()["total"] != float64(3) {
		t.Errorf("live key sees %v live transactions, want 3", liveList.pagination()["total"])
	}

	bad := []struct {
		query  string
		fields []string
	}{
		{"?page=0", []string{"page"}},
		{"?limit=0", []string{"limit"}},
		{"?limit=101", []string{"limit"}},
		{"?limit=ten", []string{"limit"}},
		{"?status=done", []string{"status"}},
		{"?from=yesterday", []string{"from"}},
		{"?from=2026-03-11&to=2026-03-10", []string{"from"}},
		{"?isLive=yes", []string{"isLive"}},
		{"?sort=asc", []string{"sort"}},
		{"?page=1&page=2", []string{"page"}},
	}
	for _, b := range bad {
		r := get(t, ts.URL, path+b.query, p.SandboxKey)
		if r.Status != 422 || r.errorCode() != "VALIDATION_ERROR" || fmt.Sprint(r.detailFields()) != fmt.Sprint(b.fields) {
			t.Errorf("%s: %d %s", b.query, r.Status, r.Raw)
		}
	}

	one := get(t, ts.URL, path+"/"+txs[3].ID, p.SandboxKey)
	mustStatus(t, one, http.StatusOK)
	d := one.data()
	if d["id"] != txs[3].ID || d["status"] != string(txs[3].Status) || d["txHash"] != txs[3].TxHash ||
		d["amountUsd"] != "10.00" || d["blockNumber"] != float64(103) || d["checkoutSessionId"] != txs[3].CheckoutSessionID {
		t.Errorf("transaction = %s", one.Raw)
	}
	if r := get(t, ts.URL, path+"/tx_nope", p.SandboxKey); r.Status != 404 {
		t.Errorf("unknown transaction: %d", r.Status)
	}
	if r := get(t, ts.URL, path+"/"+txs[3].ID, p.LiveKey); r.Status != 404 {
		t.Errorf("live key read a sandbox transaction: %d", r.Status)
	}
}
