package rest

import (
	"errors"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/payment"
)

// The list endpoints' query strings, parsed into the payment package's
// list queries. Unknown parameters, repeated parameters and malformed
// values are validation errors, each named by its parameter.

// ParseListQuery parses the query string of a list endpoint. statuses are
// the values the status filter accepts (none: no status filter). Unknown
// parameters, repeated parameters and malformed values are validation
// errors, each named by its parameter.
func ParseListQuery(v url.Values, statuses []string) (payment.ListQuery, error) {
	return ParseListQueryBy(v, "status", statuses)
}

// ParseDepositQuery parses the deposit addresses list's query string: the
// list's parameters (status filtering by session status), funded and
// chain.
func ParseDepositQuery(v url.Values, statuses []string) (payment.DepositQuery, error) {
	list, probs := queryValues(v, "status", statuses, []string{"funded", "chain"})
	q := payment.DepositQuery{ListQuery: list, Chain: payment.ChainEVM}
	if c, ok := v["chain"]; ok {
		switch c[0] {
		case payment.ChainEVM, payment.ChainBitcoin:
			q.Chain = c[0]
		default:
			probs.Add("chain", "must be evm or bitcoin")
		}
	}
	if s, ok := v["funded"]; ok {
		switch s[0] {
		case "true":
			q.Funded = true
		case "false":
		default:
			probs.Add("funded", "must be true or false")
		}
	}
	return q, probs.Err()
}

// ParseListQueryBy is ParseListQuery with the value filter under another
// name (events filter by "type"); the value lands in ListQuery.Status.
func ParseListQueryBy(v url.Values, filter string, values []string) (payment.ListQuery, error) {
	q, probs := queryValues(v, filter, values, nil)
	return q, probs.Err()
}

// queryValues is ParseListQueryBy, with extra parameters allowed (a
// caller parses them) and the problems returned for the caller to add to.
func queryValues(v url.Values, filter string, values, extra []string) (payment.ListQuery, payment.Problems) {
	statuses := values
	q := payment.ListQuery{Page: payment.DefaultPage, Limit: payment.DefaultLimit}
	var probs payment.Problems
	allowed := append([]string{"page", "limit", "from", "to", "isLive"}, extra...)
	if statuses != nil {
		allowed = append(allowed, filter)
	}
	for _, k := range slices.Sorted(maps.Keys(v)) {
		if !slices.Contains(allowed, k) {
			probs.Add(k, "is not a known query parameter")
		} else if len(v[k]) > 1 {
			probs.Add(k, "must be given once")
		}
	}
	intParam := func(name string, lo, hi int, dst *int) {
		s, ok := v[name]
		if !ok {
			return
		}
		n, err := strconv.Atoi(s[0])
		if err != nil {
			// Written as a JSON number is (20.0, 2e1), as a client that
			// holds it as a float sends it; a fraction is refused.
			i, whole, _ := payment.ParseInteger(s[0])
			n, err = int(min(max(i, int64(lo)-1), int64(hi)+1)), nil
			if !whole {
				err = strconv.ErrSyntax
			}
		}
		if err != nil || n < lo || n > hi {
			probs.Addf(name, "must be an integer from %d to %d", lo, hi)
			return
		}
		*dst = n
	}
	intParam("page", 1, 1_000_000, &q.Page)
	intParam("limit", 1, payment.MaxLimit, &q.Limit)
	if s, ok := v[filter]; ok && statuses != nil {
		if !slices.Contains(statuses, s[0]) {
			probs.Add(filter, "must be one of "+strings.Join(statuses, ", "))
		} else {
			q.Status = s[0]
		}
	}
	if s, ok := v["from"]; ok {
		if t, _, ok := payment.ParseISOTime(s[0]); ok {
			q.From = &t
		} else {
			probs.Add("from", "must be an ISO 8601 date (2026-01-31) or date-time (2026-01-31T12:00:00Z, 2026-01-31T14:00+02:00; without an offset, UTC)")
		}
	}
	if s, ok := v["to"]; ok {
		if t, dateOnly, ok := payment.ParseISOTime(s[0]); ok {
			if dateOnly {
				t = t.AddDate(0, 0, 1) // a date includes the whole day
			} else {
				t = t.Truncate(time.Microsecond).Add(time.Microsecond) // inclusive, at the database's precision
			}
			q.To = &t
		} else {
			probs.Add("to", "must be an ISO 8601 date (2026-01-31) or date-time (2026-01-31T12:00:00Z, 2026-01-31T14:00+02:00; without an offset, UTC)")
		}
	}
	if q.From != nil && q.To != nil && !q.From.Before(*q.To) {
		probs.Add("from", "must not be after to")
	}
	if s, ok := v["isLive"]; ok {
		switch s[0] {
		case "true":
			t := true
			q.IsLive = &t
		case "false":
			f := false
			q.IsLive = &f
		default:
			probs.Add("isLive", "must be true or false")
		}
	}
	return q, probs
}

// ParseTransactionQuery parses the transactions list's query string: the
// list's parameters, network (one of networks) and unexpected=true.
func ParseTransactionQuery(v url.Values, statuses, networks []string) (payment.ListQuery, error) {
	q, probs := queryValues(v, "status", statuses, []string{"network", "unexpected"})
	if s, ok := v["network"]; ok {
		if !slices.Contains(networks, s[0]) {
			probs.Add("network", "must be one of "+strings.Join(networks, ", "))
		} else {
			q.Network = s[0]
		}
	}
	q.Flagged = queryFlag(v, "unexpected", &probs)
	return q, probs.Err()
}

// ParseSecondShapeTransactionQuery parses the transactions list's query
// in the second shape (spec section 9): page, limit, status (pending,
// completed, failed; completed is confirmed or finalized) and network;
// from, to and isLive are unknown there.
func ParseSecondShapeTransactionQuery(v url.Values, networks []string) (payment.ListQuery, error) {
	var probs payment.Problems
	for _, k := range []string{"from", "to", "isLive"} {
		if _, ok := v[k]; ok {
			probs.Add(k, "is not a known query parameter")
		}
	}
	rest := url.Values{}
	for k, vals := range v {
		if k != "from" && k != "to" && k != "isLive" {
			rest[k] = vals
		}
	}
	q, err := ParseTransactionQuery(rest, []string{"pending", "completed", "failed"}, networks)
	if err != nil {
		var e *payment.Error
		if errors.As(err, &e) {
			probs = append(probs, e.Details...)
		}
	}
	if q.Status == "completed" {
		q.Status, q.StatusIn = "", []string{string(payment.TxConfirmed), string(payment.TxFinalized)}
	}
	return q, probs.Err()
}

// ParseSessionQuery parses the sessions list's query string: the list's
// parameters and exception=true.
func ParseSessionQuery(v url.Values, statuses []string) (payment.ListQuery, error) {
	q, probs := queryValues(v, "status", statuses, []string{"exception"})
	q.Flagged = queryFlag(v, "exception", &probs)
	return q, probs.Err()
}

// queryFlag reads a boolean filter that only narrows: true, or false for no
// filter.
func queryFlag(v url.Values, name string, probs *payment.Problems) bool {
	s, ok := v[name]
	if !ok {
		return false
	}
	switch s[0] {
	case "true":
		return true
	case "false":
		return false
	}
	probs.Add(name, "must be true or false")
	return false
}

// ParseEventsQuery parses the query string of the events list: a page of
// the list, newest first (payment.ListQuery), or, when it has since or after, a
// page of the feed (payment.FeedQuery, feed true). Page numbers do not mix with
// the feed: its pages follow one another by cursor.
func ParseEventsQuery(v url.Values, types []string) (q payment.FeedQuery, feed bool, err error) {
	list, probs := queryValues(v, "type", types, []string{"since", "after", "objectId"})
	q.ListQuery = list
	if s, ok := v["objectId"]; ok {
		if s[0] == "" || len(s[0]) > 64 {
			probs.Add("objectId", "must be the ID of a session, transaction, plan or webhook endpoint")
		} else {
			q.ObjectID = s[0]
		}
	}
	if s, ok := v["since"]; ok {
		feed = true
		if t, _, ok := payment.ParseISOTime(s[0]); ok {
			q.Since = &t
		} else {
			probs.Add("since", "must be an RFC 3339 date-time (2026-01-31T12:00:00Z) or an ISO 8601 date (2026-01-31)")
		}
	}
	if s, ok := v["after"]; ok {
		feed = true
		if c, ok := payment.ParseEventCursor(s[0]); ok {
			q.After = &c
		} else {
			probs.Add("after", "must be a cursor the events list returned (meta.nextCursor)")
		}
	}
	if _, ok := v["page"]; ok && feed {
		probs.Add("page", "cannot be combined with since or after: follow meta.nextCursor instead")
	}
	return q, feed, probs.Err()
}

// ParsePayoutBatchQuery parses the batches list's query string.
func ParsePayoutBatchQuery(v url.Values, statuses []string) (payment.ListQuery, error) {
	q, probs := queryValues(v, "status", statuses, nil)
	return q, probs.Err()
}

// ParseRefundQuery parses the refunds list's query string: the list's
// parameters, status among statuses, and checkoutSessionId to keep one
// session's refunds.
func ParseRefundQuery(v url.Values, statuses []string) (payment.ListQuery, string, error) {
	q, probs := queryValues(v, "status", statuses, []string{"checkoutSessionId"})
	var sessionID string
	if s, ok := v["checkoutSessionId"]; ok {
		sessionID = s[0]
		if !payment.ValidID(payment.PrefixSession, sessionID) {
			probs.Add("checkoutSessionId", "is not a checkout session ID")
		}
	}
	return q, sessionID, probs.Err()
}
