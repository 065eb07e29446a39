package rest

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/payment"
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
			var e *payment.Error
			if !errors.As(err, &e) || e.Kind != payment.KindValidation || len(e.Details) == 0 {
				t.Fatalf("%q: %v is not a validation error with details", raw, err)
			}
			return
		}
		if q.Page < 1 || q.Limit < 1 || q.Limit > payment.MaxLimit || q.Offset() < 0 {
			t.Fatalf("%q: accepted out-of-range pagination %+v", raw, q)
		}
		if q.From != nil && q.To != nil && !q.From.Before(*q.To) {
			t.Fatalf("%q: accepted from after to", raw)
		}
	})
}

// The dashboard's filters: a network of the list, the attention flags, an
// object's events. Anything else is a validation error naming it.
func FuzzParseDashboardFilters(f *testing.F) {
	for _, seed := range []string{"network=base", "network=moonnet", "unexpected=true", "unexpected=yes", "exception=true&status=open",
		"objectId=cs_01", "objectId=", "network=base&network=devnet", "since=2026-01-01&objectId=tx_1",
		"status=completed&network=base", "status=finalized", "from=2026-01-01&status=completed", "isLive=true"} {
		f.Add(seed)
	}
	networks := []string{"base", "devnet"}
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		check := func(q payment.ListQuery, err error) {
			if err != nil {
				var e *payment.Error
				if !errors.As(err, &e) || e.Kind != payment.KindValidation || len(e.Details) == 0 {
					t.Fatalf("%q: %v is not a validation error with details", raw, err)
				}
				return
			}
			if q.Network != "" && q.Network != "base" && q.Network != "devnet" {
				t.Fatalf("%q: accepted network %q", raw, q.Network)
			}
			if q.Flagged != (v.Get("unexpected") == "true" || v.Get("exception") == "true") {
				t.Fatalf("%q: flag %v", raw, q.Flagged)
			}
		}
		check(ParseTransactionQuery(v, []string{"pending"}, networks))
		check(ParseSessionQuery(v, []string{"open"}))
		// The second shape: no from, to or isLive; completed is two statuses.
		q, err := ParseSecondShapeTransactionQuery(v, networks)
		if err == nil && (v.Has("from") || v.Has("to") || v.Has("isLive") || q.Status == "completed" ||
			v.Get("status") == "completed" && len(q.StatusIn) != 2) {
			t.Fatalf("%q: second shape accepted %+v", raw, q)
		}
		check(q, err)
		if q, _, err := ParseEventsQuery(v, []string{"checkout.session.created"}); err == nil && q.ObjectID != v.Get("objectId") {
			t.Fatalf("%q: object %q", raw, q.ObjectID)
		}
	})
}

// page and limit take a whole number written as JSON writes numbers
// (20.0, 2e1) too; a fraction or a value out of range is refused naming
// the parameter.
func TestListQueryIntegers(t *testing.T) {
	for raw, want := range map[string]int{"limit=20": 20, "limit=20.0": 20, "limit=2e1": 20, "limit=2.00e1": 20, "limit=%2B20": 20} {
		v, _ := url.ParseQuery(raw)
		q, err := ParseListQuery(v, nil)
		if err != nil || q.Limit != want {
			t.Errorf("%s: %d %v; want %d", raw, q.Limit, err, want)
		}
	}
	for _, raw := range []string{"limit=20.5", "limit=0", "limit=1e400", "limit=-1e400", "limit=101", "limit=1e9", "page=0.5", "page=1e-1", "limit=x", "limit=2e", "page=" + strings.Repeat("9", 100)} {
		v, _ := url.ParseQuery(raw)
		_, err := ParseListQuery(v, nil)
		var e *payment.Error
		if !errors.As(err, &e) || e.Kind != payment.KindValidation || len(e.Details) != 1 || e.Details[0].Field != strings.Split(raw, "=")[0] {
			t.Errorf("%s: %v; want a 422 naming the parameter", raw, err)
		}
	}
}

// The deposit addresses list takes chain (evm by default, or bitcoin) and
// funded; another value of either is refused naming it.
func TestDepositQueryChain(t *testing.T) {
	for raw, want := range map[string]payment.DepositQuery{"": {Chain: payment.ChainEVM}, "chain=bitcoin&funded=true": {Chain: payment.ChainBitcoin, Funded: true}, "chain=evm": {Chain: payment.ChainEVM}} {
		v, _ := url.ParseQuery(raw)
		q, err := ParseDepositQuery(v, nil)
		if err != nil || q.Chain != want.Chain || q.Funded != want.Funded {
			t.Errorf("%q: %+v %v; want %+v", raw, q, err, want)
		}
	}
	for _, raw := range []string{"chain=btc", "chain=", "funded=yes"} {
		v, _ := url.ParseQuery(raw)
		_, err := ParseDepositQuery(v, nil)
		var e *payment.Error
		if !errors.As(err, &e) || e.Kind != payment.KindValidation || len(e.Details) != 1 || e.Details[0].Field != strings.Split(raw, "=")[0] {
			t.Errorf("%s: %v; want a 422 naming the parameter", raw, err)
		}
	}
}
