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
// confirmed and finalized are both completed.
func TxStatus(shape Shape, status string) string {
	if shape == ShapeSecond && (status == string(payment.TxConfirmed) || status == string(payment.TxFinalized)) {
		return "completed"
	}
	return status
}

// ShapedEventOf renders an event in shape: the second shape's data
// names a transaction's status, and those of a session's transactions,
// as the API of that shape does. Events are recorded in the first shape.
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
