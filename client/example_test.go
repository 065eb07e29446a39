package client_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"connectrpc.com/connect"

	paymentsdv1 "github.com/paymentsd/paymentsd/api/gen/paymentsd/v1"
	"github.com/paymentsd/paymentsd/client"
)

// A merchant's server creates a plan, opens a checkout session for it and
// sends the customer to the session's hosted page.
func Example() {
	ctx := context.Background()
	c := client.New(os.Getenv("PAYMENTSD_URL"), os.Getenv("PAYMENTSD_API_KEY"))
	project := os.Getenv("PAYMENTSD_PROJECT")
	title, amount := "T-shirt", "25.00"
	plan, err := c.Payments.CreatePaymentPlan(ctx, connect.NewRequest(&paymentsdv1.CreatePaymentPlanRequest{
		ProjectId: project, Title: &title, AmountUsd: &amount}))
	if err != nil {
		log.Fatal(err)
	}
	orderID := `{"orderId":"A-1001"}`
	session, err := c.Checkout.CreateCheckoutSession(ctx, connect.NewRequest(&paymentsdv1.CreateCheckoutSessionRequest{
		PaymentPlanId: &plan.Msg.PaymentPlan.Id, MetadataJson: &orderID}))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("redirect the customer to", session.Msg.CheckoutSession.GetUrl())
}
