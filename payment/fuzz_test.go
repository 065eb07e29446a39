package payment

import (
	"errors"
	"net/url"
	"testing"
)

func FuzzParseListQuery(f *testing.F) {
	for _, seed := range []string{
		"", "page=2&limit=50", "status=pending&from=2026-01-01&to=2026-01-31T23:59:59Z&isLive=true",
		"page=0", "limit=1000", "from=2026-02-01&to=2026-01-01", "from=2026-01-31T12:00&to=2026-01-31T14:00%2B0200", "to=20260131T120005,5Z", "from=2026-02-30", "page=1&page=2", "x=%zz", "to=9999-12-31",
	} {
		f.Add(seed)
	}
	statuses := []string{"pending", "confirmed", "finalized", "failed"}
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		q, err := ParseListQuery(v, statuses)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Kind != KindValidation || len(e.Details) == 0 {
				t.Fatalf("%q: %v is not a validation error with details", raw, err)
			}
			return
		}
		if q.Page < 1 || q.Limit < 1 || q.Limit > MaxLimit || q.Offset() < 0 {
			t.Fatalf("%q: accepted out-of-range pagination %+v", raw, q)
		}
		if q.From != nil && q.To != nil && !q.From.Before(*q.To) {
			t.Fatalf("%q: accepted from after to", raw)
		}
	})
}
