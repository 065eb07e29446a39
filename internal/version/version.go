// Package version names the build: the release (v0.1.0 unless the build
// sets another) and the VCS revision it was built from.
package version

import (
	"runtime/debug"
	"sync"
)

// Version is the release. A release build sets it:
//
//	go build -ldflags "-X github.com/paymentsd/paymentsd/internal/version.Version=v0.2.0" ./cmd/paymentsd
var Version = "v0.1.0"

// revision is the VCS revision when the build sets it (-X, as a build
// from a tree without its .git does); else the Go toolchain's record.
var revision = ""

// Revision is the VCS revision the binary was built from, with "-dirty"
// when the tree had changes; "unknown" when the build recorded none (go
// run, go test, a tree without its .git).
func Revision() string {
	if revision != "" {
		return revision
	}
	return buildRevision()
}

var buildRevision = sync.OnceValue(func() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	return fromSettings(info.Settings)
})

// fromSettings reads the revision out of the build's settings.
func fromSettings(settings []debug.BuildSetting) string {
	rev, dirty := "", false
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "unknown"
	}
	if dirty {
		rev += "-dirty"
	}
	return rev
}

// String is the version and the revision, as `paymentsd version` prints
// them: "v0.1.0 (revision 1a2b3c…)".
func String() string {
	return Version + " (revision " + Revision() + ")"
}
