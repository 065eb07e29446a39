package api

import (
	"net/http"
	"slices"
	"testing"

	"github.com/paymentsd/paymentsd/service"
)

// serversOfEachShape builds a server of each API shape: the second serves
// one route with another access.
func serversOfEachShape(t *testing.T) []*Server {
	t.Helper()
	var out []*Server
	for _, shape := range []Shape{ShapeFirst, ShapeSecond} {
		s, err := New(service.New(service.Deps{}), Config{Shape: shape})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		out = append(out, s)
	}
	return out
}

// Every REST route is an operation of the table, served with its tier and,
// where it reads a credential, its scope; and every operation is served.
func TestEveryRouteIsInTheOperationsTable(t *testing.T) {
	for _, s := range serversOfEachShape(t) {
		served := map[string]bool{}
		for _, r := range s.Routes() {
			key := r.Method + " " + r.Pattern
			served[key] = true
			op, ok := operationsByRoute[key]
			if !ok {
				t.Errorf("%s is served but not in the operations table", key)
				continue
			}
			if r.Tier != op.tier {
				t.Errorf("%s is limited in tier %s; the table says %s", key, r.Tier, op.tier)
			}
			if (r.Access == "api_key" || r.Access == "api_key_optional") && r.Scope != op.scope {
				t.Errorf("%s needs scope %q of a token; the table says %q", key, r.Scope, op.scope)
			}
		}
		for _, op := range operations {
			if !served[op.rest] {
				t.Errorf("the operations table has %s, which no route serves (shape %s)", op.rest, s.Shape)
			}
		}
	}
}

// Every Connect procedure is an operation of the table, and every
// procedure the table names is served.
func TestEveryProcedureIsInTheOperationsTable(t *testing.T) {
	procedures := connectProcedures()
	if len(procedures) == 0 {
		t.Fatal("no Connect procedure found")
	}
	for _, proc := range procedures {
		if _, ok := procedureOperation(proc); !ok {
			t.Errorf("%s is served but not in the operations table", proc)
		}
	}
	for _, op := range operations {
		if op.procedure != "" && !slices.Contains(procedures, op.procedure) {
			t.Errorf("the operations table names %s, which no service has", op.procedure)
		}
	}
}

// A Connect procedure and its REST twin are limited in the same tier and
// need the same scope of an access token, and read a credential alike.
func TestConnectTwinsShareTierAndScope(t *testing.T) {
	s := serversOfEachShape(t)[0]
	routes := map[string]Route{}
	for _, r := range s.Routes() {
		routes[r.Method+" "+r.Pattern] = r
	}
	twins := 0
	for _, proc := range connectProcedures() {
		op, _ := procedureOperation(proc)
		r, ok := routes[op.rest]
		if !ok {
			t.Errorf("%s has no REST twin served (%s)", proc, op.rest)
			continue
		}
		twins++
		if r.Tier != op.tier {
			t.Errorf("%s is limited in tier %s, its twin %s in %s", proc, op.tier, op.rest, r.Tier)
		}
		keyed := op.access == apiKey || op.access == optionalKey
		if keyed != (r.Access == "api_key" || r.Access == "api_key_optional") {
			t.Errorf("%s reads a credential: %v; its twin %s is %s", proc, keyed, op.rest, r.Access)
		}
		if keyed && r.Scope != op.scope {
			t.Errorf("%s needs scope %q, its twin %s %q", proc, op.scope, op.rest, r.Scope)
		}
	}
	if twins != len(connectProcedures()) {
		t.Errorf("%d of %d procedures have a REST twin", twins, len(connectProcedures()))
	}
}

// A route registered with a tier or access the table does not say, or
// one the table lacks, stops the server from being built.
func TestARouteApartFromTheTableIsRefused(t *testing.T) {
	s := serversOfEachShape(t)[0]
	for name, register := range map[string]func(){
		"another tier": func() {
			s.route("/api/v1/projects/{projectId}/refunds/{refundId}", map[string]endpoint{http.MethodGet: {Strict, apiKey, nil}})
		},
		"another access": func() {
			s.route("/api/v1/projects/{projectId}/refunds/{refundId}", map[string]endpoint{http.MethodGet: {Relaxed, public, nil}})
		},
		"not in the table": func() { s.handle("/api/v1/nowhere", handlers{http.MethodGet: nil}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: the route was registered", name)
				}
			}()
			register()
		}()
	}
}
