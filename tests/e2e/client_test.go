package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/paymentsd/paymentsd/internal/keys"
	"github.com/paymentsd/paymentsd/service"
	"github.com/paymentsd/paymentsd/tests/stacktest"
)

// clients holds the HTTP clients of TLS test servers, by base URL.
var clients sync.Map

// response is a decoded API response.
type response struct {
	Status int
	Header http.Header
	Body   map[string]any
	Raw    []byte
}

func (r response) data() map[string]any { m, _ := r.Body["data"].(map[string]any); return m }
func (r response) list() []any          { a, _ := r.Body["data"].([]any); return a }
func (r response) meta() map[string]any { m, _ := r.Body["meta"].(map[string]any); return m }
func (r response) pagination() map[string]any {
	m, _ := r.meta()["pagination"].(map[string]any)
	return m
}
func (r response) errorCode() string {
	e, _ := r.Body["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

// detailFields lists the fields named by a validation error's details.
func (r response) detailFields() []string {
	e, _ := r.Body["error"].(map[string]any)
	details, _ := e["details"].([]any)
	var out []string
	for _, d := range details {
		out = append(out, d.(map[string]any)["field"].(string))
	}
	return out
}

type request struct {
	method  string
	path    string
	key     string
	body    any // string or a value to encode
	headers map[string]string
}

func do(t *testing.T, base string, req request) response {
	t.Helper()
	var body io.Reader
	var sent []byte
	switch b := req.body.(type) {
	case nil:
	case string:
		sent = []byte(b)
		body = bytes.NewReader(sent)
	default:
		sent, _ = json.Marshal(b)
		body = bytes.NewReader(sent)
	}
	r, err := http.NewRequest(req.method, base+req.path, body)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	if req.key != "" {
		r.Header.Set("Authorization", "Bearer "+req.key)
	}
	for k, v := range req.headers {
		r.Header.Set(k, v)
	}
	c := http.DefaultClient
	if tc, ok := clients.Load(base); ok {
		c = tc.(*http.Client)
	}
	res, err := c.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	checkOpenAPI(t, r, sent, res, raw)
	out := response{Status: res.StatusCode, Header: res.Header, Raw: raw}
	if err := json.Unmarshal(raw, &out.Body); err != nil {
		t.Fatalf("%s %s: body is not JSON (%d): %s", req.method, req.path, res.StatusCode, raw)
	}
	return out
}

func get(t *testing.T, base, path, key string) response {
	t.Helper()
	return do(t, base, request{method: http.MethodGet, path: path, key: key})
}

func post(t *testing.T, base, path, key string, body any) response {
	t.Helper()
	return do(t, base, request{method: http.MethodPost, path: path, key: key, body: body})
}

// newProject creates a project with its two API keys and a deposit key for
// each environment.
func newProject(t *testing.T, svc *service.Service) service.CreatedProject {
	t.Helper()
	p, err := stacktest.Project(svc, "Shop "+t.Name())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// projectAPI starts an API server as newAPI does and creates a project in
// it, as newProject does.
func projectAPI(t *testing.T, opts apiOptions) (*httptest.Server, *service.Service, service.CreatedProject) {
	t.Helper()
	ts, e := newAPI(t, opts)
	return ts, e, newProject(t, e)
}

// sandboxAPI is projectAPI for a test that calls the project with its
// sandbox key alone.
func sandboxAPI(t *testing.T, opts apiOptions) (*httptest.Server, *service.Service, projectKeys) {
	t.Helper()
	ts, e, p := projectAPI(t, opts)
	return ts, e, projectKeys{p.Project.ID, p.SandboxKey}
}

// walletOf returns the account keys (m/44'/60'/0') of a test wallet made
// for one project environment.
func walletOf(t testing.TB, projectID string, live bool) (xprv, xpub string) {
	seed := sha256.Sum256([]byte(fmt.Sprintf("%s/%v", projectID, live)))
	xprv, xpub, err := keys.NewDevKey(seed[:])
	if err != nil {
		t.Fatal(err)
	}
	return xprv, xpub
}

// mustStatus fails the test unless the response has the status.
func mustStatus(t *testing.T, r response, status int) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status = %d, want %d: %s", r.Status, status, r.Raw)
	}
}

func str(v any) string { s, _ := v.(string); return s }

// httptestServer serves h on loopback for the test's lifetime.
func httptestServer(t *testing.T, h http.Handler) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}
