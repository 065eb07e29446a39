package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"connectrpc.com/connect"

	paymentsdv1 "github.com/paymentsd/paymentsd/api/gen/paymentsd/v1"
	"github.com/paymentsd/paymentsd/api/gen/paymentsd/v1/paymentsdv1connect"
	"github.com/paymentsd/paymentsd/client"
)

// authEcho answers GetProject and ListAssets with the Authorization header
// it received (in the project's name, in the first asset's name). The
// engine itself is exercised by tests/e2e's TestGoClient.
type authEcho struct {
	paymentsdv1connect.UnimplementedPaymentsServiceHandler
	paymentsdv1connect.UnimplementedCheckoutServiceHandler
}

func (authEcho) GetProject(_ context.Context, req *connect.Request[paymentsdv1.GetProjectRequest]) (*connect.Response[paymentsdv1.GetProjectResponse], error) {
	return connect.NewResponse(&paymentsdv1.GetProjectResponse{Project: &paymentsdv1.Project{
		Id: req.Msg.ProjectId, Name: req.Header().Get("Authorization")}}), nil
}

func (authEcho) ListAssets(_ context.Context, req *connect.Request[paymentsdv1.ListAssetsRequest]) (*connect.Response[paymentsdv1.ListAssetsResponse], error) {
	return connect.NewResponse(&paymentsdv1.ListAssetsResponse{Assets: []*paymentsdv1.Asset{{
		Name: req.Header().Get("Authorization") + "|" + req.Peer().Protocol}}}), nil
}

func newServer(t *testing.T, tls bool) *httptest.Server {
	mux := http.NewServeMux()
	mux.Handle(paymentsdv1connect.NewPaymentsServiceHandler(authEcho{}))
	mux.Handle(paymentsdv1connect.NewCheckoutServiceHandler(authEcho{}))
	srv := httptest.NewUnstartedServer(mux)
	if tls {
		srv.EnableHTTP2 = true
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv
}

func TestKeyOnEveryCall(t *testing.T) {
	srv := newServer(t, false)
	ctx := context.Background()
	// A trailing slash on the base URL is fine.
	c := client.New(srv.URL+"/", "svc_test_abc")
	p, err := c.Payments.GetProject(ctx, connect.NewRequest(&paymentsdv1.GetProjectRequest{ProjectId: "proj_1"}))
	if err != nil || p.Msg.Project.Id != "proj_1" || p.Msg.Project.Name != "Bearer svc_test_abc" {
		t.Fatalf("GetProject = %v, %v", p, err)
	}
	a, err := c.Checkout.ListAssets(ctx, connect.NewRequest(&paymentsdv1.ListAssetsRequest{}))
	if err != nil || a.Msg.Assets[0].Name != "Bearer svc_test_abc|connect" {
		t.Fatalf("ListAssets = %v, %v", a, err)
	}

	public := client.NewPublic(srv.URL)
	a, err = public.Checkout.ListAssets(ctx, connect.NewRequest(&paymentsdv1.ListAssetsRequest{}))
	if err != nil || a.Msg.Assets[0].Name != "|connect" {
		t.Fatalf("the public client sent a key: %v, %v", a, err)
	}
}

func TestOptions(t *testing.T) {
	srv := newServer(t, true)
	c := client.New(srv.URL, "svc_live_xyz", client.WithHTTPClient(srv.Client()), client.WithConnectOptions(connect.WithGRPC()))
	a, err := c.Checkout.ListAssets(context.Background(), connect.NewRequest(&paymentsdv1.ListAssetsRequest{}))
	if err != nil || a.Msg.Assets[0].Name != "Bearer svc_live_xyz|grpc" {
		t.Fatalf("ListAssets over gRPC = %v, %v", a, err)
	}
}
