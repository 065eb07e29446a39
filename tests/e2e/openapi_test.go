package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/paymentsd/paymentsd/api"
)

var (
	// One router per shape, made on first use.
	openAPIOnce   [2]sync.Once
	openAPIRouter [2]routers.Router
	openAPIErr    [2]error
)

// checkOpenAPI holds the API to its OpenAPI document (api/openapi.json):
// every REST call a test makes through `do` has its response validated
// (status, headers, body), and its request too when the API accepted it
// (2xx): the tests send malformed requests on purpose, and those must be
// refused, which their error responses, validated, show.
//
// secondShape holds the base URLs of the servers of the second shape,
// whose calls are checked against that shape's document.
var secondShape sync.Map

func checkOpenAPI(t *testing.T, req *http.Request, sent []byte, res *http.Response, body []byte) {
	t.Helper()
	shape := api.ShapeFirst
	if _, second := secondShape.Load(req.URL.Scheme + "://" + req.URL.Host); second {
		shape = api.ShapeSecond
	}
	if err := openAPIMismatchIn(shape, req, sent, res.StatusCode, res.Header, body); err != nil {
		t.Error(err)
	}
}

func openAPIMismatch(req *http.Request, sent []byte, status int, header http.Header, body []byte) error {
	return openAPIMismatchIn(api.ShapeFirst, req, sent, status, header, body)
}

func openAPIMismatchIn(shape api.Shape, req *http.Request, sent []byte, status int, header http.Header, body []byte) error {
	if !strings.HasPrefix(req.URL.Path, "/api/v1/") || req.URL.Path == "/api/v1/openapi.json" || req.URL.Path == "/api/v1/docs" {
		return nil // the hosted page and the document itself are not API calls
	}
	i := 0
	if shape == api.ShapeSecond {
		i = 1
	}
	openAPIOnce[i].Do(func() {
		doc, err := openapi3.NewLoader().LoadFromData(api.OpenAPIFor(shape))
		if err != nil {
			openAPIErr[i] = err
			return
		}
		doc.Servers = nil // any host: every test server has a port of its own
		openAPIRouter[i], openAPIErr[i] = gorillamux.NewRouter(doc)
	})
	if openAPIErr[i] != nil {
		return fmt.Errorf("the OpenAPI document: %w", openAPIErr[i])
	}
	r := req.Clone(context.Background())
	route, params, err := openAPIRouter[i].FindRoute(r)
	if err != nil {
		if status == http.StatusNotFound || status == http.StatusMethodNotAllowed {
			return nil // no such route: the API said so
		}
		return fmt.Errorf("%s %s is not in api/openapi.json: %w", req.Method, req.URL.Path, err)
	}
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, IncludeResponseStatus: true}
	in := &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route, Options: opts}
	if status < 300 {
		r.Body = io.NopCloser(bytes.NewReader(sent))
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			return fmt.Errorf("%s %s: the request does not match api/openapi.json: %w\n%s", req.Method, req.URL.Path, err, sent)
		}
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: status, Header: header,
		Body: io.NopCloser(bytes.NewReader(body)), Options: opts}
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		return fmt.Errorf("%s %s: the %d response does not match api/openapi.json: %w\n%.500s", req.Method, req.URL.Path, status, err, body)
	}
	return nil
}

// The check catches a drift: a response without a required field, of a
// wrong type, or with a status the document does not list, and a request
// with an unknown field.
func TestTheOpenAPICheckCatchesDrift(t *testing.T) {
	req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:1/api/v1/projects/proj_01k8zq3v5m0000000000000000", nil)
	h := http.Header{"Content-Type": {"application/json"}}
	good := `{"success":true,"statusCode":200,"message":"Project retrieved","data":{"id":"proj_01k8zq3v5m0000000000000000","name":"Shop","completeOn":"finalized","createdAt":"2026-01-01T00:00:00Z","updatedAt":"2026-01-01T00:00:00Z"},"meta":{"timestamp":"2026-01-01T00:00:00Z","requestId":"req_1","path":"/"}}`
	if err := openAPIMismatch(req, nil, 200, h, []byte(good)); err != nil {
		t.Fatalf("a good response: %v", err)
	}
	for name, c := range map[string]struct {
		status int
		body   string
	}{
		"no name":           {200, strings.Replace(good, `"name":"Shop",`, "", 1)},
		"a numeric name":    {200, strings.Replace(good, `"name":"Shop"`, `"name":5`, 1)},
		"an unlisted 418":   {418, good},
		"an error as a 200": {200, `{"success":false,"statusCode":200,"message":"x","error":{"code":"NOT_FOUND","message":"x","details":[]},"meta":{"timestamp":"2026-01-01T00:00:00Z","requestId":"r","path":"/"}}`},
	} {
		if err := openAPIMismatch(req, nil, c.status, h, []byte(c.body)); err == nil {
			t.Errorf("%s: not caught", name)
		}
	}
	post := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:1/api/v1/checkout/sessions", strings.NewReader(""))
	post.Header.Set("Content-Type", "application/json")
	created := strings.Replace(good, `"statusCode":200`, `"statusCode":201`, 1)
	if err := openAPIMismatch(post, []byte(`{"paymentPlanId":"plan_01k8zq3v5m0000000000000000","coupon":"X"}`), 201, h, []byte(created)); err == nil {
		t.Error("an accepted request with an unknown field: not caught")
	}
}
