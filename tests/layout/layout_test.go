// Package layout holds the tree to the shape docs/decisions.md describes
// ("The layout of the tree"): imports point one way, from the processes
// down to the domain, and production code never reaches into what only
// development and the tests run.
package layout

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/paymentsd/paymentsd/"

// tiers orders the module's packages: a package imports only packages of
// a lower tier, except the top tier (the binaries, the dev stack and the
// tests), whose parts may use each other. A folder's entry covers the
// packages under it unless a longer entry names them.
var tiers = map[string]int{
	"internal/version": 0,
	// Standard library only: a secret file's reading and checking, and
	// children that die with their parent.
	"internal/secretfile": 0,
	"internal/childproc":  0,
	// Standard library only: endpoints and secrets out of logs and errors.
	"internal/redact": 0,

	"payment":                1,
	"internal/keys":          1,
	"internal/observability": 1,
	"internal/auth":          1,
	"internal/postgres":      1,
	"internal/temporalconn":  1,
	// The test kits, in one place: a wait for a condition, certificates
	// for TLS, a redis-server of a test's own (which waits with testwait).
	"internal/testkit/testwait": 1,
	"internal/testkit/testpki":  1,
	"api/gen":                   1,
	"api/web":                   1,
	// Standard library only: which of a network's nodes the engine
	// believes, for the RPC clients.
	"internal/nodetrust": 1,

	"internal/evmrpc":            2,
	"internal/btckeys":           2,
	"internal/btcrpc":            2,
	"internal/testkit/redistest": 2,
	// The domain's records as the API and webhooks show them.
	"payment/views":      2,
	"internal/sweep":     2,
	"internal/ratelimit": 2,
	"webhook":            2,
	"workflows":          2,

	"chainwatch":        3,
	"internal/btcsweep": 3,

	"store": 4,

	// Where a refund's or payout's transaction stands, over the store's
	// records and the chains; a session's workflow's start, which the
	// scan's signal-with-start makes too.
	"activities/sentlook":     5,
	"activities/sessionstart": 5,

	"activities": 6,
	// The OAuth 2.1 server, its state in the store.
	"service/oauth": 6,

	"service": 7,

	"api":    8,
	"worker": 8,

	"cmd":    9,
	"dev":    9,
	"tests":  9,
	"client": 9,
}

const top = 9

// tierOf finds a package's tier by its longest listed folder.
func tierOf(pkg string) (int, bool) {
	for p := pkg; p != "." && p != ""; p = filepath.Dir(p) {
		if t, ok := tiers[p]; ok {
			return t, true
		}
	}
	return 0, false
}

// goFile is one handwritten, non-test Go file of the module: its folder
// (the package's path in the module) and the module's packages it imports,
// whatever its build tags.
type goFile struct {
	pkg, name string
	imports   []string
}

// walkFiles reads every non-test Go file of the module, under every build
// tag (the parser reads them all), and hands each to fn.
func walkFiles(t *testing.T, fn func(goFile)) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		files++
		g := goFile{pkg: filepath.ToSlash(rel), name: name}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(p, module) {
				g.imports = append(g.imports, strings.TrimPrefix(p, module))
			}
		}
		fn(g)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read %d files: the walk missed the tree", files)
	}
}

func TestImportsPointOneWay(t *testing.T) {
	walkFiles(t, func(f goFile) {
		rel := f.pkg
		from, ok := tierOf(rel)
		if !ok {
			t.Errorf("%s: package %s has no tier: add it to the tiers of this test and to docs/decisions.md", rel, rel)
			return
		}
		for _, dep := range f.imports {
			to, ok := tierOf(dep)
			switch {
			case !ok:
				t.Errorf("%s imports %s, which has no tier", rel, dep)
			case strings.HasPrefix(dep+"/", rel+"/") || strings.HasPrefix(rel+"/", dep+"/"):
				// a package and the packages in its own folder
			case to == from && topOf(rel) == topOf(dep) && layerAreas[topOf(rel)] != nil:
				// a layer's areas and its floor: TestAreasBuildOneWay
			case to > from || (to == from && from != top):
				t.Errorf("%s/%s imports %s: an import runs back up (tier %d imports tier %d; docs/decisions.md, \"The layout of the tree\")",
					rel, f.name, dep, from, to)
			}
		}
	})
}

// The top level stays a map: the entries a newcomer sees there are these.
func TestTheTopLevelIsAMap(t *testing.T) {
	entries, err := os.ReadDir("../..")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"CHANGELOG.md": true, "Makefile": true, "README.md": true, "docker-compose.yml": true,
		"go.mod": true, "go.sum": true, "activities": true, "api": true, "chainwatch": true, "client": true, "cmd": true,
		"deploy": true, "dev": true, "docs": true, "internal": true, "payment": true, "service": true, "store": true,
		"tests": true, "webhook": true, "worker": true, "workflows": true}
	for _, e := range entries {
		n := e.Name()
		if strings.HasPrefix(n, ".") || n == "bin" || n == "paymentsd" {
			continue // hidden, and the build's outputs (.gitignore)
		}
		if !want[n] {
			t.Errorf("%s at the top level: give it a place under one of the folders there (docs/decisions.md, \"The layout of the tree\")", n)
		}
	}
}

// The dev build embeds the Temporal server without what its auto-scaled
// workers compile in to scale workers on the clouds (the SDKs of AWS,
// Google Cloud Run and Kubernetes): dev/tools/autoscaledworkers stands in
// for that module, and no other path may bring them back.
func TestTheDevBuildLeavesTheCloudsOut(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{with .Replace}}{{.Path}}{{end}}", "go.temporal.io/auto-scaled-workers").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	if got := strings.TrimSpace(string(out)); got != "./dev/tools/autoscaledworkers" {
		t.Errorf("go.temporal.io/auto-scaled-workers is replaced by %q, want ./dev/tools/autoscaledworkers", got)
	}
	cmd := exec.Command("go", "list", "-deps", "-tags", "devstack", "./cmd/paymentsd")
	cmd.Dir = "../.."
	out, err = cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "go.temporal.io/server/temporal") {
		t.Fatalf("the dev build does not embed the Temporal server (%d packages): is the devstack tag still the switch?", len(deps))
	}
	for _, p := range deps {
		for _, cloud := range []string{"k8s.io/", "cloud.google.com/go/run", "github.com/aws/aws-sdk-go-v2/service/ecs",
			"github.com/aws/aws-sdk-go-v2/service/lambda", "github.com/aws/aws-sdk-go-v2/service/bedrock"} {
			if strings.HasPrefix(p, cloud) {
				t.Errorf("the dev build compiles %s", p)
			}
		}
	}
}
