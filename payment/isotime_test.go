package payment

import (
	"testing"
	"time"
)

func TestParseISOTime(t *testing.T) {
	utc := func(s string) time.Time { v, _ := time.Parse(time.RFC3339Nano, s); return v }
	for _, c := range []struct {
		in       string
		want     time.Time
		dateOnly bool
	}{
		{"2026-01-31", utc("2026-01-31T00:00:00Z"), true},
		{"2026-01-31T12:00:00Z", utc("2026-01-31T12:00:00Z"), false},
		{"2026-01-31T12:00", utc("2026-01-31T12:00:00Z"), false},
		{"2026-01-31T12:00Z", utc("2026-01-31T12:00:00Z"), false},
		{"2026-01-31T12:00:05", utc("2026-01-31T12:00:05Z"), false},
		{"2026-01-31T12:00:05.25Z", utc("2026-01-31T12:00:05.25Z"), false},
		{"2026-01-31T12:00:05,123456789Z", utc("2026-01-31T12:00:05.123456789Z"), false},
		{"2026-01-31T14:00+02:00", utc("2026-01-31T12:00:00Z"), false},
		{"2026-01-31T14:00:00+0200", utc("2026-01-31T12:00:00Z"), false},
		{"2026-01-31T07:00:00-05", utc("2026-01-31T12:00:00Z"), false},
		{"2026-01-31 12:00:00z", utc("2026-01-31T12:00:00Z"), false},
		{"20260131T120005Z", utc("2026-01-31T12:00:05Z"), false},
		{"20260131", utc("2026-01-31T00:00:00Z"), true},
	} {
		got, dateOnly, ok := ParseISOTime(c.in)
		if !ok || !got.Equal(c.want) || dateOnly != c.dateOnly || got.Location() != time.UTC {
			t.Errorf("ParseISOTime(%q) = %v, %v, %v; want %v, %v", c.in, got, dateOnly, ok, c.want, c.dateOnly)
		}
	}
	for _, in := range []string{"", "2026", "2026-01", "2026-1-31", "2026-02-30", "2026-13-01", "2026-01-31T24:00",
		"2026-01-31T12:60", "2026-01-31T12:00:60", "2026-01-31T12", "2026-W05-6", "2026-031", "2026-01-31T12:00+25:00",
		"2026-01-31T12:00:00.1234567890Z", "31/01/2026", "2026-01-31T12:00:00 UTC", "tomorrow"} {
		if got, _, ok := ParseISOTime(in); ok {
			t.Errorf("ParseISOTime(%q) = %v; want it refused", in, got)
		}
	}
}

func FuzzParseISOTime(f *testing.F) {
	for _, s := range []string{"2026-01-31", "2026-01-31T12:00", "2026-01-31T14:00:05,5+0200", "20260131T120005Z", "2026-02-30", "2026-01-31T12:00:00.000000001-23:59"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, dateOnly, ok := ParseISOTime(s)
		if !ok {
			return
		}
		if got.Location() != time.UTC {
			t.Fatalf("%q: %v is not UTC", s, got)
		}
		// What is accepted reads back the same in RFC 3339, the output
		// format.
		again, d2, ok := ParseISOTime(got.Format(time.RFC3339Nano))
		if !ok || !again.Equal(got) || d2 {
			t.Fatalf("%q: %v does not read back (%v, %v)", s, got, again, ok)
		}
		if dateOnly && (got.Hour() != 0 || got.Minute() != 0) {
			t.Fatalf("%q: a date at %v", s, got)
		}
	})
}
