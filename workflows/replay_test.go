package workflows_test

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/paymentsd/paymentsd/workflows"
)

// releases holds the histories recorded from real runs of each release's
// workflow code, a folder per release (scripts/record-histories.sh), and
// SHA256SUMS, which pins every file: a release's histories are added, never
// changed or removed.
const releases = "testdata/releases"

// The workflows replay every history of every release: a change that
// would break executions a running deployment still has fails here, and
// must go through workflow.GetVersion (docs/operations.md, "Deploying
// while workflows run").
func TestReplayRecordedHistories(t *testing.T) {
	files := releaseFiles(t)
	if len(files) == 0 {
		t.Fatal("no recorded histories in " + releases)
	}
	r := worker.NewWorkflowReplayer()
	workflows.Register(r)
	byRelease := map[string]map[string]bool{}
	for _, f := range files {
		b, err := os.Open(filepath.Join(releases, f))
		if err != nil {
			t.Fatal(err)
		}
		h, err := client.HistoryFromJSON(b, client.HistoryJSONOptions{})
		b.Close()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		release := filepath.Dir(f)
		if byRelease[release] == nil {
			byRelease[release] = map[string]bool{}
		}
		byRelease[release][h.Events[0].GetWorkflowExecutionStartedEventAttributes().GetWorkflowType().GetName()] = true
		if err := r.ReplayWorkflowHistory(nil, h); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	// The newest release recorded every workflow type there is; together
	// the releases cover them all.
	all := map[string]bool{}
	var newest string
	for release, types := range byRelease {
		for name := range types {
			all[name] = true
		}
		if release != "earlier" && release > newest {
			newest = release
		}
	}
	for _, d := range workflows.Definitions() {
		if !all[d.Name] {
			t.Errorf("no recorded history of %s in %s", d.Name, releases)
		}
		if newest != "" && !byRelease[newest][d.Name] {
			t.Errorf("the newest release, %s, has no recorded history of %s", newest, d.Name)
		}
	}
}

// Every history file is pinned by SHA256SUMS, and every pinned file is
// there, unchanged: a release's recordings are never rewritten, so a
// change cannot make them pass by recording them again.
func TestRecordedHistoriesAreNeverRewritten(t *testing.T) {
	f, err := os.Open(filepath.Join(releases, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pinned := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("SHA256SUMS: malformed line %q", sc.Text())
		}
		pinned[name] = sum
	}
	files := releaseFiles(t)
	for _, name := range files {
		b, err := os.ReadFile(filepath.Join(releases, name))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		want, ok := pinned[name]
		switch {
		case !ok:
			t.Errorf("%s is not in SHA256SUMS: add a release's histories with scripts/record-histories.sh", name)
		case want != hex.EncodeToString(sum[:]):
			t.Errorf("%s was changed after its release; record the new shape as a new release instead", name)
		}
	}
	for name := range pinned {
		if !slices.Contains(files, name) {
			t.Errorf("%s, pinned in SHA256SUMS, is gone: a running deployment may still have such executions", name)
		}
	}
}

// releaseFiles lists the histories, relative to releases.
func releaseFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(releases, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".json") {
			rel, _ := filepath.Rel(releases, path)
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
