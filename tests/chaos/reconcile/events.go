package reconcile

import (
	"slices"
)

var sessionMoves = map[string][]string{
	"open":       {"processing", "completed", "expired", "canceled"},
	"processing": {"completed", "expired", "open"},
}

var txMoves = map[string][]string{
	"pending":   {"confirmed", "failed"},
	"confirmed": {"finalized", "pending"},
	"finalized": {"reversed"}, // its block left the chain past finality
	"reversed":  {"confirmed", "failed"},
}

// checkEvents checks that each object's events have versions 1..n without
// gaps, n being the object's version, and that they match its state
// changes one to one.
func checkEvents(rec *Records, add func(kind, session, format string, args ...any)) {
	byObject := map[string][]Event{}
	for _, e := range rec.Events {
		byObject[e.ObjectID] = append(byObject[e.ObjectID], e)
	}
	known := map[string]bool{}
	versions := func(id, session string, version int) []Event {
		known[id] = true
		evs := byObject[id]
		if len(evs) != version {
			add(KindEvents, session, "%s is at version %d with %d events", id, version, len(evs))
		}
		for i, e := range evs {
			if e.Version != i+1 {
				add(KindEvents, session, "%s: event %d of %d has version %d", id, i+1, len(evs), e.Version)
				break
			}
			if e.DataVersion != e.Version {
				add(KindEvents, session, "%s: event %s (version %d) carries version %d", id, e.ID, e.Version, e.DataVersion)
			}
		}
		return evs
	}

	for _, s := range rec.Sessions {
		evs := versions(s.ID, s.ID, s.Version)
		if len(evs) == 0 {
			continue
		}
		if evs[0].Type != "checkout.session.created" {
			add(KindEvents, s.ID, "first event is %s", evs[0].Type)
		}
		prev := evs[0].DataStatus
		for _, e := range evs[1:] {
			switch {
			case e.DataStatus != prev && e.Type != "checkout.session."+e.DataStatus:
				add(KindEvents, s.ID, "the move from %s to %s has event %s", prev, e.DataStatus, e.Type)
			case e.DataStatus != prev && !slices.Contains(sessionMoves[prev], e.DataStatus):
				add(KindEvents, s.ID, "moved from %s to %s, which the state machine does not allow", prev, e.DataStatus)
			case e.DataStatus == prev && e.Type != "checkout.session.exception" && e.Type != "checkout.session.updated":
				add(KindEvents, s.ID, "event %s (version %d) changes no status", e.Type, e.Version)
			}
			prev = e.DataStatus
		}
		if prev != s.Status {
			add(KindEvents, s.ID, "last event says %s, the session is %s", prev, s.Status)
		}
	}

	for _, t := range rec.Transactions {
		evs := versions(t.ID, t.SessionID, t.Version)
		if len(t.History) != t.Version {
			add(KindEvents, t.SessionID, "%s is at version %d with %d status changes", t.ID, t.Version, len(t.History))
		}
		for i, st := range t.History {
			want := "transaction." + st
			if i > 0 && t.History[i-1] == "confirmed" && st == "pending" {
				want = "transaction.reorged"
			}
			if i > 0 && !slices.Contains(txMoves[t.History[i-1]], st) {
				add(KindEvents, t.SessionID, "%s moved from %s to %s, which the state machine does not allow", t.ID, t.History[i-1], st)
			}
			if i < len(evs) && (evs[i].Type != want || evs[i].DataStatus != st) {
				add(KindEvents, t.SessionID, "%s: change %d to %s has event %s (%s)", t.ID, i+1, st, evs[i].Type, evs[i].DataStatus)
			}
		}
	}

	for id, v := range rec.PlanVersions {
		versions(id, "", v)
	}
	for _, f := range rec.Refunds {
		evs := versions(f.ID, f.SessionID, f.Version)
		if len(evs) == 0 {
			continue
		}
		if evs[0].Type != "refund.created" {
			add(KindEvents, f.SessionID, "%s: first event is %s", f.ID, evs[0].Type)
		}
		for _, e := range evs[1:] {
			// An address given, and a transaction rejected, leave the
			// refund waiting for its signature (the merchant's address for
			// an owner's approval first); an approval, for its signature.
			waiting := e.DataStatus == "awaiting_signature" || e.Type == "refund.address_provided" && e.DataStatus == "awaiting_approval"
			if e.Type != "refund."+e.DataStatus && ((e.Type != "refund.address_provided" && e.Type != "refund.transaction_rejected" &&
				e.Type != "refund.approved") || !waiting) {
				add(KindEvents, f.SessionID, "%s: event %s (version %d) carries status %s", f.ID, e.Type, e.Version, e.DataStatus)
			}
		}
		if last := evs[len(evs)-1].DataStatus; last != f.Status {
			add(KindEvents, f.SessionID, "%s: last event says %s, the refund is %s", f.ID, last, f.Status)
		}
	}
	for id, b := range rec.Batches {
		evs := versions(id, id, b.Version)
		if len(evs) > 0 && (evs[0].Type != "payout_batch.created" || evs[len(evs)-1].Type != "payout_batch."+b.Status && b.Status != "awaiting_approval") {
			add(KindEvents, id, "%s: events %s … %s, the batch is %s", id, evs[0].Type, evs[len(evs)-1].Type, b.Status)
		}
	}
	// A payout's version counts its batch's approval, which has the
	// batch's event, not one of its own: its events are its moves from
	// sent on, each naming the status it carries.
	for _, f := range rec.Payouts {
		known[f.ID] = true
		evs := byObject[f.ID]
		for _, e := range evs {
			rejected := e.Type == "payout.transaction_rejected" && e.DataStatus == "awaiting_signature"
			if e.Type != "payout."+e.DataStatus && !rejected || e.DataVersion != e.Version {
				add(KindEvents, f.SessionID, "%s: event %s (version %d) carries status %s and version %d", f.ID, e.Type, e.Version, e.DataStatus, e.DataVersion)
			}
		}
		if len(evs) > 0 && evs[len(evs)-1].DataStatus != f.Status {
			add(KindEvents, f.SessionID, "%s: last event says %s, the payout is %s", f.ID, evs[len(evs)-1].DataStatus, f.Status)
		}
	}
	for id, evs := range byObject {
		if !known[id] {
			add(KindEvents, "", "%d events of %s, which is not a session, transaction, refund, payout, batch or plan of the project", len(evs), id)
		}
	}
}
