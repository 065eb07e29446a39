package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
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

// areaFolders are the folders of the areas in each layer split into them:
// store/checkout, service/moneyout, api/webhooks.
var areaFolders = map[string]string{
	"Identity": "identity", "Access": "access", "Checkout": "checkout", "Payments": "payments",
	"MoneyOut": "moneyout", "Webhooks": "webhooks", "Chains": "chains",
}

// layerAreas are the areas each layer has: the REST handlers have no
// chains' area (the networks' state is the service's, shown by /readyz).
var layerAreas = map[string][]string{
	"store":   areas,
	"service": areas,
	"api":     {"Identity", "Access", "Checkout", "Payments", "MoneyOut", "Webhooks"},
}

// areaEdges finds a layer's edges between its areas, with where each
// first is: the imports between its area folders, or, in a layer still
// in one package, the calls from a method of one area to another's
// accessor (x.Checkout()).
func areaEdges(t *testing.T, layer string) map[string]string {
	t.Helper()
	if edges, ok := importEdges(t, layer); ok {
		return edges
	}
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

// importEdges finds the imports between a layer's area folders, and holds
// its floor (<layer>/internal/...) below every area. It tells whether the
// layer has area folders at all.
func importEdges(t *testing.T, layer string) (map[string]string, bool) {
	t.Helper()
	folderArea := map[string]string{}
	for area, folder := range areaFolders {
		folderArea[layer+"/"+folder] = area
	}
	edges, found := map[string]string{}, false
	err := filepath.WalkDir(filepath.Join("../..", layer), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		rel, _ := filepath.Rel("../..", filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		from, inArea := folderArea[rel]
		inFloor := strings.HasPrefix(rel, layer+"/internal/")
		if !inArea && !inFloor {
			return nil
		}
		found = found || inArea
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			dep, _ := strconv.Unquote(imp.Path.Value)
			to, isArea := folderArea[strings.TrimPrefix(dep, module)]
			switch {
			case !isArea || to == from:
			case inFloor:
				t.Errorf("%s imports the area %s: a layer's floor stands below its areas", path, dep)
			default:
				if _, seen := edges[from+" -> "+to]; !seen {
					edges[from+" -> "+to] = path
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return edges, found
}

// TestEachAreaIsAFolder holds each layer to its areas' folders: one
// package an area, whose comment says what it holds, and no area's
// methods left in the layer's root package.
func TestEachAreaIsAFolder(t *testing.T) {
	for layer, names := range layerAreas {
		for _, area := range names {
			dir := filepath.Join("../..", layer, areaFolders[area])
			files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
			names, said := map[string]bool{}, false
			for _, path := range files {
				if strings.HasSuffix(path, "_test.go") {
					continue
				}
				f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments|parser.PackageClauseOnly)
				if err != nil {
					t.Fatal(err)
				}
				names[f.Name.Name] = true
				said = said || f.Doc != nil && strings.HasPrefix(f.Doc.Text(), "Package "+f.Name.Name+" ")
			}
			if len(names) != 1 {
				t.Errorf("%s: the area %s has no package of its own in %s", layer, area, dir)
				continue
			}
			if !said {
				t.Errorf("%s: no package comment says what the area holds (\"Package %s ...\")", dir, areaFolders[area])
			}
		}
	}
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
