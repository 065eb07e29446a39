package payment

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ISO 8601 as clients send it. Accepted:
//   - a calendar date, 2026-01-31 (dateOnly);
//   - a date-time, 2026-01-31T12:00, with seconds (12:00:05) and a fraction
//     of up to 9 digits after "." or "," (12:00:05.25), with "T", "t" or a
//     space between date and time;
//   - an offset Z, +02:00, +0200 or +02, or none: a date-time without an
//     offset is read as UTC;
//   - the same in the basic format, 20260131T120005Z.
//
// Refused: week dates, ordinal dates, reduced or truncated forms, hour 24,
// leap seconds, and any date or time out of range (2026-02-30).
var (
	isoExtended = regexp.MustCompile(`^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(Z|z|[+-]\d{2}(?::?\d{2})?)?)?$`)
	isoBasic    = regexp.MustCompile(`^(\d{4})(\d{2})(\d{2})(?:[Tt](\d{2})(\d{2})(?:(\d{2})(?:[.,](\d{1,9}))?)?(Z|z|[+-]\d{2}(?:\d{2})?)?)?$`)
)

// ParseISOTime parses an ISO 8601 date or date-time (see above) and says
// whether it was a date only. The time returned is in UTC.
func ParseISOTime(s string) (t time.Time, dateOnly, ok bool) {
	m := isoExtended.FindStringSubmatch(s)
	if m == nil {
		if m = isoBasic.FindStringSubmatch(s); m == nil {
			return time.Time{}, false, false
		}
	}
	num := func(i int) int {
		n, _ := strconv.Atoi(m[i])
		return n
	}
	year, month, day := num(1), num(2), num(3)
	hour, minute, sec, nsec := 0, 0, 0, 0
	dateOnly = m[4] == ""
	if !dateOnly {
		hour, minute = num(4), num(5)
		if m[6] != "" {
			sec = num(6)
		}
		if m[7] != "" {
			nsec, _ = strconv.Atoi(m[7] + strings.Repeat("0", 9-len(m[7])))
		}
	}
	if month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, false, false
	}
	loc := time.UTC
	if off := m[8]; off != "" && off != "Z" && off != "z" {
		digits := strings.ReplaceAll(off[1:], ":", "")
		oh, _ := strconv.Atoi(digits[:2])
		om := 0
		if len(digits) == 4 {
			om, _ = strconv.Atoi(digits[2:])
		}
		if oh > 23 || om > 59 {
			return time.Time{}, false, false
		}
		secs := oh*3600 + om*60
		if off[0] == '-' {
			secs = -secs
		}
		loc = time.FixedZone("", secs)
	}
	t = time.Date(year, time.Month(month), day, hour, minute, sec, nsec, loc)
	if t.Day() != day || int(t.Month()) != month {
		return time.Time{}, false, false // 2026-02-30
	}
	if t = t.UTC(); t.Year() < 1 || t.Year() > 9999 {
		return time.Time{}, false, false // not writable back in four digits
	}
	return t, dateOnly, true
}
