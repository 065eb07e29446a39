package version

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestTheRevisionComesFromTheBuildSettings(t *testing.T) {
	for _, c := range []struct {
		settings []debug.BuildSetting
		want     string
	}{
		{nil, "unknown"},
		{[]debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "false"}}, "abc123"},
		{[]debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}}, "abc123-dirty"},
	} {
		if got := fromSettings(c.settings); got != c.want {
			t.Errorf("fromSettings(%v) = %q, want %q", c.settings, got, c.want)
		}
	}
}

func TestStringNamesTheVersionAndTheRevision(t *testing.T) {
	if Version != "v0.1.0" {
		t.Errorf("Version = %q, want the release's default v0.1.0", Version)
	}
	old := revision
	defer func() { revision = old }()
	revision = "feedbeef"
	if got := String(); got != "v0.1.0 (revision feedbeef)" {
		t.Errorf("String() = %q", got)
	}
	if !strings.HasPrefix(Revision(), "feedbeef") {
		t.Errorf("Revision() = %q, want the one the build set", Revision())
	}
}
