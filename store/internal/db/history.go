package db

import (
	"encoding/json"
	"time"

	"github.com/paymentsd/paymentsd/payment"
)

// decodeHistory decodes a transaction's status history as stored, into
// what json.Unmarshal makes of it. Reflection made json.Unmarshal about a
// quarter of the CPU of a transaction list request, so the form jsonb
// writes (an array of objects of "at", "status" and "reason" strings,
// ASCII, no escapes) is read by hand; anything else is left to
// json.Unmarshal.
func decodeHistory(b []byte) ([]payment.StatusChange, error) {
	if h, ok := decodeHistoryForm(b); ok {
		return h, nil
	}
	var h []payment.StatusChange
	err := json.Unmarshal(b, &h)
	return h, err
}

func decodeHistoryForm(b []byte) ([]payment.StatusChange, bool) {
	d := historyDecoder{b: b}
	if !d.next('[') {
		return nil, false
	}
	h := make([]payment.StatusChange, 0, 4)
	if d.next(']') {
		return h, d.end()
	}
	for {
		var c payment.StatusChange
		if !d.object(&c) {
			return nil, false
		}
		h = append(h, c)
		if d.next(']') {
			return h, d.end()
		}
		if !d.next(',') {
			return nil, false
		}
	}
}

type historyDecoder struct {
	b []byte
	i int
}

// next skips white space and reports whether c follows, consuming it.
func (d *historyDecoder) next(c byte) bool {
	d.space()
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

func (d *historyDecoder) space() {
	for d.i < len(d.b) && (d.b[d.i] == ' ' || d.b[d.i] == '\t' || d.b[d.i] == '\n' || d.b[d.i] == '\r') {
		d.i++
	}
}

// end reports whether only white space is left.
func (d *historyDecoder) end() bool {
	d.space()
	return d.i == len(d.b)
}

// str reads a string of printable ASCII without escapes.
func (d *historyDecoder) str() ([]byte, bool) {
	if !d.next('"') {
		return nil, false
	}
	start := d.i
	for ; d.i < len(d.b); d.i++ {
		switch c := d.b[d.i]; {
		case c == '"':
			d.i++
			return d.b[start : d.i-1], true
		case c < 0x20 || c >= 0x7f || c == '\\':
			return nil, false
		}
	}
	return nil, false
}

func (d *historyDecoder) object(c *payment.StatusChange) bool {
	if !d.next('{') {
		return false
	}
	if d.next('}') {
		return true
	}
	for {
		key, ok := d.str()
		if !ok || !d.next(':') {
			return false
		}
		value, ok := d.str()
		if !ok {
			return false
		}
		switch string(key) {
		case "at":
			var at time.Time
			if at.UnmarshalText(value) != nil {
				return false
			}
			c.At = at
		case "status":
			c.Status = txStatus(value)
		case "reason":
			c.Reason = string(value)
		default:
			return false
		}
		if d.next('}') {
			return true
		}
		if !d.next(',') {
			return false
		}
	}
}

// txStatus returns a status without allocating for the known ones.
func txStatus(b []byte) payment.TransactionStatus {
	for _, s := range payment.TransactionStatuses {
		if string(s) == string(b) {
			return s
		}
	}
	return payment.TransactionStatus(b)
}
