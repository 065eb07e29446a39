package views

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

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
		{ShapeSecond, payment.Event{Type: payment.EventTxReversed, Data: json.RawMessage(`{"id":"tx_1","status":"reversed"}`)},
			`{"id":"tx_1","status":"failed"}`},
		{ShapeSecond, session, `{"id":"cs_1","status":"completed","transactions":[{"id":"tx_1","status":"completed"},{"id":"tx_2","status":"failed"}]}`},
		{ShapeSecond, plan, `{"id":"plan_1","status":"active"}`},
	} {
		if got := string(ShapedEventOf(c.shape, c.ev).Data); got != c.want {
			t.Errorf("%s %s: %s; want %s", c.shape, c.ev.Type, got, c.want)
		}
	}
}

// The second shape's status history lists the changes of the status it
// shows: confirmed then finalized is one completed entry, at the time the
// transaction was confirmed; a reorg's back and forth stays. The first
// shape's is the record's.
func TestTxHistoryInBothShapes(t *testing.T) {
	at := func(s int) time.Time { return time.Date(2026, 1, 2, 3, 4, s, 0, time.UTC) }
	h := []payment.StatusChange{{Status: payment.TxPending, At: at(1)}, {Status: payment.TxConfirmed, At: at(2)},
		{Status: payment.TxPending, At: at(3), Reason: "reorg"}, {Status: payment.TxConfirmed, At: at(4)},
		{Status: payment.TxFinalized, At: at(5)}}
	if got := TxHistory(ShapeFirst, h); !reflect.DeepEqual(got, h) {
		t.Errorf("first shape: %v", got)
	}
	want := []payment.StatusChange{{Status: "pending", At: at(1)}, {Status: "completed", At: at(2)},
		{Status: "pending", At: at(3), Reason: "reorg"}, {Status: "completed", At: at(4)}}
	if got := TxHistory(ShapeSecond, h); !reflect.DeepEqual(got, want) {
		t.Errorf("second shape: %v; want %v", got, want)
	}
	if h[4].Status != payment.TxFinalized {
		t.Error("the record's history was changed")
	}
	if got := TxHistory(ShapeSecond, []payment.StatusChange{{Status: payment.TxPending, At: at(1)}, {Status: payment.TxFailed, At: at(2), Reason: "dropped"}}); len(got) != 2 || got[1].Status != "failed" {
		t.Errorf("a failed transaction: %v", got)
	}
	if got := TxHistory(ShapeSecond, nil); len(got) != 0 {
		t.Errorf("no history: %v", got)
	}
}

// A transaction event's data.statusHistory is shaped as the record's is;
// the first shape's event is delivered as it was recorded, byte for byte.
func TestShapedEventHistory(t *testing.T) {
	recorded := `{"id":"tx_1","status":"finalized","statusHistory":[{"status":"pending","at":"2026-01-02T03:04:01Z"},{"status":"confirmed","at":"2026-01-02T03:04:02Z"},{"status":"finalized","at":"2026-01-02T03:04:05Z","reason":"x"}],"version":3}`
	ev := payment.Event{ID: "evt_1", Type: "transaction.finalized", Data: json.RawMessage(recorded)}
	if got := string(ShapedEventOf(ShapeFirst, ev).Data); got != recorded {
		t.Errorf("first shape: %s", got)
	}
	want := `{"id":"tx_1","status":"completed","statusHistory":[{"at":"2026-01-02T03:04:01Z","status":"pending"},{"at":"2026-01-02T03:04:02Z","status":"completed"}],"version":3}`
	if got := string(ShapedEventOf(ShapeSecond, ev).Data); got != want {
		t.Errorf("second shape: %s; want %s", got, want)
	}
	// The event's history and the record's read the same.
	var shaped struct {
		StatusHistory []payment.StatusChange `json:"statusHistory"`
	}
	var record struct {
		StatusHistory []payment.StatusChange `json:"statusHistory"`
	}
	_ = json.Unmarshal(ShapedEventOf(ShapeSecond, ev).Data, &shaped)
	_ = json.Unmarshal([]byte(recorded), &record)
	if !reflect.DeepEqual(shaped.StatusHistory, TxHistory(ShapeSecond, record.StatusHistory)) {
		t.Errorf("event %v, record %v", shaped.StatusHistory, TxHistory(ShapeSecond, record.StatusHistory))
	}
	// Odd entries are kept as they are.
	odd := payment.Event{ID: "evt_2", Type: "transaction.confirmed", Data: json.RawMessage(`{"status":"confirmed","statusHistory":[1,{"status":"confirmed"},{"status":"confirmed"},{"status":7}]}`)}
	if got := string(ShapedEventOf(ShapeSecond, odd).Data); got != `{"status":"completed","statusHistory":[1,{"status":"completed"},{"status":7}]}` {
		t.Errorf("odd history: %s", got)
	}
}
