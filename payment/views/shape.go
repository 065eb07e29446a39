package views

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/paymentsd/paymentsd/payment"
)

// Shape is the form of the API a deployment serves (spec section 9): one
// engine, one set of workflows; the shape lives in the API's decoding and
// in the views, webhooks' included.
type Shape string

const (
	// ShapeFirst is the spec's sections 2 to 5 (the default).
	ShapeFirst Shape = "first"
	// ShapeSecond is section 9's.
	ShapeSecond Shape = "second"
)

// TxStatus is a transaction status as shape names it: in the second,
// confirmed and finalized are both completed, and reversed (gone in a
// reorg past finality: its money did not arrive) is failed, the one of
// the shape's three that says so.
func TxStatus(shape Shape, status string) string {
	switch {
	case shape != ShapeSecond:
	case status == string(payment.TxConfirmed) || status == string(payment.TxFinalized):
		return "completed"
	case status == string(payment.TxReversed):
		return string(payment.TxFailed)
	}
	return status
}

// TxHistory is a transaction's status history as shape names it. In the
// second shape each entry's status is TxStatus's, and an entry whose
// status is the one before it is left out: the history lists the changes
// of the status the consumer sees, so a transaction confirmed then
// finalized has one completed entry, at the time it was confirmed (when it
// became completed; finalizedAt still says when it was finalized). A
// reorg's completed, pending, completed keeps its three entries. The
// first shape's history is returned as it is.
func TxHistory(shape Shape, h []payment.StatusChange) []payment.StatusChange {
	if shape != ShapeSecond {
		return h
	}
	out := make([]payment.StatusChange, 0, len(h))
	for _, c := range h {
		c.Status = payment.TransactionStatus(TxStatus(shape, string(c.Status)))
		if len(out) > 0 && out[len(out)-1].Status == c.Status {
			continue
		}
		out = append(out, c)
	}
	return out
}

// ShapedEventOf renders an event in shape: the second shape's data
// names a transaction's status, its status history (as TxHistory does)
// and the statuses of a session's transactions as the API of that shape
// does. Events are recorded in the first shape.
func ShapedEventOf(shape Shape, ev payment.Event) Event {
	v := EventOf(ev)
	if shape != ShapeSecond || !strings.HasPrefix(v.Type, "transaction.") && !strings.HasPrefix(v.Type, "checkout.session.") {
		return v
	}
	dec := json.NewDecoder(bytes.NewReader(v.Data))
	dec.UseNumber()
	var data map[string]any
	if dec.Decode(&data) != nil {
		return v
	}
	if st, ok := data["status"].(string); ok && strings.HasPrefix(v.Type, "transaction.") {
		data["status"] = TxStatus(shape, st)
	}
	if h, ok := data["statusHistory"].([]any); ok && strings.HasPrefix(v.Type, "transaction.") {
		data["statusHistory"] = shapedHistory(shape, h)
	}
	if txs, ok := data["transactions"].([]any); ok {
		for _, t := range txs {
			if m, ok := t.(map[string]any); ok {
				if st, ok := m["status"].(string); ok {
					m["status"] = TxStatus(shape, st)
				}
			}
		}
	}
	if b, err := json.Marshal(data); err == nil {
		v.Data = b
	}
	return v
}

// shapedHistory is TxHistory over a history decoded from an event's data.
// An entry that is not an object with a string status is kept as it is,
// and ends a run of equal statuses.
func shapedHistory(shape Shape, h []any) []any {
	out := make([]any, 0, len(h))
	last := ""
	for _, e := range h {
		m, ok := e.(map[string]any)
		st, isStr := m["status"].(string)
		if !ok || !isStr {
			out, last = append(out, e), ""
			continue
		}
		st = TxStatus(shape, st)
		if len(out) > 0 && st == last {
			continue
		}
		m["status"], last = st, st
		out = append(out, m)
	}
	return out
}
