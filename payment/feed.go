package payment

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// EventCursor is a position in a project's events feed: after every event
// of the database transactions before XID, and after the events of
// transaction XID up to Seq. The feed's order is the order in which the
// events' transactions were numbered, which a transaction still running
// cannot insert into behind a reader (store.FeedEvents).
type EventCursor struct {
	XID uint64
	Seq int64
}

// cursorVersion starts every cursor, so that another shape can come
// without misreading the old one.
const cursorVersion = "c1"

// String encodes the cursor as the API hands it out: opaque, URL-safe.
func (c EventCursor) String() string {
	return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "%s.%d.%d", cursorVersion, c.XID, c.Seq))
}

// ParseEventCursor decodes a cursor that String made.
func ParseEventCursor(s string) (EventCursor, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return EventCursor{}, false
	}
	parts := strings.Split(string(raw), ".")
	if len(parts) != 3 || parts[0] != cursorVersion {
		return EventCursor{}, false
	}
	xid, err1 := strconv.ParseUint(parts[1], 10, 64)
	seq, err2 := strconv.ParseInt(parts[2], 10, 64)
	if err1 != nil || err2 != nil || seq < 0 {
		return EventCursor{}, false
	}
	return EventCursor{XID: xid, Seq: seq}, true
}

// EventFeedPage is a page of a project's events feed.
type EventFeedPage struct {
	Events []Event
	// Next is where the next page starts: after the page's last event,
	// or, when no more events are readable now, after every event a
	// later write can no longer come before (a reader polling with it
	// skips nothing and starts from there).
	Next EventCursor
	// HasMore says that events after Next are readable now.
	HasMore bool
	// Remaining counts the events readable now from the page's start,
	// the page's own included.
	Remaining int
}

// FeedQuery reads a project's events as a feed: oldest first, each once,
// from Since (by the event's time, inclusive) or from where After left
// off, in pages of Limit; the ListQuery's other filters (type in Status,
// from, to, isLive) apply too. Page is not used.
type FeedQuery struct {
	ListQuery
	Since *time.Time
	After *EventCursor
}
