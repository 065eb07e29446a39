// Package shop_test runs the example shop (examples/shop) against the
// whole engine, as a merchant would: a customer buys, pays with the dev
// chain, and the shop marks the order paid from the signed webhook.
package shop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/paymentsd/paymentsd/api"
	"github.com/paymentsd/paymentsd/devstack"
	"github.com/paymentsd/paymentsd/examples/shop/shop"
	"github.com/paymentsd/paymentsd/tests/stacktest"
)

var stack *devstack.Stack

func TestMain(m *testing.M) {
	var stop func()
	var err error
	if stack, stop, err = stacktest.Start(devstack.StackConfig{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	stop()
	os.Exit(code)
}

func post(t *testing.T, url, key string, body any) map[string]any {
	t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var env struct{ Data map[string]any }
	out, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(out, &env); err != nil || res.StatusCode >= 300 {
		t.Fatalf("POST %s: %d %s", url, res.StatusCode, out)
	}
	return env.Data
}

func TestTheExampleShopSellsAndIsPaid(t *testing.T) {
	ctx := context.Background()
	e := stack.Engine(0)
	a, err := api.New(e, api.Config{PublicURL: "http://pay.example.test"})
	if err != nil {
		t.Fatal(err)
	}
	payments := httptest.NewServer(a.Handler())
	defer func() { payments.Close(); a.Close() }()

	// The merchant's set-up: a project, its deposit key, a plan, and a
	// webhook endpoint at the shop.
	p, err := stacktest.Project(e, "Example shop")
	if err != nil {
		t.Fatal(err)
	}
	base := payments.URL + "/api/v1/projects/" + p.Project.ID
	plan := post(t, base+"/payment-plans", p.SandboxKey, map[string]any{"title": "T-shirt", "amountUsd": "25",
		"acceptedAssetPolicies": []any{map[string]any{"policyType": "asset_definition", "assetDefinitionId": "usdc-devnet"}}})
	var shopHandler http.Handler
	shopSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { shopHandler.ServeHTTP(w, r) }))
	defer shopSrv.Close()
	hook := post(t, base+"/webhooks", p.SandboxKey, map[string]any{"url": shopSrv.URL + "/webhooks", "enabledEvents": []string{"*"}})
	s, err := shop.New(shop.Config{PaymentsdURL: payments.URL, APIKey: p.SandboxKey, PlanID: plan["id"].(string),
		WebhookSecret: hook["secret"].(string), Product: "T-shirt", PriceUSD: "25.00"})
	if err != nil {
		t.Fatal(err)
	}
	shopHandler = s.Handler()

	// The customer buys: the shop answers with a redirect to the hosted
	// page of the session it created.
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noRedirect.Post(shopSrv.URL+"/orders", "application/x-www-form-urlencoded", nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	hosted := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(hosted, "http://pay.example.test/checkout/") {
		t.Fatalf("buy: %d, Location %q; want a redirect to the hosted page", res.StatusCode, hosted)
	}
	token := hosted[strings.LastIndex(hosted, "/")+1:]
	var sess struct {
		Data struct {
			DepositAddress string
			PaymentOptions []struct{ AssetDefinitionID, AmountBaseUnits string }
		}
	}
	r2, err := http.Get(payments.URL + "/api/v1/checkout/sessions/" + token)
	if err != nil {
		t.Fatal(err)
	}
	_ = json.NewDecoder(r2.Body).Decode(&sess)
	r2.Body.Close()
	var orderID string
	for _, c := range res.Cookies() {
		if c.Name == "order" {
			orderID = c.Value
		}
	}
	orderURL := shopSrv.URL + "/orders/" + orderID
	if page := get(t, orderURL); !strings.Contains(page, `<strong id="status">awaiting_payment</strong>`) {
		t.Fatalf("order page before payment:\n%s", page)
	}

	// A forged "completed" webhook is refused and changes nothing.
	forged := fmt.Sprintf(`{"id":"evt_forged","type":"checkout.session.completed","data":{"status":"completed","metadata":{"orderId":%q},"version":99}}`, orderID)
	req, _ := http.NewRequest(http.MethodPost, shopSrv.URL+"/webhooks", strings.NewReader(forged))
	req.Header.Set("webhook-id", "evt_forged")
	req.Header.Set("webhook-timestamp", fmt.Sprint(time.Now().Unix()))
	req.Header.Set("webhook-signature", "v1,bm90IGEgc2lnbmF0dXJl")
	fres, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	fres.Body.Close()
	if fres.StatusCode != http.StatusBadRequest || !strings.Contains(get(t, orderURL), "awaiting_payment") {
		t.Fatalf("a forged webhook: %d", fres.StatusCode)
	}

	// The customer pays with the dev chain; the shop learns it by webhook.
	amount := ""
	for _, o := range sess.Data.PaymentOptions {
		if o.AssetDefinitionID == "usdc-devnet" {
			amount = o.AmountBaseUnits
		}
	}
	units, ok := new(big.Int).SetString(amount, 10)
	if !ok {
		t.Fatalf("no USDC option in %+v", sess.Data)
	}
	if _, err := stack.Chain.TransferToken(ctx, stack.Chain.Accounts[0], common.HexToAddress(sess.Data.DepositAddress), units); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		page := get(t, orderURL)
		if strings.Contains(page, `<strong id="status">paid</strong>`) && strings.Contains(page, "Paid: 25.00 USD") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the order never became paid:\n%s", page)
		}
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}
