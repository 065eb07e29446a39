package worker

import (
	"testing"

	"github.com/paymentsd/paymentsd/workflows"
)

// A starting worker takes the deployment over from an earlier release or
// another build of its own, never from a later release: a pod of the
// release being drained that restarts does not take the new sessions back.
func TestAWorkerTakesOverOnlyFromAnEarlierRelease(t *testing.T) {
	for _, c := range []struct {
		current, mine string
		later         bool
	}{
		{"v0.2.0+abc", "v0.1.0+def", true},
		{"v0.10.0+abc", "v0.9.3+def", true},
		{"v1.0.0+abc", "v0.99.0+def", true},
		{"v0.1.0+abc", "v0.2.0+def", false},
		{"v0.2.0+abc", "v0.2.0+def", false},               // another build of the release
		{"v0.2.0-rc.1+abc", "v0.2.0+def", false},          // a candidate, then the release
		{"v0.2.0+abc", "v0.2.0-rc.1+def", true},           // the release, then a candidate restarting
		{"7edbccbb37e51292de2295f0", "v0.2.0+def", false}, // not one of the engine's build IDs
		{"v0.2.0+abc", "", false},
	} {
		if got := laterRelease(c.current, c.mine); got != c.later {
			t.Errorf("laterRelease(%q, %q) = %v, want %v", c.current, c.mine, got, c.later)
		}
	}
}

// The build IDs the workers give are the ones the session's workflow
// recognises as a worker deployment's; v0.1.0's binary checksums are not.
func TestTheBuildIDNamesTheReleaseAndTheRevision(t *testing.T) {
	for _, c := range []struct{ release, revision, want string }{
		{"v0.2.0", "1a2b3c", "v0.2.0+1a2b3c"},
		{"0.2.0", "unknown", "v0.2.0+unknown"},
		{"v0.2.0", "1a2b3c-dirty", "v0.2.0+1a2b3c-dirty"},
	} {
		got := workflows.BuildID(c.release, c.revision)
		if got != c.want || !workflows.FromWorkerDeployment(got) {
			t.Errorf("BuildID(%q, %q) = %q (from a worker deployment: %v), want %q", c.release, c.revision, got, workflows.FromWorkerDeployment(got), c.want)
		}
	}
	if workflows.FromWorkerDeployment("7edbccbb37e51292de2295f063e2f4c3") || workflows.FromWorkerDeployment("") {
		t.Error("v0.1.0's binary checksum, or no build ID, taken for a worker deployment's")
	}
}
