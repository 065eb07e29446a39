package views

import (
	"encoding/json"
	"fmt"
)

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
