package payment

import (
	"slices"
	"testing"

	"github.com/shopspring/decimal"
)

// Each change of a session makes the events a webhook consumer expects,
// and a change made before makes none.
func TestSessionChangesDecideTheirEvents(t *testing.T) {
	d := decimal.RequireFromString
	open := Session{Status: SessionOpen, AmountPaidUSD: d("0")}
	cases := []struct {
		name   string
		from   Session
		change func(*Session) []EventType
		want   []EventType
		status SessionStatus
	}{
		{"expire an open session", open, (*Session).Expire, []EventType{EventSessionExpired}, SessionExpired},
		{"expire a completed one", Session{Status: SessionCompleted}, (*Session).Expire, nil, SessionCompleted},
		{"cancel an open session", open, (*Session).Cancel, []EventType{EventSessionCanceled}, SessionCanceled},
		{"cancel a processing one", Session{Status: SessionProcessing}, (*Session).Cancel, nil, SessionProcessing},
		{"first payment seen", open, func(s *Session) []EventType {
			return s.Progress(SessionProgress{Status: SessionProcessing, PaidUSD: d("4")})
		}, []EventType{EventSessionProcessing}, SessionProcessing},
		{"overpaid completion", open, func(s *Session) []EventType {
			return s.Progress(SessionProgress{Status: SessionCompleted, PaidUSD: d("12"), Exception: "overpaid"})
		}, []EventType{EventSessionCompleted, EventSessionException}, SessionCompleted},
		{"more paid, same status", Session{Status: SessionProcessing, AmountPaidUSD: d("4")}, func(s *Session) []EventType {
			return s.Progress(SessionProgress{Status: SessionProcessing, PaidUSD: d("6")})
		}, []EventType{EventSessionUpdated}, SessionProcessing},
		{"progress recorded before", Session{Status: SessionProcessing, AmountPaidUSD: d("4")}, func(s *Session) []EventType {
			return s.Progress(SessionProgress{Status: SessionProcessing, PaidUSD: d("4.00")})
		}, nil, SessionProcessing},
		// A workflow task run again after Temporal lost its completion,
		// whose look at the chain found less than the first run's.
		{"a completed record is not taken back to processing", Session{Status: SessionCompleted, AmountPaidUSD: d("10")}, func(s *Session) []EventType {
			return s.Progress(SessionProgress{Status: SessionProcessing, PaidUSD: d("4")})
		}, nil, SessionCompleted},
		{"an expired record is not taken back to processing", Session{Status: SessionExpired, AmountPaidUSD: d("4"), Exception: "underpaid"}, func(s *Session) []EventType {
			return s.Progress(SessionProgress{Status: SessionProcessing, PaidUSD: d("4")})
		}, nil, SessionExpired},
	}
	for _, c := range cases {
		s := c.from
		if got := c.change(&s); !slices.Equal(got, c.want) || s.Status != c.status {
			t.Errorf("%s: events %v, status %s; want %v, %s", c.name, got, s.Status, c.want, c.status)
		}
	}
}

func TestTransactionEvents(t *testing.T) {
	cases := []struct {
		from, to TransactionStatus
		want     EventType
	}{
		{"", TxPending, EventTxPending},
		{"", TxConfirmed, EventTxConfirmed},
		{TxPending, TxConfirmed, EventTxConfirmed},
		{TxConfirmed, TxFinalized, EventTxFinalized},
		{TxPending, TxFailed, EventTxFailed},
		{TxConfirmed, TxPending, EventTxReorged},
	}
	for _, c := range cases {
		if got := TransactionEvent(c.from, c.to); got != c.want || !slices.Contains(EventTypes, got) {
			t.Errorf("%q -> %s = %s, want %s (a subscribable type)", c.from, c.to, got, c.want)
		}
	}
	for _, st := range []SessionStatus{SessionOpen, SessionProcessing, SessionCompleted, SessionExpired, SessionCanceled} {
		if !slices.Contains(EventTypes, SessionStatusEvent(st)) {
			t.Errorf("the event of a session entering %s is not a subscribable type", st)
		}
	}
}
