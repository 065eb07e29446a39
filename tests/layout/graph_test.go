package layout

import (
	"slices"
	"strings"
	"testing"
)

// topOf is the folder at the top of the tree a package lives in.
func topOf(pkg string) string {
	top, _, _ := strings.Cut(pkg, "/")
	return top
}

// folderGraph is the import graph between the top folders: for each
// folder, the folders its non-test files import, each with one file that
// does, to name in a failure.
type folderGraph map[string]map[string]string

// cycles returns each cycle of the graph once, as the folders it passes
// through from its smallest name back to it ("a → b → a").
func (g folderGraph) cycles() []string {
	seen := map[string]bool{}
	var found []string
	for _, from := range sortedKeys(g) {
		for _, to := range sortedKeys(g[from]) {
			path := g.path(to, from)
			if path == nil {
				continue
			}
			loop := append([]string{from}, path[:len(path)-1]...) // from → to → …, back to from
			i := slices.Index(loop, slices.Min(loop))
			loop = slices.Concat(loop[i:], loop[:i], loop[i:i+1])
			key := strings.Join(loop, " → ")
			if !seen[key] {
				seen[key] = true
				found = append(found, key)
			}
		}
	}
	return found
}

// path finds the shortest way from one folder to another by their imports,
// both ends included, or nil when there is none.
func (g folderGraph) path(from, to string) []string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if n == to {
			var p []string
			for ; n != ""; n = prev[n] {
				p = append([]string{n}, p...)
			}
			return p
		}
		for _, next := range sortedKeys(g[n]) {
			if _, ok := prev[next]; !ok {
				prev[next] = n
				queue = append(queue, next)
			}
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// The top folders import each other without a circle: a reader can take
// them in an order where each uses only those before it. Go refuses a
// cycle between packages, not between folders; a folder cycle is the
// first step to one, and it hides which part is the floor. Test files do
// not count: a test may reach up to run what it tests.
func TestTheTopFoldersImportWithoutACircle(t *testing.T) {
	// The finder itself first: a graph with a known circle.
	known := folderGraph{"a": {"b": ""}, "b": {"c": ""}, "c": {"a": "", "d": ""}, "d": {}}
	if got := known.cycles(); !slices.Equal(got, []string{"a → b → c → a"}) {
		t.Fatalf("the cycle finder reads a → b → c → a as %q", got)
	}

	g := folderGraph{}
	walkFiles(t, func(f goFile) {
		from := topOf(f.pkg)
		for _, dep := range f.imports {
			to := topOf(dep)
			if to == from {
				continue
			}
			if g[from] == nil {
				g[from] = map[string]string{}
			}
			if _, ok := g[from][to]; !ok {
				g[from][to] = f.pkg + "/" + f.name + " imports " + dep
			}
		}
	})
	if len(g) < 8 {
		t.Fatalf("the graph has %d folders that import others: the walk missed the tree", len(g))
	}
	for _, c := range g.cycles() {
		folders := strings.Split(c, " → ")
		var why []string
		for i := 0; i+1 < len(folders); i++ {
			why = append(why, g[folders[i]][folders[i+1]])
		}
		t.Errorf("the top folders import in a circle, %s: %s (docs/decisions.md, \"The layout of the tree\")",
			c, strings.Join(why, "; "))
	}
	if testing.Verbose() {
		for _, from := range sortedKeys(g) {
			t.Logf("%s → %s", from, strings.Join(sortedKeys(g[from]), ", "))
		}
	}
}

// internal/ is the floor: its packages use the standard library, modules
// from outside and each other, never the engine's areas above them. A
// package that needs the store, the domain or the workflows belongs in
// that area's folder (the domain's views in payment/views, the OAuth
// server in service/oauth, a session's start and the money-out reader in
// activities).
func TestInternalIsTheFloor(t *testing.T) {
	read := 0
	walkFiles(t, func(f goFile) {
		if topOf(f.pkg) != "internal" {
			return
		}
		read++
		for _, dep := range f.imports {
			if topOf(dep) != "internal" {
				t.Errorf("%s/%s imports %s: internal/ is the floor and imports nothing of the module outside it; move the package to the area it serves (docs/decisions.md, \"The layout of the tree\")",
					f.pkg, f.name, dep)
			}
		}
	})
	if read < 30 {
		t.Fatalf("read %d files under internal/: the walk missed them", read)
	}
}
