package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/api"
	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/service"
)

// A deposit address is the same on every EVM chain, so testnet coins can
// reach a live session's address. The dev chain is a sandbox network: what
// it sends to a live session makes no transaction and no event, in either
// environment, while the sandbox session paid in the same block counts.
func TestTransferOnAnotherEnvironmentsNetworkIsIgnored(t *testing.T) {
	ts, _, p := projectAPI(t, apiOptions{})
	plan := post(t, ts.URL, "/api/v1/projects/"+p.Project.ID+"/payment-plans", p.LiveKey, map[string]any{
		"title": "Live order", "amountUsd": "5",
		"acceptedAssetPolicies": []any{map[string]any{"policyType": "asset_definition", "assetDefinitionId": "usdc-base"}}})
	mustStatus(t, plan, http.StatusCreated)
	r := post(t, ts.URL, "/api/v1/checkout/sessions", "", map[string]any{"paymentPlanId": plan.data()["id"]})
	mustStatus(t, r, http.StatusCreated)
	live := r.data()
	if live["isLive"] != true {
		t.Fatalf("live session = %v", live)
	}
	sandbox := openSession(t, ts.URL, projectKeys{p.Project.ID, p.SandboxKey}, "5", "usdc-devnet")

	chain.Pause() // both transfers in one block
	payToken(t, 1, str(live["depositAddress"]), units("5000000"))
	payToken(t, 1, str(sandbox["depositAddress"]), units("5000000"))
	chain.Resume()
	waitSession(t, ts.URL, str(sandbox["token"]), "completed", func(s map[string]any) bool { return s["status"] == "completed" })

	got := get(t, ts.URL, "/api/v1/checkout/sessions/"+str(live["token"]), "").data()
	if txs, _ := got["transactions"].([]any); got["status"] != "open" || got["amountPaidUsd"] != "0.00" || len(txs) != 0 {
		t.Errorf("the live session after testnet coins = %v", got)
	}
	if txs := get(t, ts.URL, "/api/v1/projects/"+p.Project.ID+"/transactions", p.LiveKey).list(); len(txs) != 0 {
		t.Errorf("live transactions: %v", txs)
	}
	if txs := get(t, ts.URL, "/api/v1/projects/"+p.Project.ID+"/transactions", p.SandboxKey).list(); len(txs) != 1 {
		t.Errorf("sandbox transactions: %d, want the sandbox session's one", len(txs))
	}
	if evs := get(t, ts.URL, "/api/v1/projects/"+p.Project.ID+"/events?type=transaction.confirmed", p.LiveKey).list(); len(evs) != 0 {
		t.Errorf("live events: %v", evs)
	}
}

// /readyz names a network whose nodes do not answer, without failing the
// API's readiness (it still serves), and shows each answering network's
// head.
func TestReadinessNamesAnUnreachableNetwork(t *testing.T) {
	ts, _ := newAPI(t, apiOptions{})
	r := get(t, ts.URL, "/readyz", "")
	mustStatus(t, r, http.StatusOK)
	dev, _ := r.data()["networks"].(map[string]any)["devnet"].(map[string]any)
	if r.data()["status"] != "ready" || dev["status"] != "ok" || dev["head"].(float64) < 1 {
		t.Fatalf("ready = %s", r.Raw)
	}

	down, err := chainwatch.Connect(context.Background(), []chainwatch.Network{devnet(chain.URL),
		{Key: "downnet", ChainID: 99999, RPCURLs: []string{"http://127.0.0.1:1"}}}, catalog, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := service.New(service.Deps{Store: st, Temporal: temporal, Catalog: catalog, Chains: down, Sealer: sealer})
	a, err := api.New(e, api.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	srv := httptestServer(t, a.Handler())
	r = get(t, srv, "/readyz", "")
	mustStatus(t, r, http.StatusOK)
	nets := r.data()["networks"].(map[string]any)
	if r.data()["status"] != "degraded" || nets["downnet"].(map[string]any)["status"] != "unreachable" ||
		nets["devnet"].(map[string]any)["status"] != "ok" || strings.Contains(string(r.Raw), "127.0.0.1:1") {
		t.Fatalf("ready with a network down = %s", r.Raw)
	}
}
