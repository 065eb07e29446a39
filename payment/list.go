package payment

import (
	"errors"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Pagination defaults and bounds.
const (
	DefaultPage  = 1
	DefaultLimit = 20
	MaxLimit     = 100
)

// ListQuery is a parsed list request: pagination and filters.
type ListQuery struct {
	Page   int
	Limit  int
	Status string
	// StatusIn keeps any of these statuses (the second shape's
	// completed: confirmed or finalized).
	StatusIn []string
	From     *time.Time
	To       *time.Time // exclusive upper bound
	IsLive   *bool
	// Network keeps one network's transactions (transactions list).
	Network string
	// Flagged keeps what needs the merchant: sessions with an exception
	// not resolved (exception=true), transfers unexpected and not assigned
	// (unexpected=true).
	Flagged bool
	// ObjectID keeps one object's events (events list).
	ObjectID string
}

// Offset is the number of rows before the page.
func (q ListQuery) Offset() int { return (q.Page - 1) * q.Limit }

// ParseListQuery parses the query string of a list endpoint. statuses are
// the values the status filter accepts (none: no status filter). Unknown
// parameters, repeated parameters and malformed values are validation
// errors, each named by its parameter.
func ParseListQuery(v url.Values, statuses []string) (ListQuery, error) {
	return ParseListQueryBy(v, "status", statuses)
}

// DepositQuery lists deposit addresses: a ListQuery, Funded keeps only
// the addresses with a confirmed or finalized transfer, and Chain picks
// the key whose addresses are listed: the EVM deposit key (ChainEVM, the
// default) or the Bitcoin account key (ChainBitcoin).
type DepositQuery struct {
	ListQuery
	Funded bool
	Chain  string
}

// The kinds of chain whose deposit addresses are listed apart, each from
// its own key.
const (
	ChainEVM     = "evm"
	ChainBitcoin = "bitcoin"
)

// ParseDepositQuery parses the deposit addresses list's query string: the
// list's parameters (status filtering by session status), funded and
// chain.
func ParseDepositQuery(v url.Values, statuses []string) (DepositQuery, error) {
	list, probs := parseListQuery(v, "status", statuses, []string{"funded", "chain"})
	q := DepositQuery{ListQuery: list, Chain: ChainEVM}
	if c, ok := v["chain"]; ok {
		switch c[0] {
		case ChainEVM, ChainBitcoin:
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
func ParseListQueryBy(v url.Values, filter string, values []string) (ListQuery, error) {
	q, probs := parseListQuery(v, filter, values, nil)
	return q, probs.Err()
}

// parseListQuery is ParseListQueryBy, with extra parameters allowed (a
// caller parses them) and the problems returned for the caller to add to.
func parseListQuery(v url.Values, filter string, values, extra []string) (ListQuery, Problems) {
	statuses := values
	q := ListQuery{Page: DefaultPage, Limit: DefaultLimit}
	var probs Problems
	allowed := append([]string{"page", "limit", "from", "to", "isLive"}, extra...)
	if statuses != nil {
		allowed = append(allowed, filter)
	}
	for _, k := range sortedKeys(v) {
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
			i, whole, _ := ParseInteger(s[0])
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
	intParam("limit", 1, MaxLimit, &q.Limit)
	if s, ok := v[filter]; ok && statuses != nil {
		if !slices.Contains(statuses, s[0]) {
			probs.Add(filter, "must be one of "+strings.Join(statuses, ", "))
		} else {
			q.Status = s[0]
		}
	}
	if s, ok := v["from"]; ok {
		if t, _, ok := ParseISOTime(s[0]); ok {
			q.From = &t
		} else {
			probs.Add("from", "must be an ISO 8601 date (2026-01-31) or date-time (2026-01-31T12:00:00Z, 2026-01-31T14:00+02:00; without an offset, UTC)")
		}
	}
	if s, ok := v["to"]; ok {
		if t, dateOnly, ok := ParseISOTime(s[0]); ok {
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
func ParseTransactionQuery(v url.Values, statuses, networks []string) (ListQuery, error) {
	q, probs := parseListQuery(v, "status", statuses, []string{"network", "unexpected"})
	if s, ok := v["network"]; ok {
		if !slices.Contains(networks, s[0]) {
			probs.Add("network", "must be one of "+strings.Join(networks, ", "))
		} else {
			q.Network = s[0]
		}
	}
	q.Flagged = flag(v, "unexpected", &probs)
	return q, probs.Err()
}

// ParseSecondShapeTransactionQuery parses the transactions list's query
// in the second shape (spec section 9): page, limit, status (pending,
// completed, failed; completed is confirmed or finalized) and network;
// from, to and isLive are unknown there.
func ParseSecondShapeTransactionQuery(v url.Values, networks []string) (ListQuery, error) {
	var probs Problems
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
		var e *Error
		if errors.As(err, &e) {
			probs = append(probs, e.Details...)
		}
	}
	if q.Status == "completed" {
		q.Status, q.StatusIn = "", []string{string(TxConfirmed), string(TxFinalized)}
	}
	return q, probs.Err()
}

// ParseSessionQuery parses the sessions list's query string: the list's
// parameters and exception=true.
func ParseSessionQuery(v url.Values, statuses []string) (ListQuery, error) {
	q, probs := parseListQuery(v, "status", statuses, []string{"exception"})
	q.Flagged = flag(v, "exception", &probs)
	return q, probs.Err()
}

// flag reads a boolean filter that only narrows: true, or false for no
// filter.
func flag(v url.Values, name string, probs *Problems) bool {
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
