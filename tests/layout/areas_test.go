package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// areas are the areas of the store's, the service's and the REST handlers'
// views (docs/decisions.md, "The house by areas"), by their accessor's
// name in each layer.
var areas = []string{"Identity", "Access", "Checkout", "Payments", "MoneyOut", "Webhooks", "Chains"}

// areaCalls are the calls an area's operations may make to another area of
// their own layer: what money in, money out and the chains' checks build
// on. Every other area stands alone in its layer (it reaches the others
// through the layer below, or not at all), so no area is built on one
// that is built on it.
var areaCalls = map[string][]string{
	"Checkout": {},
	"Webhooks": {},
	"Payments": {"Checkout"},             // a payment belongs to a session
	"MoneyOut": {"Checkout", "Chains"},   // a refund to a session's payer; an item's chain records
	"Chains":   {"Checkout", "Payments"}, // the watched addresses; the reconciliation's repairs
	"Access":   {"Checkout"},             // a member's view of a session
	"Identity": {"Access"},               // a password change ends the applications' grants
}

// TestAreasBuildOneWay holds each layer's areas to areaCalls: a method of
// one area calls another of its layer's areas only where the table says
// it may.
func TestAreasBuildOneWay(t *testing.T) {
	for _, layer := range []string{"store", "service", "api"} {
		edges := areaEdges(t, layer)
		for edge, where := range edges {
			from, to, _ := strings.Cut(edge, " -> ")
			if !slices.Contains(areaCalls[from], to) {
				t.Errorf("%s: %s calls %s (%s): not in areaCalls (tests/layout/areas_test.go); call it through the layer below, or add the edge if the area really builds on it",
					layer, from, to, where)
			}
		}
		var list []string
		for e := range edges {
			list = append(list, e)
		}
		sort.Strings(list)
		t.Logf("%s: %s", layer, strings.Join(list, "; "))
	}
	if c := folderGraph(areaGraph()).cycles(); len(c) > 0 {
		t.Errorf("areaCalls has a circle: %v", c)
	}
}

// areaGraph is areaCalls as a graph.
func areaGraph() map[string]map[string]string {
	g := map[string]map[string]string{}
	for from, tos := range areaCalls {
		g[from] = map[string]string{}
		for _, to := range tos {
			g[from][to] = "areaCalls"
		}
	}
	return g
}

// areaEdges finds, in a layer's package, the calls from a method of one
// area to another area's accessor (x.Checkout()), with where the first is.
func areaEdges(t *testing.T, layer string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("../..", layer, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in %s: %v", layer, err)
	}
	edges := map[string]string{}
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || fd.Body == nil {
				continue
			}
			from := areaOf(receiverName(fd.Recv.List[0].Type))
			if !slices.Contains(areas, from) || len(fd.Recv.List[0].Names) == 0 {
				continue
			}
			recv := fd.Recv.List[0].Names[0].Name
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) > 0 {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				to := areaOf(sel.Sel.Name)
				if !slices.Contains(areas, to) || to == from {
					return true
				}
				if x, ok := sel.X.(*ast.Ident); !ok || x.Name != recv {
					return true // another value's method, or the layer below's area (svc.store.X())
				}
				edge := from + " -> " + to
				if _, seen := edges[edge]; !seen {
					edges[edge] = fset.Position(call.Pos()).String()
				}
				return true
			})
		}
	}
	return edges
}

// areaOf is the area a name stands for: the store's and the service's
// area types and accessors are the area's name (Checkout), the REST
// handlers' types and accessors its lower-case form (checkoutAPI,
// checkout()).
func areaOf(name string) string {
	name = strings.TrimSuffix(name, "API")
	if name == "" {
		return ""
	}
	return strings.ToUpper(name[:1]) + name[1:]
}
