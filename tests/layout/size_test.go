package layout

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The sizes a reader can take in at once (docs/decisions.md, "The house by
// areas"): a handwritten Go file of at most maxFileLines lines, a
// production function of at most maxFuncLines, and an exported type with
// at most maxMethods exported methods, those its embedded types lend it
// included.
const (
	maxFileLines = 600
	maxFuncLines = 100
	maxMethods   = 60
)

// sourceFile is one handwritten Go file of the tree, parsed.
type sourceFile struct {
	rel  string // slash path from the root
	dir  string
	test bool
	fset *token.FileSet
	ast  *ast.File
	src  []byte
}

// handwritten walks the tree's Go files, leaving out generated code (the
// protobuf and Connect code, the contracts' bindings: anything that says
// it is generated).
func handwritten(t *testing.T) []sourceFile {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var files []sourceFile
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		files = append(files, sourceFile{rel: rel, dir: filepath.ToSlash(filepath.Dir(rel)), test: strings.HasSuffix(path, "_test.go"),
			fset: fset, ast: f, src: src})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 200 {
		t.Fatalf("read %d files: the walk missed the tree", len(files))
	}
	return files
}

func TestFilesAndFunctionsStaySmall(t *testing.T) {
	for _, f := range handwritten(t) {
		if n := bytes.Count(f.src, []byte("\n")); n > maxFileLines {
			t.Errorf("%s: %d lines, over %d: split it by what it does", f.rel, n, maxFileLines)
		}
		if f.test || strings.HasPrefix(f.rel, "tests/") {
			continue // the function bound is production code's
		}
		for _, d := range f.ast.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			lines := f.fset.Position(fd.End()).Line - f.fset.Position(fd.Pos()).Line + 1
			if lines > maxFuncLines {
				t.Errorf("%s: %s is %d lines, over %d: split it into steps", f.rel, fd.Name.Name, lines, maxFuncLines)
			}
		}
	}
}

func TestNoTypeHoldsEverything(t *testing.T) {
	type typeKey struct{ dir, name string }
	methods := map[typeKey]map[string]bool{} // exported methods declared on a type
	embeds := map[typeKey][]string{}         // the package's types a struct embeds
	exported := map[typeKey]bool{}
	for _, f := range handwritten(t) {
		if f.test {
			continue
		}
		for _, d := range f.ast.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					continue
				}
				k := typeKey{f.dir, receiverName(d.Recv.List[0].Type)}
				if methods[k] == nil {
					methods[k] = map[string]bool{}
				}
				methods[k][d.Name.Name] = true
			case *ast.GenDecl:
				for _, s := range d.Specs {
					ts, ok := s.(*ast.TypeSpec)
					if !ok {
						continue
					}
					k := typeKey{f.dir, ts.Name.Name}
					exported[k] = ts.Name.IsExported()
					if st, ok := ts.Type.(*ast.StructType); ok {
						for _, fl := range st.Fields.List {
							if len(fl.Names) == 0 {
								embeds[k] = append(embeds[k], receiverName(fl.Type))
							}
						}
					}
				}
			}
		}
	}
	var set func(k typeKey, seen map[typeKey]bool) map[string]bool
	set = func(k typeKey, seen map[typeKey]bool) map[string]bool {
		out := map[string]bool{}
		if seen[k] {
			return out
		}
		seen[k] = true
		for m := range methods[k] {
			out[m] = true
		}
		for _, e := range embeds[k] {
			for m := range set(typeKey{k.dir, e}, seen) {
				out[m] = true
			}
		}
		return out
	}
	type count struct {
		name               string
		own, exported, all int
	}
	var counts []count
	for k, isExported := range exported {
		all := set(k, map[typeKey]bool{})
		c := count{name: k.dir + "." + k.name, own: len(methods[k]), all: len(all)}
		for m := range all {
			if ast.IsExported(m) {
				c.exported++
			}
		}
		if isExported && c.exported > maxMethods {
			t.Errorf("%s has %d exported methods, over %d: split it by area (docs/decisions.md, \"The house by areas\")", c.name, c.exported, maxMethods)
		}
		counts = append(counts, c)
	}
	// The largest, for docs/decisions.md: go test -v -run TestNoTypeHoldsEverything ./tests/layout
	sort.Slice(counts, func(i, j int) bool { return counts[i].own > counts[j].own })
	for _, c := range counts[:min(12, len(counts))] {
		t.Logf("%-28s %3d methods of its own, %3d with its embedded types', %3d of them exported", c.name, c.own, c.all, c.exported)
	}
}

// receiverName is the name of a receiver's or an embedded field's type:
// T, *T, T[P].
func receiverName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return receiverName(x.X)
	case *ast.IndexExpr:
		return receiverName(x.X)
	case *ast.IndexListExpr:
		return receiverName(x.X)
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return x.Sel.Name
	}
	return ""
}
