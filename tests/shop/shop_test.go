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
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/paymentsd/paymentsd/api"
	"github.com/paymentsd/paymentsd/client/examples/shop/shop"
	"github.com/paymentsd/paymentsd/dev/devstack"
	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
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
	e := stack.Service(0)
	a, err := api.New(e, api.Config{PublicURL: "http://pay.example.test"})
	if err != nil {
		t.Fatal(err)
	}
	payments := httptest.NewServer(a.Handler())
	defer func() { payments.Close(); a.Close() }()

	// The merchant's set-up: a project with its deposit key, and a webhook
	// endpoint at the shop. The shop creates its plan as it starts.
	p, err := stacktest.Project(e, "Example shop")
	if err != nil {
		t.Fatal(err)
	}
	base := payments.URL + "/api/v1/projects/" + p.Project.ID
	var shopHandler http.Handler
	shopSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { shopHandler.ServeHTTP(w, r) }))
	defer shopSrv.Close()
	hook := post(t, base+"/webhooks", p.SandboxKey, map[string]any{"url": shopSrv.URL + "/webhooks", "enabledEvents": []string{"*"}})
	s, err := shop.New(ctx, shop.Config{PaymentsdURL: payments.URL, APIKey: p.SandboxKey, ProjectID: p.Project.ID,
		WebhookSecret: hook["secret"].(string), ShopURL: shopSrv.URL, Product: "T-shirt", PriceUSD: "25.00"})
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
			ID             string
			DepositAddress string
			PaymentOptions []struct{ AssetDefinitionID, AmountBaseUnits string }
			PaymentPlan    struct{ Title, RedirectURL string }
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
	// Once paid, the hosted page sends the customer back to the shop,
	// which finds their order by its cookie.
	if back := sess.Data.PaymentPlan.RedirectURL; back != shopSrv.URL+"/orders/mine" || sess.Data.PaymentPlan.Title != "T-shirt" {
		t.Fatalf("the shop's plan: %+v; want the title T-shirt and the redirect %s/orders/mine", sess.Data.PaymentPlan, shopSrv.URL)
	}
	req, _ := http.NewRequest(http.MethodGet, shopSrv.URL+"/orders/mine", nil)
	for _, c := range res.Cookies() {
		req.AddCookie(c)
	}
	mine, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	mine.Body.Close()
	if mine.StatusCode != http.StatusSeeOther || mine.Header.Get("Location") != "/orders/"+orderID {
		t.Fatalf("back at the shop: %d, Location %q; want a redirect to /orders/%s", mine.StatusCode, mine.Header.Get("Location"), orderID)
	}
	if page := get(t, orderURL); !strings.Contains(page, `<strong id="status">awaiting_payment</strong>`) {
		t.Fatalf("order page before payment:\n%s", page)
	}

	// Forged "completed" webhooks for the order's real session are refused
	// and change nothing: with a made-up signature, signed with another
	// secret, and unsigned.
	forged := fmt.Sprintf(`{"id":"evt_forged","type":"checkout.session.completed","data":{"id":%q,"status":"completed",`+
		`"amountPaidUsd":"25.00","exception":null,"metadata":{"orderId":%q},"version":99}}`, sess.Data.ID, orderID)
	other, _ := standardwebhooks.NewWebhook("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	otherSig, _ := other.Sign("evt_forged", time.Now(), []byte(forged))
	for _, sig := range []string{"v1,bm90IGEgc2lnbmF0dXJl", otherSig, ""} {
		req, _ := http.NewRequest(http.MethodPost, shopSrv.URL+"/webhooks", strings.NewReader(forged))
		if sig != "" {
			req.Header.Set("webhook-id", "evt_forged")
			req.Header.Set("webhook-timestamp", fmt.Sprint(time.Now().Unix()))
			req.Header.Set("webhook-signature", sig)
		}
		fres, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		fres.Body.Close()
		if fres.StatusCode != http.StatusBadRequest || !strings.Contains(get(t, orderURL), "awaiting_payment") {
			t.Fatalf("a forged webhook (signature %q): %d", sig, fres.StatusCode)
		}
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
	testwait.Until(t, 60*time.Second, func() (bool, string) {
		page := get(t, orderURL)
		return strings.Contains(page, `<strong id="status">paid</strong>`) && strings.Contains(page, "Paid: 25.00 USD"),
			fmt.Sprintf("the order never became paid:\n%s", page)
	})

	// A genuine but older event arriving late (as a retry would) is
	// answered and ignored: its version is below the one applied.
	late := fmt.Sprintf(`{"id":"evt_late","type":"checkout.session.expired","data":{"id":%q,"status":"expired",`+
		`"amountPaidUsd":"0.00","exception":null,"metadata":{"orderId":%q},"version":1}}`, sess.Data.ID, orderID)
	if code := deliver(t, hook["secret"].(string), shopSrv.URL+"/webhooks", "evt_late", late); code != http.StatusNoContent {
		t.Fatalf("a late event: %d", code)
	}
	if page := get(t, orderURL); !strings.Contains(page, `<strong id="status">paid</strong>`) {
		t.Fatalf("a late event changed the order:\n%s", page)
	}
}

// deliver signs body with secret as paymentsd does and POSTs it to url.
func deliver(t *testing.T, secret, url, id, body string) int {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	sig, _ := wh.Sign(id, now, []byte(body))
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", fmt.Sprint(now.Unix()))
	req.Header.Set("webhook-signature", sig)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
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
