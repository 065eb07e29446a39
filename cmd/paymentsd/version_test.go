package main

import (
	"bytes"
	"testing"

	"github.com/paymentsd/paymentsd/internal/version"
)

// `paymentsd version` prints the release and the revision.
func TestVersionPrintsTheReleaseAndRevision(t *testing.T) {
	var out bytes.Buffer
	if err := runVersion(&out); err != nil {
		t.Fatal(err)
	}
	want := "paymentsd " + version.Version + " (revision " + version.Revision() + ")\n"
	if out.String() != want {
		t.Fatalf("paymentsd version printed %q, want %q", out.String(), want)
	}
}
