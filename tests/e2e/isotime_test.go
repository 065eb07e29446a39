package e2e

import (
	"net/http"
	"net/url"
	"slices"
	"testing"
)

// Clients send ISO 8601 in more forms than RFC 3339: without seconds, with
// a comma fraction, with +0200 offsets, without an offset (read as UTC), or
// a date. Those are accepted as inputs, the rest is a 422 naming the field,
// and the output stays RFC 3339 in UTC.
func TestISO8601Inputs(t *testing.T) {
	ts, _, keys := sandboxAPI(t, apiOptions{})
	plans := "/api/v1/projects/" + keys.id + "/payment-plans"
	for in, want := range map[string]string{
		"2099-01-31T12:00":          "2099-01-31T12:00:00Z",
		"2099-01-31T14:00:30+0200":  "2099-01-31T12:00:30Z",
		"2099-01-31T12:00:00,5Z":    "2099-01-31T12:00:00.5Z",
		"2099-01-31":                "2099-02-01T00:00:00Z", // valid through that day
		"2099-01-31T07:00:00-05:00": "2099-01-31T12:00:00Z",
	} {
		r := post(t, ts.URL, plans, keys.key, map[string]any{"title": "ISO", "amountUsd": "5", "expiresAt": in})
		mustStatus(t, r, http.StatusCreated)
		if got := r.data()["expiresAt"]; got != want {
			t.Errorf("expiresAt %q came back %v; want %s", in, got, want)
		}
	}
	for _, in := range []string{"2099-02-30T12:00", "2099-01-31T24:00", "31/01/2099", "2099-W05-6"} {
		r := post(t, ts.URL, plans, keys.key, map[string]any{"title": "ISO", "amountUsd": "5", "expiresAt": in})
		mustStatus(t, r, http.StatusUnprocessableEntity)
		if !slices.Contains(r.detailFields(), "expiresAt") {
			t.Errorf("expiresAt %q: %s; want the field named", in, r.Raw)
		}
	}

	// The list of plans made just now, by ISO bounds around them.
	for _, q := range []url.Values{
		{"from": {"2000-01-01T00:00"}, "to": {"2999-12-31"}},
		{"from": {"20000101T000000Z"}, "to": {"2999-12-31T23:59:59,999+0100"}},
		{"from": {"2000-01-01 00:00:00"}},
	} {
		r := get(t, ts.URL, plans+"?"+q.Encode(), keys.key)
		mustStatus(t, r, http.StatusOK)
		if r.pagination()["total"] != float64(5) {
			t.Errorf("plans %s: %s; want the 5", q.Encode(), r.Raw)
		}
	}
	r := get(t, ts.URL, plans+"?"+url.Values{"from": {"3000-01-01T00:00+01"}}.Encode(), keys.key)
	if mustStatus(t, r, http.StatusOK); r.pagination()["total"] != float64(0) {
		t.Errorf("plans from 3000: %s; want none", r.Raw)
	}
	for name, v := range map[string]string{"from": "2026-13-01", "to": "yesterday"} {
		r := get(t, ts.URL, plans+"?"+url.Values{name: {v}}.Encode(), keys.key)
		mustStatus(t, r, http.StatusUnprocessableEntity)
		if !slices.Contains(r.detailFields(), name) {
			t.Errorf("%s=%s: %s; want the field named", name, v, r.Raw)
		}
	}
}
