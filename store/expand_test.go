package store

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// lastReleasedMigration is the newest migration of the latest release
// (v0.1.0, CHANGELOG.md). The migrations after it run while that
// release's api and worker still serve (migrations first, then the new
// pods), so they may only expand the schema; what they replace is dropped
// a release later (docs/operations.md, "Migrations").
const lastReleasedMigration = 25

// What a running older release does not survive: tables, columns and
// constraints it uses gone or renamed, a column's type changed, a column
// it does not fill made mandatory.
var contracting = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\bDROP\s+TABLE\b`),
	regexp.MustCompile(`(?i)\bDROP\s+COLUMN\b`),
	regexp.MustCompile(`(?i)\bDROP\s+CONSTRAINT\b`),
	regexp.MustCompile(`(?i)\bRENAME\b`),
	regexp.MustCompile(`(?i)\bALTER\s+COLUMN\s+\w+\s+(SET\s+DATA\s+)?TYPE\b`),
	regexp.MustCompile(`(?i)\bSET\s+NOT\s+NULL\b`),
}

// addColumn is a column added to a table; NOT NULL without a DEFAULT
// breaks an older release's inserts.
var addColumn = regexp.MustCompile(`(?i)\bADD\s+COLUMN\b[^;,]*`)

func TestMigrationsSinceTheLastReleaseOnlyExpand(t *testing.T) {
	files, err := filepath.Glob("migrations/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no migrations: %v", err)
	}
	checked := 0
	for _, f := range files {
		n, err := strconv.Atoi(strings.SplitN(filepath.Base(f), "_", 2)[0])
		if err != nil {
			t.Fatalf("%s: no number", f)
		}
		if n <= lastReleasedMigration {
			continue
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		up, _, _ := strings.Cut(string(raw), "-- +goose Down")
		var sql []string
		for _, line := range strings.Split(up, "\n") {
			if code, _, _ := strings.Cut(line, "--"); strings.TrimSpace(code) != "" {
				sql = append(sql, code)
			}
		}
		body := strings.Join(sql, "\n")
		var found []string
		for _, re := range contracting {
			if m := re.FindString(body); m != "" {
				found = append(found, m)
			}
		}
		for _, m := range addColumn.FindAllString(body, -1) {
			upper := strings.ToUpper(m)
			if strings.Contains(upper, "NOT NULL") && !strings.Contains(upper, "DEFAULT") {
				found = append(found, m)
			}
		}
		for _, m := range found {
			t.Errorf("%s contracts the schema a running release uses (%q): expand now, contract a release later", filepath.Base(f), m)
		}
		checked++
	}
	if checked == 0 {
		t.Log("no migration since the last release")
	}
}
