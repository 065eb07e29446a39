package e2e

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"connectrpc.com/connect"

	v1 "github.com/paymentsd/paymentsd/api/gen/paymentsd/v1"
	"github.com/paymentsd/paymentsd/api/gen/paymentsd/v1/paymentsdv1connect"
)

func authed[T any](msg *T, key string) *connect.Request[T] {
	req := connect.NewRequest(msg)
	req.Header().Set("Authorization", "Bearer "+key)
	return req
}

// The same operation through Connect (JSON, binary and gRPC) and through
// REST gives the same record.
func TestConnectMatchesREST(t *testing.T) {
	ts, e, keys := sandboxAPI(t, apiOptions{tls: true})
	ctx := context.Background()
	protocols := map[string][]connect.ClientOption{
		"connect+json":  {connect.WithProtoJSON()},
		"connect+proto": nil,
		"grpc":          {connect.WithGRPC()},
	}
	for name, opts := range protocols {
		t.Run(name, func(t *testing.T) {
			payments := paymentsdv1connect.NewPaymentsServiceClient(ts.Client(), ts.URL, opts...)
			checkout := paymentsdv1connect.NewCheckoutServiceClient(ts.Client(), ts.URL, opts...)
			created, err := payments.CreatePaymentPlan(ctx, authed(&v1.CreatePaymentPlanRequest{ProjectId: keys.id,
				Title: ptr("Via " + name), AmountUsd: ptr("19.99"), RedirectUrl: ptr("https://shop.example/ok"),
				AcceptedAssetPolicies: []*v1.PolicyInput{{PolicyType: ptr("asset_definition"), AssetDefinitionId: ptr("usdc-devnet")}}}, keys.key))
			if err != nil {
				t.Fatal(err)
			}
			plan := created.Msg.PaymentPlan
			rest := get(t, ts.URL, "/api/v1/projects/"+keys.id+"/payment-plans/"+plan.Id, keys.key)
			mustStatus(t, rest, http.StatusOK)
			d := rest.data()
			if d["title"] != plan.Title || d["amountUsd"] != plan.GetAmountUsd() || d["createdAt"] != plan.CreatedAt ||
				d["status"] != plan.Status || d["redirectUrl"] != plan.GetRedirectUrl() || d["pricingModel"] != plan.PricingModel {
				t.Fatalf("REST %s\nConnect %v", rest.Raw, plan)
			}

			session, err := checkout.CreateCheckoutSession(ctx, connect.NewRequest(&v1.CreateCheckoutSessionRequest{
				PaymentPlanId: &plan.Id, Metadata: map[string]string{"via": name}}))
			if err != nil {
				t.Fatal(err)
			}
			cs := session.Msg.CheckoutSession
			byToken := get(t, ts.URL, "/api/v1/checkout/sessions/"+cs.GetToken(), "")
			mustStatus(t, byToken, http.StatusOK)
			sd := byToken.data()
			if sd["id"] != cs.Id || sd["amountUsd"] != cs.AmountUsd || sd["expiresAt"] != cs.ExpiresAt ||
				len(sd["paymentOptions"].([]any)) != len(cs.PaymentOptions) || cs.Metadata["via"] != name {
				t.Fatalf("REST %s\nConnect %v", byToken.Raw, cs)
			}
			public, err := checkout.GetCheckoutSession(ctx, connect.NewRequest(&v1.GetCheckoutSessionRequest{Token: cs.GetToken()}))
			if err != nil || public.Msg.CheckoutSession.Id != cs.Id || public.Msg.CheckoutSession.AmountUsd != sd["amountUsd"] ||
				public.Msg.CheckoutSession.PaymentPlan.GetTitle() != "Via "+name {
				t.Fatalf("public session: %v %v", public, err)
			}
			got, err := payments.GetProjectCheckoutSession(ctx, authed(&v1.GetProjectCheckoutSessionRequest{ProjectId: keys.id, SessionId: cs.Id}, keys.key))
			if err != nil || got.Msg.CheckoutSession.Status != "open" || got.Msg.CheckoutSession.Metadata["via"] != name {
				t.Fatalf("get session: %v %v", got, err)
			}
		})
	}

	client := paymentsdv1connect.NewPaymentsServiceClient(ts.Client(), ts.URL)
	_, err := client.CreatePaymentPlan(ctx, authed(&v1.CreatePaymentPlanRequest{ProjectId: keys.id, AmountUsd: ptr("-1")}, keys.key))
	var ce *connect.Error
	if !errors.As(err, &ce) || ce.Code() != connect.CodeInvalidArgument || len(ce.Details()) != 1 {
		t.Fatalf("validation error = %v", err)
	}
	detail, _ := ce.Details()[0].Value()
	if v, ok := detail.(*v1.ValidationError); !ok || len(v.Violations) != 2 {
		t.Fatalf("validation detail = %v", detail)
	}
	_, err = client.GetProject(ctx, connect.NewRequest(&v1.GetProjectRequest{ProjectId: keys.id}))
	if connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Fatalf("no key: %v", err)
	}
	other := newProject(t, e)
	_, err = client.GetProject(ctx, authed(&v1.GetProjectRequest{ProjectId: keys.id}, other.SandboxKey))
	if connect.CodeOf(err) != connect.CodeNotFound {
		t.Fatalf("other project: %v", err)
	}
	list, err := client.ListTransactions(ctx, authed(&v1.ListTransactionsRequest{ProjectId: keys.id, Query: &v1.ListQuery{Limit: 500}}, keys.key))
	if connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Fatalf("limit 500: %v %v", list, err)
	}
}
