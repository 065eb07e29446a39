// Command shop runs the example shop (package shop) against a paymentsd:
//
//	PAYMENTSD_URL=http://127.0.0.1:8080 PAYMENTSD_API_KEY=svc_test_… PAYMENTSD_PLAN_ID=plan_… \
//	WEBHOOK_SECRET=whsec_… go run ./examples/shop
//
// then register http://127.0.0.1:3000/webhooks as a webhook endpoint of the
// project (its secret is WEBHOOK_SECRET) and open http://127.0.0.1:3000.
package main

import (
	"log"
	"net/http"
	"os"

	"github.com/paymentsd/paymentsd/examples/shop/shop"
)

func main() {
	s, err := shop.New(shop.Config{
		PaymentsdURL:  os.Getenv("PAYMENTSD_URL"),
		APIKey:        os.Getenv("PAYMENTSD_API_KEY"),
		PlanID:        os.Getenv("PAYMENTSD_PLAN_ID"),
		WebhookSecret: os.Getenv("WEBHOOK_SECRET"),
		Product:       "A paymentsd T-shirt",
		PriceUSD:      "25.00",
	})
	if err != nil {
		log.Fatal(err)
	}
	addr := os.Getenv("SHOP_ADDR")
	if addr == "" {
		addr = "127.0.0.1:3000"
	}
	log.Printf("shop on http://%s", addr)
	log.Fatal(http.ListenAndServe(addr, s.Handler()))
}
