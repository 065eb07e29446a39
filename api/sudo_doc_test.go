package api

import (
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/paymentsd/paymentsd/api/internal/rest"
	"github.com/paymentsd/paymentsd/service"
)

// The document marks exactly the sensitive routes x-sensitive-action
// (sudo mode), every one of them a route of the router.
func TestTheDocumentMarksTheSensitiveRoutes(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(openAPI)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(service.New(service.Deps{}), Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	seen := map[string]bool{}
	for _, r := range s.Routes() {
		item := doc.Paths.Find(r.Pattern)
		if item == nil || item.GetOperation(r.Method) == nil {
			continue // TestTheOpenAPIDocumentMatchesTheRouter reports it
		}
		marked := item.GetOperation(r.Method).Extensions["x-sensitive-action"] == true
		if marked != SensitiveRoute(r.Method, r.Pattern) {
			t.Errorf("%s %s: x-sensitive-action %v; sudo mode says %v", r.Method, r.Pattern, marked, SensitiveRoute(r.Method, r.Pattern))
		}
		seen[r.Method+" "+r.Pattern] = true
	}
	for _, route := range rest.SensitiveRoutes() {
		if !seen[route] {
			t.Errorf("%s is sensitive but no route of the router", route)
		}
	}
}
