package views

import (
	"encoding/json"
	"fmt"

	"github.com/paymentsd/paymentsd/payment"
)

// SessionEvent renders a session as the data of its event with version.
func SessionEvent(s payment.Session, version int) ([]byte, error) {
	return Versioned(SessionOf(s, "", "", nil), version)
}

// TransactionEvent renders a transaction as the data of its event with
// version.
func TransactionEvent(t payment.Transaction, version int) ([]byte, error) {
	return Versioned(TransactionOf(t), version)
}

// Versioned renders a record with its monotonic version, as the data of
// an event: {...the record..., "version": n}.
func Versioned(record any, version int) ([]byte, error) {
	b, err := json.Marshal(record)
	if err != nil {
		return nil, err
	}
	if len(b) < 2 || b[len(b)-1] != '}' {
		return nil, fmt.Errorf("event data must be an object")
	}
	sep := ","
	if len(b) == 2 {
		sep = ""
	}
	return append(b[:len(b)-1], fmt.Sprintf(`%s"version":%d}`, sep, version)...), nil
}
