package workflows_test

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/paymentsd/paymentsd/workflows"
)

// releases holds the histories recorded from real runs of each release's
// workflow code, a folder per release named by its version (v0.1.0, the
// replay floor, first; dev/scripts/record-histories.sh), and SHA256SUMS,
// which pins every file: a release's histories are added, never changed or
// removed.
const releases = "testdata/releases"

// unreleased are the workflow types added since the newest release: no
// deployment has executions of them to strand yet. Recording the next
// release's histories (dev/scripts/record-histories.sh, whose tests
// record one of each) takes them off this list.
var unreleased = []string{workflows.WorkflowOutgoing, workflows.WorkflowFinalityWatch}

// The workflows replay every history of every release: a change that
// would break executions a running deployment still has fails here, and
// must go through workflow.GetVersion (docs/operations.md, "Releases and
// upgrades").
func TestReplayRecordedHistories(t *testing.T) {
	versions := releaseVersions(t)
	if len(versions) == 0 {
		t.Fatalf("no release folder in %s: record the current release's histories with "+
			"make record-histories RELEASE=v0.1.0 (or the version being released)", releases)
	}
	r := worker.NewWorkflowReplayer()
	workflows.Register(r)
	for _, release := range versions {
		types := map[string]bool{}
		files, err := filepath.Glob(filepath.Join(releases, release, "*.json"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			types[replay(t, r, f)] = true
		}
		// Every release recorded every workflow type it had; the newest
		// one has every type there is.
		if release != versions[len(versions)-1] {
			continue
		}
		for _, d := range workflows.Definitions() {
			if !types[d.Name] && !slices.Contains(unreleased, d.Name) {
				t.Errorf("the newest release, %s, has no recorded history of %s", release, d.Name)
			}
		}
	}
}

// replay replays one recorded history and returns its workflow type.
func replay(t *testing.T, r worker.WorkflowReplayer, file string) string {
	t.Helper()
	b, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	h, err := client.HistoryFromJSON(b, client.HistoryJSONOptions{})
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if err := r.ReplayWorkflowHistory(nil, h); err != nil {
		t.Errorf("%s: %v", file, err)
	}
	return h.Events[0].GetWorkflowExecutionStartedEventAttributes().GetWorkflowType().GetName()
}

// releaseVersions lists the release folders, oldest first. Every folder
// there is a release named by its version: anything else fails the test,
// so that no release's histories are skipped.
func releaseVersions(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(releases)
	if err != nil {
		t.Fatal(err)
	}
	var versions []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if _, ok := parseVersion(e.Name()); !ok {
			t.Fatalf("%s/%s: a release folder is named by its version, like v0.1.0", releases, e.Name())
		}
		versions = append(versions, e.Name())
	}
	slices.SortFunc(versions, func(a, b string) int {
		va, _ := parseVersion(a)
		vb, _ := parseVersion(b)
		return slices.Compare(va, vb)
	})
	return versions
}

// parseVersion reads vMAJOR.MINOR.PATCH.
func parseVersion(name string) ([]int, bool) {
	parts := strings.Split(strings.TrimPrefix(name, "v"), ".")
	if !strings.HasPrefix(name, "v") || len(parts) != 3 {
		return nil, false
	}
	v := make([]int, 3)
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || strconv.Itoa(n) != p {
			return nil, false
		}
		v[i] = n
	}
	return v, true
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
			t.Errorf("%s is not in SHA256SUMS: add a release's histories with dev/scripts/record-histories.sh", name)
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
