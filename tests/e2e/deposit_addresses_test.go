package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/paymentsd/paymentsd/api"
	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/service"
)

// A refused session creation takes no derivation index, so no run of
// unused addresses grows where a wallet would stop looking; the merchant
// exports every used index with its address and session.
func TestDepositAddressesAreTakenOnlyByCreatedSessions(t *testing.T) {
	ts, e := newAPI(t, apiOptions{})
	p, other := newProject(t, e), newProject(t, e)
	usdc := createPlan(t, ts.URL, p, map[string]any{"title": "USDC", "amountUsd": "3",
		"acceptedAssetPolicies": []any{map[string]any{"policyType": "asset_definition", "assetDefinitionId": "usdc-devnet"}}})
	eth := createPlan(t, ts.URL, p, map[string]any{"title": "ETH", "amountUsd": "3",
		"acceptedAssetPolicies": []any{map[string]any{"policyType": "asset_definition", "assetDefinitionId": "eth-devnet"}}})
	open := func(base, plan string) response {
		return post(t, base, "/api/v1/checkout/sessions", "", map[string]any{"paymentPlanId": plan})
	}
	// An engine that cannot read the ETH price feed refuses the ETH plan's
	// sessions: nothing can be quoted.
	d := stack.Deps(0)
	d.Chains = chainwatch.Chains{}
	noFeed := service.New(d)
	a, err := api.New(noFeed, api.Config{Limits: map[api.Tier]uint64{api.Strict: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	refusing := httptest.NewServer(a.Handler())
	t.Cleanup(func() { refusing.Close(); a.Close() })

	var sessions []map[string]any
	for i := range 6 {
		if i%2 == 1 {
			r := open(refusing.URL, eth)
			mustStatus(t, r, http.StatusUnprocessableEntity)
			if !slices.Contains(r.detailFields(), "paymentPlanId") {
				t.Fatalf("refusal = %s", r.Raw)
			}
			continue
		}
		r := open(ts.URL, usdc)
		mustStatus(t, r, http.StatusCreated)
		sessions = append(sessions, r.data())
	}
	var next int64
	if err := st.Pool().QueryRow(context.Background(), `SELECT next_index FROM project_deposit_keys WHERE project_id = $1 AND NOT is_live`,
		p.Project.ID).Scan(&next); err != nil || next != 3 {
		t.Fatalf("next index = %d (%v); want 3: the refused creations took none", next, err)
	}

	path := "/api/v1/projects/" + p.Project.ID + "/deposit-addresses"
	list := get(t, ts.URL, path, p.SandboxKey)
	mustStatus(t, list, http.StatusOK)
	if len(list.list()) != 3 || list.pagination()["total"] != float64(3) {
		t.Fatalf("deposit addresses = %s", list.Raw)
	}
	for i, item := range list.list() {
		d := item.(map[string]any)
		s := sessions[i]
		if d["index"] != float64(i) || d["derivationPath"] != "0/"+string(rune('0'+i)) || d["address"] != s["depositAddress"] ||
			d["checkoutSessionId"] != s["id"] || d["sessionStatus"] != "open" || d["gapBefore"] != float64(0) {
			t.Fatalf("address %d = %v; session %v", i, d, s)
		}
	}
	mustStatus(t, get(t, ts.URL, path, ""), http.StatusUnauthorized)
	mustStatus(t, get(t, ts.URL, path, other.SandboxKey), http.StatusNotFound)
	if live := get(t, ts.URL, path, p.LiveKey); live.Status != http.StatusOK || len(live.list()) != 0 {
		t.Fatalf("the live key sees sandbox addresses: %s", live.Raw)
	}
	if bad := get(t, ts.URL, path+"?status=unpaid", p.SandboxKey); bad.Status != http.StatusUnprocessableEntity {
		t.Fatalf("a bad status filter: %s", bad.Raw)
	}
}
