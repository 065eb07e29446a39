package payment

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

func TestResolveClearsOnlyItsException(t *testing.T) {
	at := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	under := Session{Status: SessionExpired, Exception: ExceptionUnderpaid}
	events, err := under.Resolve(ResolutionUnderpaymentAccepted, at)
	if err != nil || len(events) != 2 || events[0] != EventSessionCompleted || events[1] != EventSessionResolved ||
		under.Status != SessionCompleted || under.Exception != "" || under.CompletedAt == nil || !under.CompletedAt.Equal(at) ||
		under.Resolution != ResolutionUnderpaymentAccepted {
		t.Fatalf("accepted: %+v, events %v, err %v", under, events, err)
	}
	if _, err := under.Resolve(ResolutionUnderpaymentAccepted, at); KindOf(err) != KindConflict {
		t.Fatalf("accepting again: %v, want a conflict", err)
	}
	over := Session{Status: SessionCompleted, Exception: ExceptionOverpaid, CompletedAt: &at}
	if _, err := over.Resolve(ResolutionUnderpaymentAccepted, at); KindOf(err) != KindConflict {
		t.Fatalf("accepting an overpayment's underpayment: %v, want a conflict", err)
	}
	events, err = over.Resolve(ResolutionOverpaymentSettled, at.Add(time.Hour))
	if err != nil || len(events) != 1 || events[0] != EventSessionResolved || over.Status != SessionCompleted || over.Exception != "" ||
		!over.CompletedAt.Equal(at) {
		t.Fatalf("settled: %+v, events %v, err %v", over, events, err)
	}
	late := Session{Status: SessionExpired, Exception: ExceptionPaidLate}
	if _, err := late.Resolve("refunded", at); KindOf(err) != KindValidation {
		t.Fatalf("unknown resolution: %v, want a validation error", err)
	}
}

func TestResolutionKeepsItsDecisionUntilThePaymentsChangeIt(t *testing.T) {
	d := decimal.RequireFromString
	accepted := ResolutionUnderpaymentAccepted
	if out := accepted.Keep(Settlement{Status: SessionCompleted, PaidUSD: d("9.7"), Exception: ExceptionReversed}, d("9.7")); out.Exception != "" {
		t.Fatalf("accepted amount still paid: %+v", out)
	}
	if out := accepted.Keep(Settlement{Status: SessionCompleted, PaidUSD: d("4"), Exception: ExceptionReversed}, d("9.7")); out.Exception != ExceptionReversed {
		t.Fatalf("part of the accepted amount reorged out: %+v", out)
	}
	settled := ResolutionOverpaymentSettled
	if out := settled.Keep(Settlement{Status: SessionCompleted, PaidUSD: d("12"), Exception: ExceptionOverpaid}, d("12")); out.Exception != "" {
		t.Fatalf("the settled overpayment: %+v", out)
	}
	if out := settled.Keep(Settlement{Status: SessionCompleted, PaidUSD: d("15"), Exception: ExceptionOverpaid}, d("12")); out.Exception != ExceptionOverpaid {
		t.Fatalf("a further overpayment: %+v", out)
	}
}
