package payment

import (
	"encoding/json"
	"time"

	"github.com/shopspring/decimal"
)

// EventType is the kind of an event: what changed, named as the webhook
// consumer sees it.
type EventType string

// The kinds of event. A session's status events are
// "checkout.session.<status>"; a transaction's are
// "transaction.<status>", and "transaction.reorged" for a confirmed one
// whose block left the chain.
const (
	EventPlanCreated  EventType = "payment_plan.created"
	EventPlanUpdated  EventType = "payment_plan.updated"
	EventPlanArchived EventType = "payment_plan.archived"

	EventSessionCreated    EventType = "checkout.session.created"
	EventSessionOpen       EventType = "checkout.session.open"
	EventSessionProcessing EventType = "checkout.session.processing"
	EventSessionCompleted  EventType = "checkout.session.completed"
	EventSessionExpired    EventType = "checkout.session.expired"
	EventSessionCanceled   EventType = "checkout.session.canceled"
	EventSessionException  EventType = "checkout.session.exception"
	// EventSessionResolved is a merchant's resolution of the session's
	// exception (payment.Resolution).
	EventSessionResolved EventType = "checkout.session.resolved"
	// EventSessionUpdated is a change with no new status or exception:
	// the amount paid moved.
	EventSessionUpdated EventType = "checkout.session.updated"

	EventTxPending   EventType = "transaction.pending"
	EventTxConfirmed EventType = "transaction.confirmed"
	EventTxFinalized EventType = "transaction.finalized"
	EventTxFailed    EventType = "transaction.failed"
	EventTxReorged   EventType = "transaction.reorged"
	// EventTxReversed is a finalized transaction whose block left the
	// chain in a reorg deeper than finality.
	EventTxReversed EventType = "transaction.reversed"
	// EventTxAssigned is an unexpected transfer assigned to a session by
	// the merchant (Transaction.Assign).
	EventTxAssigned EventType = "transaction.assigned"

	// EventWebhookTest is the event a merchant sends to try an endpoint;
	// endpoints cannot subscribe to it.
	EventWebhookTest EventType = "webhook.test"
	// EventWebhookDisabled is the engine disabling an endpoint itself:
	// it answered 410 Gone, or failed every delivery for too long. It is
	// delivered to the project's other enabled endpoints that want it,
	// never to the disabled one.
	EventWebhookDisabled EventType = "webhook_endpoint.disabled"
)

// EventTypes are the kinds of event the engine records and endpoints
// subscribe to.
var EventTypes = []EventType{
	EventPlanCreated, EventPlanUpdated, EventPlanArchived,
	EventSessionCreated, EventSessionProcessing, EventSessionCompleted,
	EventSessionExpired, EventSessionCanceled, EventSessionException,
	EventSessionUpdated, EventSessionOpen, EventSessionResolved,
	EventTxPending, EventTxConfirmed, EventTxFinalized, EventTxFailed, EventTxReorged, EventTxReversed, EventTxAssigned,
	EventRefundCreated, EventRefundAddressProvided, EventRefundApproved, EventRefundSent, EventRefundConfirmed, EventRefundFinalized,
	EventRefundFailed, EventRefundException, EventRefundCanceled, EventRefundStale, EventRefundRejected, EventRefundReversed,
	EventPayoutBatchCreated, EventPayoutBatchApproved, EventPayoutBatchCanceled, EventPayoutBatchCompleted,
	EventPayoutSent, EventPayoutConfirmed, EventPayoutFinalized, EventPayoutFailed, EventPayoutException,
	EventPayoutStale, EventPayoutRejected, EventPayoutCanceled, EventPayoutReversed,
	EventWebhookDisabled,
}

// EventTypeNames are EventTypes as strings.
func EventTypeNames() []string {
	out := make([]string, len(EventTypes))
	for i, t := range EventTypes {
		out[i] = string(t)
	}
	return out
}

// SessionStatusEvent is the event of a session entering status.
func SessionStatusEvent(status SessionStatus) EventType {
	return EventType("checkout.session." + string(status))
}

// TransactionEvent is the event of a transaction moving from one status to
// another: its new status, or reorged when a confirmed one goes back to
// pending. A transaction first recorded in a status has from empty.
func TransactionEvent(from, to TransactionStatus) EventType {
	if from == TxConfirmed && to == TxPending {
		return EventTxReorged
	}
	return EventType("transaction." + string(to))
}

// Expire moves an open or processing session to expired and returns the
// events of the change; none when the session is past those.
func (s *Session) Expire() []EventType {
	if s.Status != SessionOpen && s.Status != SessionProcessing {
		return nil
	}
	s.Status = SessionExpired
	return []EventType{EventSessionExpired}
}

// Cancel moves an open session to canceled and returns the events of the
// change; none when the session is no longer open.
func (s *Session) Cancel() []EventType {
	if s.Status != SessionOpen {
		return nil
	}
	s.Status = SessionCanceled
	return []EventType{EventSessionCanceled}
}

// SessionProgress is what the session's workflow has concluded from its
// payments: the status, the amount paid and any exception.
type SessionProgress struct {
	Status      SessionStatus
	PaidUSD     decimal.Decimal
	Exception   string
	CompletedAt *time.Time
}

// Progress applies p to the session and returns the events of the change:
// the new status, a new exception, or "updated" when only the amount paid
// moved. Progress already applied changes nothing and makes no event.
func (s *Session) Progress(p SessionProgress) []EventType {
	if s.Status == p.Status && s.AmountPaidUSD.Equal(p.PaidUSD) && s.Exception == p.Exception {
		return nil
	}
	var events []EventType
	if s.Status != p.Status {
		events = append(events, SessionStatusEvent(p.Status))
	}
	if p.Exception != "" && s.Exception != p.Exception {
		events = append(events, EventSessionException)
	}
	if len(events) == 0 {
		events = []EventType{EventSessionUpdated}
	}
	s.Status, s.AmountPaidUSD, s.Exception, s.CompletedAt = p.Status, p.PaidUSD, p.Exception, p.CompletedAt
	return events
}

// Event is a recorded change of a plan, a session or a transaction: the
// record as the API showed it then (Data), numbered by the record's
// version, so that consumers order an object's events.
type Event struct {
	ID        string
	ProjectID string
	IsLive    bool
	Type      EventType
	ObjectID  string
	Version   int
	Data      json.RawMessage
	CreatedAt time.Time
}

// Delivery is an event's delivery to one endpoint, with its attempts.
type Delivery struct {
	ID          string
	EventID     string
	EventType   EventType
	EndpointID  string
	Status      string // DeliveryPending, DeliveryDelivered or DeliveryFailed
	Attempts    []Attempt
	DeliveredAt *time.Time
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Attempt is one try at delivering: the receiver's answer (status code
// and the start of its body) or the error that stood in the way.
type Attempt struct {
	Attempt         int       `json:"attempt"`
	At              time.Time `json:"at"`
	StatusCode      *int      `json:"statusCode"`
	LatencyMS       int       `json:"latencyMs"`
	ResponseExcerpt string    `json:"responseExcerpt"`
	Error           string    `json:"error"`
}

// DeliveryStatusAfter is a delivery's status after an attempt: delivered
// on a 2xx, failed when the receiver asked to stop, pending otherwise.
func DeliveryStatusAfter(delivered, stop bool) string {
	switch {
	case delivered:
		return DeliveryDelivered
	case stop:
		return DeliveryFailed
	}
	return DeliveryPending
}
