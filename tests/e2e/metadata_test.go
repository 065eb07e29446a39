package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"connectrpc.com/connect"

	v1 "github.com/paymentsd/paymentsd/api/gen/paymentsd/v1"
	"github.com/paymentsd/paymentsd/api/gen/paymentsd/v1/paymentsdv1connect"
)

// bigList is a metadata array of n strings of 100 characters.
func bigList(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = strings.Repeat("m", 100)
	}
	return out
}

// metadataOf decodes the metadata of a response's session with its
// numbers as sent.
func metadataOf(t *testing.T, raw []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var env struct {
		Data struct {
			Metadata any `json:"metadata"`
		} `json:"data"`
	}
	if err := dec.Decode(&env); err != nil {
		t.Fatal(err)
	}
	return env.Data.Metadata
}

// Metadata is any JSON object: numbers (kept exact, however long), nested
// objects and arrays, booleans and null come back as they were sent, from
// the creation, the merchant's lookup and the Connect API.
func TestMetadataIsAnyJSONObject(t *testing.T) {
	ts, _, p := projectAPI(t, apiOptions{})
	planID := createPlan(t, ts.URL, p, map[string]any{"title": "Meta", "amountUsd": "5"})
	const metadata = `{"orderId":123,"price":12.50,"big":123456789012345678901234567890.000000001,"negative":-0.5,` +
		`"nested":{"items":[1,"two",null,true,{"sku":"A-1"}],"ok":false},"note":"<b>&"}`
	var sent any
	dec := json.NewDecoder(strings.NewReader(metadata))
	dec.UseNumber()
	if err := dec.Decode(&sent); err != nil {
		t.Fatal(err)
	}
	created := do(t, ts.URL, request{method: "POST", path: "/api/v1/checkout/sessions",
		body: `{"paymentPlanId":"` + planID + `","metadata":` + metadata + `}`})
	mustStatus(t, created, http.StatusCreated)
	if got := metadataOf(t, created.Raw); !reflect.DeepEqual(got, sent) {
		t.Fatalf("created session's metadata = %v; want %v", got, sent)
	}
	id := str(created.data()["id"])
	read := get(t, ts.URL, "/api/v1/projects/"+p.Project.ID+"/checkout-sessions/"+id, p.SandboxKey)
	mustStatus(t, read, http.StatusOK)
	if got := metadataOf(t, read.Raw); !reflect.DeepEqual(got, sent) {
		t.Fatalf("stored session's metadata = %v; want %v", got, sent)
	}

	// Connect: metadata_json carries the same, both ways.
	pc := paymentsdv1connect.NewPaymentsServiceClient(http.DefaultClient, ts.URL)
	cc := paymentsdv1connect.NewCheckoutServiceClient(http.DefaultClient, ts.URL)
	md := metadata
	res, err := cc.CreateCheckoutSession(context.Background(), connect.NewRequest(&v1.CreateCheckoutSessionRequest{PaymentPlanId: &planID, MetadataJson: &md}))
	if err != nil {
		t.Fatal(err)
	}
	got, err := pc.GetProjectCheckoutSession(context.Background(), authed(&v1.GetProjectCheckoutSessionRequest{ProjectId: p.Project.ID, SessionId: res.Msg.CheckoutSession.Id}, p.SandboxKey))
	if err != nil {
		t.Fatal(err)
	}
	var back any
	dec = json.NewDecoder(strings.NewReader(got.Msg.CheckoutSession.MetadataJson))
	dec.UseNumber()
	if err := dec.Decode(&back); err != nil || !reflect.DeepEqual(back, sent) {
		t.Fatalf("Connect metadata_json = %s (%v); want %s", got.Msg.CheckoutSession.MetadataJson, err, metadata)
	}
	if m := got.Msg.CheckoutSession.Metadata; len(m) != 1 || m["note"] != "<b>&" {
		t.Fatalf("Connect metadata map = %v; want the top-level strings", m)
	}
	bad := `[1]`
	_, err = cc.CreateCheckoutSession(context.Background(), connect.NewRequest(&v1.CreateCheckoutSessionRequest{PaymentPlanId: &planID, MetadataJson: &bad}))
	if connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Fatalf("metadata_json [1]: %v; want invalid_argument", err)
	}
}
