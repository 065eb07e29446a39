package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/paymentsd/paymentsd/workflows"
)

// publicSessionFields are the fields of a session as the holder of its
// token reads it (docs/decisions.md lists them).
var publicSessionFields = []string{"amountPaidUsd", "amountUsd", "completedAt", "depositAddress", "exception", "expiresAt",
	"id", "isLive", "paymentOptions", "paymentPlan", "quoteExpiresAt", "status", "token", "transactions", "url"}

func fieldNames(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Whoever holds a session's token (the payer, the hosted page) sees what
// paying needs: never the customer's e-mail, the metadata, the project or
// plan IDs or the merchant's contact details, over REST, over Connect, in
// the session's transactions or in the answer to a submitted hash. The
// merchant's views stay complete.
func TestPublicSessionViewShowsNoPrivateData(t *testing.T) {
	ts, _, p := projectAPI(t, apiOptions{})
	planID := createPlan(t, ts.URL, p, map[string]any{"title": "Private", "amountUsd": "3",
		"redirectUrl": "https://shop.example/thanks",
		"merchantInfo": map[string]any{"name": "Example Shop", "email": "owner@shop.example",
			"website": "https://shop.example", "logoUrl": "https://shop.example/logo.png"},
		"acceptedAssetPolicies": []any{map[string]any{"policyType": "asset_definition", "assetDefinitionId": "usdc-devnet"}}})
	created := post(t, ts.URL, "/api/v1/checkout/sessions", "", map[string]any{"paymentPlanId": planID,
		"email": "buyer@example.com", "metadata": map[string]any{"orderId": "order-7781", "customer": "cust-42"}})
	mustStatus(t, created, http.StatusCreated)
	cs := created.data()
	token := str(cs["token"])
	private := []string{"buyer@example.com", "order-7781", "cust-42", "owner@shop.example", p.Project.ID, planID}

	hidden := func(t *testing.T, what string, raw []byte) {
		t.Helper()
		for _, s := range append(private, `"email"`, `"metadata"`, `"projectId"`, `"paymentPlanId"`, `"website"`) {
			if strings.Contains(string(raw), s) {
				t.Errorf("%s shows %s: %s", what, s, raw)
			}
		}
	}

	// A submitted hash makes a claim the session lists.
	hash := common.BigToHash(common.Big1).Hex()
	t.Cleanup(func() {
		_ = temporal.TerminateWorkflow(context.Background(), workflows.TransactionWorkflowID(1337, hash), "", "test over")
	})
	claim := post(t, ts.URL, "/api/v1/checkout/sessions/"+token+"/payments", "", map[string]any{"network": "devnet", "txHash": hash})
	mustStatus(t, claim, http.StatusCreated)
	hidden(t, "the answer to a submitted hash", claim.Raw)
	if claim.data()["txHash"] != hash || claim.data()["status"] != "pending" || strings.Contains(string(claim.Raw), cs["id"].(string)) {
		t.Errorf("claim = %s", claim.Raw)
	}

	byToken := get(t, ts.URL, "/api/v1/checkout/sessions/"+token, "")
	mustStatus(t, byToken, http.StatusOK)
	hidden(t, "the public lookup", byToken.Raw)
	d := byToken.data()
	if got := fieldNames(d); !slices.Equal(got, publicSessionFields) {
		t.Errorf("public fields = %v, want %v", got, publicSessionFields)
	}
	plan := d["paymentPlan"].(map[string]any)
	if plan["title"] != "Private" || plan["redirectUrl"] != "https://shop.example/thanks" ||
		!slices.Equal(fieldNames(plan["merchantInfo"].(map[string]any)), []string{"logoUrl", "name"}) {
		t.Errorf("plan summary = %v", plan)
	}
	txs := d["transactions"].([]any)
	if len(txs) != 1 || txs[0].(map[string]any)["txHash"] != hash {
		t.Errorf("transactions = %v", txs)
	}

	// The Connect twin, read as a Connect JSON client reads it.
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/paymentsd.v1.CheckoutService/GetCheckoutSession",
		strings.NewReader(`{"token":"`+token+`"}`))
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("Connect lookup: %d %s", res.StatusCode, raw)
	}
	hidden(t, "the Connect lookup", raw)
	var viaConnect struct {
		CheckoutSession map[string]any `json:"checkoutSession"`
	}
	_ = json.Unmarshal(raw, &viaConnect)
	s := viaConnect.CheckoutSession
	connectPlan, _ := s["paymentPlan"].(map[string]any)
	merchantInfo, _ := connectPlan["merchantInfo"].(map[string]any)
	if s["id"] != cs["id"] || s["depositAddress"] != cs["depositAddress"] || merchantInfo["name"] != "Example Shop" {
		t.Errorf("Connect lookup = %s", raw)
	}

	// The merchant sees everything, by ID and in the list.
	merchant := get(t, ts.URL, "/api/v1/projects/"+p.Project.ID+"/checkout-sessions/"+str(cs["id"]), p.SandboxKey)
	mustStatus(t, merchant, http.StatusOK)
	list := get(t, ts.URL, "/api/v1/projects/"+p.Project.ID+"/checkout-sessions", p.SandboxKey)
	for _, m := range []map[string]any{merchant.data(), list.list()[0].(map[string]any)} {
		if m["email"] != "buyer@example.com" || m["metadata"].(map[string]any)["orderId"] != "order-7781" ||
			m["projectId"] != p.Project.ID || m["paymentPlanId"] != planID {
			t.Errorf("merchant view = %v", m)
		}
	}
}
