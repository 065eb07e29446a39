// Command shop runs the example shop (package shop) against a paymentsd.
// With `make dev` running (its project, key and plan are in .data/dev.json):
//
//	PAYMENTSD_URL=http://127.0.0.1:8080 PAYMENTSD_API_KEY=svc_test_… PAYMENTSD_PROJECT_ID=proj_… \
//	WEBHOOK_SECRET=whsec_… go run ./client/examples/shop
//
// WEBHOOK_SECRET is the secret of a webhook endpoint of the project whose
// url reaches the shop's /webhooks: http://127.0.0.1:3000/webhooks itself,
// or `paymentsd dev listen --forward-to http://127.0.0.1:3000/webhooks`
// (docs/webhooks.md). Then open http://127.0.0.1:3000.
//
// The environment:
//
//	PAYMENTSD_URL         paymentsd's base URL (no /api/v1)
//	PAYMENTSD_API_KEY     the project's API key
//	PAYMENTSD_PLAN_ID     the plan to sell by; unset, the shop creates one at start
//	PAYMENTSD_PROJECT_ID  the project to create that plan in
//	WEBHOOK_SECRET        the webhook endpoint's secret (whsec_…)
//	SHOP_ADDR             where the shop listens (127.0.0.1:3000)
//	SHOP_URL              where customers reach it (http://SHOP_ADDR); a plan the
//	                      shop creates sends them back to SHOP_URL/orders/mine
package main

import (
	"context"
	"log"
	"net/http"
	"os"

	"github.com/paymentsd/paymentsd/client/examples/shop/shop"
)

func main() {
	addr := os.Getenv("SHOP_ADDR")
	if addr == "" {
		addr = "127.0.0.1:3000"
	}
	shopURL := os.Getenv("SHOP_URL")
	if shopURL == "" {
		shopURL = "http://" + addr
	}
	s, err := shop.New(context.Background(), shop.Config{
		PaymentsdURL:  os.Getenv("PAYMENTSD_URL"),
		APIKey:        os.Getenv("PAYMENTSD_API_KEY"),
		PlanID:        os.Getenv("PAYMENTSD_PLAN_ID"),
		ProjectID:     os.Getenv("PAYMENTSD_PROJECT_ID"),
		WebhookSecret: os.Getenv("WEBHOOK_SECRET"),
		ShopURL:       shopURL,
		Product:       "A paymentsd T-shirt",
		PriceUSD:      "25.00",
	})
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("shop on %s (plan %s), webhooks at %s/webhooks", shopURL, s.PlanID(), shopURL)
	log.Fatal(http.ListenAndServe(addr, s.Handler()))
}
