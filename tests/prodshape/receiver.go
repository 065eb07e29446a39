package prodshape

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// Receiver is the merchant's webhook endpoint, a real HTTP server: it
// verifies each delivery with the Standard Webhooks library and keeps
// what it got.
type Receiver struct {
	*httptest.Server
	mu     sync.Mutex
	wh     *standardwebhooks.Webhook
	events map[string]bool            // event ID
	types  map[string]map[string]bool // object ID -> event types
	n, bad int
	// hold is how long it takes to answer; held counts the requests it
	// holds now, cutOff those whose sender gave up before the answer.
	hold         time.Duration
	held, cutOff int
}

// NewReceiver starts a receiver; Close stops it.
func NewReceiver() *Receiver {
	r := &Receiver{events: map[string]bool{}, types: map[string]map[string]bool{}}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	return r
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	hold := r.hold
	r.held++
	r.mu.Unlock()
	if hold > 0 {
		select {
		case <-time.After(hold):
		case <-req.Context().Done():
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.held--
	if req.Context().Err() != nil {
		r.cutOff++
		return
	}
	if r.wh == nil || r.wh.Verify(body, req.Header) != nil {
		r.bad++
		http.Error(w, "bad signature", http.StatusBadRequest)
		return
	}
	var ev struct {
		ID   string `json:"id"`
		Type string `json:"type"`
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if json.Unmarshal(body, &ev) != nil {
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	r.n++
	r.events[ev.ID] = true
	if r.types[ev.Data.ID] == nil {
		r.types[ev.Data.ID] = map[string]bool{}
	}
	r.types[ev.Data.ID][ev.Type] = true
	w.WriteHeader(http.StatusNoContent)
}

// SetSecret is the endpoint's signing secret, as its creation returned it.
func (r *Receiver) SetSecret(secret string) error {
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.wh = wh
	r.mu.Unlock()
	return nil
}

// Hold makes every answer wait d.
func (r *Receiver) Hold(d time.Duration) {
	r.mu.Lock()
	r.hold = d
	r.mu.Unlock()
}

// HasAll tells whether every one of ids was delivered, and there is one.
func (r *Receiver) HasAll(ids []string) bool {
	return len(ids) > 0 && len(r.Missing(ids)) == 0
}

// Missing are those of ids never delivered.
func (r *Receiver) Missing(ids []string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, id := range ids {
		if !r.events[id] {
			out = append(out, id)
		}
	}
	return out
}

// Got tells whether an event of type typ about objectID was delivered.
func (r *Receiver) Got(objectID, typ string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.types[objectID][typ]
}

// Holding is the number of requests held now.
func (r *Receiver) Holding() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.held
}

// Cut is the number of requests whose sender gave up before the answer.
func (r *Receiver) Cut() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cutOff
}

// BadSignatures counts deliveries that failed verification.
func (r *Receiver) BadSignatures() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bad
}

// Deliveries counts the deliveries verified (each event at least once).
func (r *Receiver) Deliveries() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

// Events counts the distinct events delivered.
func (r *Receiver) Events() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.events)
}
