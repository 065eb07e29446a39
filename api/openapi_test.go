package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"google.golang.org/protobuf/reflect/protoreflect"

	v1 "github.com/paymentsd/paymentsd/api/gen/paymentsd/v1"
	"github.com/paymentsd/paymentsd/api/gen/paymentsd/v1/paymentsdv1connect"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service"
)

// The document is valid OpenAPI 3.1, and it and the router agree: every
// route has its operation, with the route's rate-limit tier, and every
// operation under /api/v1 is a route.
func TestTheOpenAPIDocumentMatchesTheRouter(t *testing.T) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(openAPI)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("the document is not valid: %v", err)
	}
	if !doc.IsOpenAPI31OrLater() {
		t.Fatalf("openapi %q; want 3.1", doc.OpenAPI)
	}
	s, err := New(service.New(service.Deps{}), Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	routes := map[string]Route{}
	for _, r := range s.Routes() {
		if strings.HasPrefix(r.Pattern, "/checkout/") || strings.HasPrefix(r.Pattern, "/pay/") || strings.HasPrefix(r.Pattern, "/refund/") {
			continue // the hosted pages: HTML, not the API
		}
		routes[r.Method+" "+r.Pattern] = r
		item := doc.Paths.Find(r.Pattern)
		if item == nil || item.GetOperation(r.Method) == nil {
			t.Errorf("%s %s has no operation in api/openapi.json", r.Method, r.Pattern)
			continue
		}
		var tier string
		_ = json.Unmarshal(mustJSON(item.GetOperation(r.Method).Extensions["x-rate-limit-tier"]), &tier)
		if tier != string(r.Tier) {
			t.Errorf("%s %s: x-rate-limit-tier %q; the router's is %q", r.Method, r.Pattern, tier, r.Tier)
		}
		// An access token's scope is documented as the router checks it,
		// and every route that takes API keys has one.
		var documented string
		for _, req := range *orEmpty(item.GetOperation(r.Method).Security) {
			if sc, ok := req["oauth2"]; ok && len(sc) == 1 {
				documented = sc[0]
			}
		}
		if documented != r.Scope {
			t.Errorf("%s %s: oauth2 scope %q in api/openapi.json; the router's is %q", r.Method, r.Pattern, documented, r.Scope)
		}
		if (r.Access == "api_key" || r.Access == "api_key_optional") && !slices.Contains(payment.ScopeNames(), r.Scope) {
			t.Errorf("%s %s takes API keys but no OAuth scope (%q)", r.Method, r.Pattern, r.Scope)
		}
		// Every route that reads a body (the API reads one on every POST
		// and PATCH, if only to refuse fields an action does not take)
		// says what it takes: a requestBody with a schema.
		if r.Method == http.MethodPost || r.Method == http.MethodPatch {
			rb := item.GetOperation(r.Method).RequestBody
			if rb == nil || rb.Value == nil || len(rb.Value.Content) == 0 {
				t.Errorf("%s %s reads a body; its operation has no requestBody", r.Method, r.Pattern)
				continue
			}
			for ct, mt := range rb.Value.Content {
				if mt.Schema == nil {
					t.Errorf("%s %s: the %s requestBody has no schema", r.Method, r.Pattern, ct)
				}
			}
			if r.Access != "oauth" && rb.Value.Content["application/json"] == nil {
				t.Errorf("%s %s reads JSON; its requestBody does not", r.Method, r.Pattern)
			}
		}
		// And every API operation says what it answers (the OAuth
		// endpoints answer as RFC 6749 says: redirects, empty 200s).
		answers := r.Access == "oauth"
		for code, res := range item.GetOperation(r.Method).Responses.Map() {
			answers = answers || code[0] == '2' && res.Value != nil && len(res.Value.Content) > 0
		}
		if !answers {
			t.Errorf("%s %s: no 2xx response with a body", r.Method, r.Pattern)
		}
	}
	// The document and the reference page are routes too: the test above
	// holds them to the document.
	for _, path := range []string{"/api/v1/openapi.json", "/api/v1/docs"} {
		if _, ok := routes["GET "+path]; !ok {
			t.Errorf("GET %s is not in the route table", path)
		}
	}
	for path, item := range doc.Paths.Map() {
		if !strings.HasPrefix(path, "/api/v1/") {
			continue
		}
		for method := range item.Operations() {
			if _, ok := routes[method+" "+path]; !ok {
				t.Errorf("api/openapi.json has %s %s, which no route serves", method, path)
			}
		}
	}
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }

// The document and its reference page are served, the page with nothing
// from elsewhere.
func orEmpty(s *openapi3.SecurityRequirements) *openapi3.SecurityRequirements {
	if s == nil {
		return &openapi3.SecurityRequirements{}
	}
	return s
}

// Every Connect procedure that takes API keys names the OAuth scope of
// its REST twin.
func TestEveryKeyedProcedureHasAScope(t *testing.T) {
	for _, sd := range []protoreflect.ServiceDescriptor{
		v1.File_paymentsd_v1_payments_proto.Services().ByName("PaymentsService"),
	} {
		for i := 0; i < sd.Methods().Len(); i++ {
			proc := "/" + string(sd.FullName()) + "/" + string(sd.Methods().Get(i).Name())
			if op, _ := procedureOperation(proc); !slices.Contains(payment.ScopeNames(), op.scope) {
				t.Errorf("%s has no OAuth scope", proc)
			}
		}
	}
	if op, _ := procedureOperation(paymentsdv1connect.CheckoutServiceCreateCheckoutSessionProcedure); op.scope != "checkout_sessions:write" {
		t.Error("CreateCheckoutSession with a token needs checkout_sessions:write")
	}
}

func TestTheDocumentAndTheReferenceAreServed(t *testing.T) {
	s, err := New(service.New(service.Deps{}), Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	res, err := http.Get(srv.URL + "/api/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	_ = json.NewDecoder(res.Body).Decode(&doc)
	res.Body.Close()
	if res.StatusCode != 200 || doc["openapi"] != "3.1.0" {
		t.Fatalf("openapi.json: %d %v", res.StatusCode, doc["openapi"])
	}
	page, err := referencePage(openAPI)
	if err != nil {
		t.Fatal(err)
	}
	html := string(page)
	for _, want := range []string{"/api/v1/projects/{projectId}/payment-plans", "createCheckoutSession", "Rate-limit tier: strict"} {
		if want == "createCheckoutSession" {
			want = "Open a checkout session"
		}
		if !strings.Contains(html, want) {
			t.Errorf("the reference page lacks %q", want)
		}
	}
	for _, foreign := range []string{"<script", "https://", "http://"} {
		if strings.Contains(html, foreign) {
			t.Errorf("the reference page holds %q: it must load nothing from elsewhere", foreign)
		}
	}
}

// The second shape's document is valid OpenAPI 3.1 and says what differs:
// its statuses, its transactions list's parameters, a session by ID with
// credentials, the session token as a bearer token.
func TestTheSecondShapeDocument(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(OpenAPIFor(ShapeSecond))
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("the second shape's document is not valid: %v", err)
	}
	if got := doc.Components.Schemas["Transaction"].Value.Properties["status"].Value.Enum; len(got) != 3 || got[1] != "completed" {
		t.Errorf("transaction statuses %v", got)
	}
	for _, p := range doc.Paths.Find("/api/v1/projects/{projectId}/transactions").Get.Parameters {
		if n := p.Value.Name; n == "from" || n == "to" || n == "isLive" {
			t.Errorf("the second shape lists %s", n)
		}
	}
	if doc.Components.SecuritySchemes["sessionBearer"] == nil || len(*doc.Paths.Find("/api/v1/checkout/sessions/{sessionToken}").Get.Security) != 4 {
		t.Error("no session bearer, or no credentials on the session by ID")
	}
	// It describes every route the first shape's does, bodies included.
	first, _ := openapi3.NewLoader().LoadFromData(OpenAPIFor(ShapeFirst))
	for path, item := range first.Paths.Map() {
		for method, op := range item.Operations() {
			second := doc.Paths.Find(path)
			if second == nil || second.GetOperation(method) == nil {
				t.Errorf("the second shape's document lacks %s %s", method, path)
				continue
			}
			if (op.RequestBody == nil) != (second.GetOperation(method).RequestBody == nil) {
				t.Errorf("%s %s: the shapes' documents differ on its requestBody", method, path)
			}
		}
	}
	if first.Components.SecuritySchemes["sessionBearer"] != nil {
		t.Error("the first shape's document changed")
	}
}
