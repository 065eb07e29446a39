package db

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/paymentsd/paymentsd/payment"
)

var historySamples = []string{
	// as jsonb writes them
	`[]`,
	`[{"at": "2026-11-24T12:00:00Z", "status": "pending"}]`,
	`[{"at": "2026-11-24T12:00:00.123456Z", "status": "pending"}, {"at": "2026-11-24T12:00:12Z", "status": "confirmed"}, {"at": "2026-11-24T12:01:00Z", "reason": "reverted", "status": "failed"}]`,
	`[{"at": "2026-11-24T12:00:00+02:00", "reason": "block left the chain", "status": "pending"}]`,
	// as encoding/json writes them
	`[{"status":"pending","at":"2026-11-24T12:00:00Z"},{"status":"confirmed","at":"2026-11-24T12:00:12Z","reason":""}]`,
	`[{"status":"new-status","at":"2026-11-24T12:00:00Z"}]`,
	` [ { } ] `,
	// left to json.Unmarshal
	`null`,
	`[{"at": "2026-11-24T12:00:00Z", "status": "pending", "reason": "caf\u00e9"}]`,
	`[{"at": "2026-11-24T12:00:00Z", "status": "pending", "reason": "café"}]`,
	`[{"at": "2026-11-24T12:00:00Z", "Status": "pending"}]`,
	`[{"at": "2026-11-24T12:00:00Z", "status": "pending", "block": 12}]`,
	`[{"at": null, "status": "pending"}]`,
	`[{"at": "2026-11-24T12:00:00Z", "reason": null, "status": "pending"}]`,
	// malformed
	``,
	`[`,
	`[{"at": "yesterday", "status": "pending"}]`,
	`[{"at": "2026-11-24T12:00:00Z", "status": "pending"}]x`,
	"[{\"at\": \"2026-11-24T12:00:00Z\", \"status\": \"pending\"}]\x00",
	`[{"at": "2026-11-24T12:00:00Z", "status": "pending"},]`,
	`[{"at": "2026-11-24T12:00:00Z" "status": "pending"}]`,
	`{"at": "2026-11-24T12:00:00Z"}`,
}

// checkHistory fails unless decodeHistory returns what json.Unmarshal
// returns, an error when it does.
func checkHistory(t *testing.T, doc string) {
	t.Helper()
	got, err := decodeHistory([]byte(doc))
	var want []payment.StatusChange
	wantErr := json.Unmarshal([]byte(doc), &want)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%q: error %v; json.Unmarshal's %v", doc, err, wantErr)
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: %#v; json.Unmarshal makes %#v", doc, got, want)
	}
}

// A status history reads the same as json.Unmarshal reads it, whatever
// the form: the form jsonb writes is read by hand, others by json.
func TestDecodeHistoryIsJSONUnmarshal(t *testing.T) {
	for _, doc := range historySamples {
		checkHistory(t, doc)
	}
	if _, ok := decodeHistoryForm([]byte(historySamples[2])); !ok {
		t.Fatal("the form jsonb writes went to json.Unmarshal")
	}
}

func FuzzDecodeHistory(f *testing.F) {
	for _, doc := range historySamples {
		f.Add(doc)
	}
	f.Fuzz(checkHistory)
}

func BenchmarkDecodeHistory(b *testing.B) {
	doc := []byte(historySamples[2])
	b.Run("form", func(b *testing.B) {
		for b.Loop() {
			if _, err := decodeHistory(doc); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json", func(b *testing.B) {
		for b.Loop() {
			var h []payment.StatusChange
			if err := json.Unmarshal(doc, &h); err != nil {
				b.Fatal(err)
			}
		}
	})
}
