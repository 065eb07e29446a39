package views

import (
	"encoding/json"
	"testing"

	"github.com/paymentsd/paymentsd/payment"
)

// Events are recorded in the first shape; the second shape's deliveries
// and event lists name confirmed and finalized transactions completed,
// and leave every other field as it was.
func TestShapedEvents(t *testing.T) {
	tx := payment.Event{ID: "evt_1", Type: "transaction.finalized",
		Data: json.RawMessage(`{"id":"tx_1","status":"finalized","amount":"12.500000000000000001","confirmations":12}`)}
	session := payment.Event{ID: "evt_2", Type: "checkout.session.completed",
		Data: json.RawMessage(`{"id":"cs_1","status":"completed","transactions":[{"id":"tx_1","status":"confirmed"},{"id":"tx_2","status":"failed"}]}`)}
	plan := payment.Event{ID: "evt_3", Type: "payment_plan.created", Data: json.RawMessage(`{"id":"plan_1","status":"active"}`)}
	for _, c := range []struct {
		shape Shape
		ev    payment.Event
		want  string
	}{
		{ShapeFirst, tx, `{"id":"tx_1","status":"finalized","amount":"12.500000000000000001","confirmations":12}`},
		{ShapeSecond, tx, `{"amount":"12.500000000000000001","confirmations":12,"id":"tx_1","status":"completed"}`},
		{ShapeSecond, session, `{"id":"cs_1","status":"completed","transactions":[{"id":"tx_1","status":"completed"},{"id":"tx_2","status":"failed"}]}`},
		{ShapeSecond, plan, `{"id":"plan_1","status":"active"}`},
	} {
		if got := string(ShapedEventOf(c.shape, c.ev).Data); got != c.want {
			t.Errorf("%s %s: %s; want %s", c.shape, c.ev.Type, got, c.want)
		}
	}
}
