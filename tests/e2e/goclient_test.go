package e2e

import (
	"context"
	"testing"

	"connectrpc.com/connect"

	paymentsdv1 "github.com/paymentsd/paymentsd/api/gen/paymentsd/v1"
	"github.com/paymentsd/paymentsd/client"
)

// The Go client, as another module imports it: the key set once, a plan
// created, a session opened server-side and read back by the merchant and
// by the customer's token.
func TestGoClient(t *testing.T) {
	ts, _, keys := sandboxAPI(t, apiOptions{})
	ctx := context.Background()
	c := client.New(ts.URL+"/", keys.key)
	title, amount := "Client plan", "7.50"
	plan, err := c.Payments.CreatePaymentPlan(ctx, connect.NewRequest(&paymentsdv1.CreatePaymentPlanRequest{
		ProjectId: keys.id, Title: &title, AmountUsd: &amount}))
	if err != nil {
		t.Fatal(err)
	}
	md := `{"orderId":42}`
	s, err := c.Checkout.CreateCheckoutSession(ctx, connect.NewRequest(&paymentsdv1.CreateCheckoutSessionRequest{
		PaymentPlanId: &plan.Msg.PaymentPlan.Id, MetadataJson: &md}))
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Payments.GetProjectCheckoutSession(ctx, connect.NewRequest(&paymentsdv1.GetProjectCheckoutSessionRequest{
		ProjectId: keys.id, SessionId: s.Msg.CheckoutSession.Id}))
	if err != nil || got.Msg.CheckoutSession.AmountUsd != "7.50" || got.Msg.CheckoutSession.MetadataJson != md {
		t.Fatalf("session = %v, %v", got, err)
	}
	public := client.NewPublic(ts.URL)
	byToken, err := public.Checkout.GetCheckoutSession(ctx, connect.NewRequest(&paymentsdv1.GetCheckoutSessionRequest{
		Token: s.Msg.CheckoutSession.GetToken()}))
	if err != nil || byToken.Msg.CheckoutSession.Id != s.Msg.CheckoutSession.Id {
		t.Fatalf("by token = %v, %v", byToken, err)
	}
	if _, err := public.Payments.GetProject(ctx, connect.NewRequest(&paymentsdv1.GetProjectRequest{ProjectId: keys.id})); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Fatalf("the public client reached the merchant's service: %v", err)
	}
}
