package rest

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service"
)

// RetryAfterUnavailable is the Retry-After, in seconds, of what a
// dependency could not answer (the database or Temporal is overloaded,
// restarting or unreachable): every 503 sends it.
const RetryAfterUnavailable = "2"

// Envelope is the spec's response envelope (section 1), for success and
// error alike.
type Envelope struct {
	Success    bool       `json:"success"`
	StatusCode int        `json:"statusCode"`
	Message    string     `json:"message"`
	Data       any        `json:"data,omitempty"`
	Error      *errorBody `json:"error,omitempty"`
	Meta       meta       `json:"meta"`
}

type meta struct {
	Timestamp  string      `json:"timestamp"`
	RequestID  string      `json:"requestId"`
	Path       string      `json:"path"`
	Pagination *Pagination `json:"pagination,omitempty"`
	// NextCursor, in a page of the events feed, is the after of the next
	// page (or of the next poll, when hasNextPage is false).
	NextCursor string `json:"nextCursor,omitempty"`
}

type Pagination struct {
	Page            int  `json:"page"`
	Limit           int  `json:"limit"`
	Total           int  `json:"total"`
	TotalPages      int  `json:"totalPages"`
	HasNextPage     bool `json:"hasNextPage"`
	HasPreviousPage bool `json:"hasPreviousPage"`
}

func NewPagination(q payment.ListQuery, total int) *Pagination {
	pages := (total + q.Limit - 1) / q.Limit
	return &Pagination{Page: q.Page, Limit: q.Limit, Total: total, TotalPages: pages,
		HasNextPage: q.Page < pages, HasPreviousPage: q.Page > 1}
}

type errorBody struct {
	Code    string               `json:"code"`
	Message string               `json:"message"`
	Details []payment.FieldError `json:"details"`
}

type ctxKey int

const (
	RequestIDKey ctxKey = iota
	PrincipalKey
)

func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(RequestIDKey).(string)
	return id
}

func newMeta(r *http.Request) meta {
	return meta{Timestamp: time.Now().UTC().Format(time.RFC3339Nano), RequestID: RequestID(r.Context()), Path: r.URL.Path}
}

func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// OK writes a success envelope.
func OK(w http.ResponseWriter, r *http.Request, status int, message string, data any) {
	WriteJSON(w, status, Envelope{Success: true, StatusCode: status, Message: message, Data: data, Meta: newMeta(r)})
}

// OKList writes a success envelope with a page of items.
func OKList[T any](w http.ResponseWriter, r *http.Request, message string, items []T, q payment.ListQuery, total int) {
	m := newMeta(r)
	m.Pagination = NewPagination(q, total)
	if items == nil {
		items = []T{}
	}
	WriteJSON(w, http.StatusOK, Envelope{Success: true, StatusCode: http.StatusOK, Message: message, Data: items, Meta: m})
}

// OKFeed writes a success envelope with a page of the events feed: its
// pagination counts from this page (page 1 of the events left), and
// nextCursor goes on from it.
func OKFeed[T any](w http.ResponseWriter, r *http.Request, message string, items []T, q payment.FeedQuery, page payment.EventFeedPage) {
	m := newMeta(r)
	m.Pagination = &Pagination{Page: 1, Limit: q.Limit, Total: page.Remaining, TotalPages: (page.Remaining + q.Limit - 1) / q.Limit,
		HasNextPage: page.HasMore, HasPreviousPage: q.After != nil}
	m.NextCursor = page.Next.String()
	if items == nil {
		items = []T{}
	}
	WriteJSON(w, http.StatusOK, Envelope{Success: true, StatusCode: http.StatusOK, Message: message, Data: items, Meta: m})
}

// Fail writes an error envelope with an explicit status and code.
func Fail(w http.ResponseWriter, r *http.Request, status int, code, message string, details []payment.FieldError) {
	if details == nil {
		details = []payment.FieldError{}
	}
	if status == http.StatusServiceUnavailable && w.Header().Get("Retry-After") == "" {
		// Every 503 says when to come back, as a 429 does.
		w.Header().Set("Retry-After", RetryAfterUnavailable)
	}
	WriteJSON(w, status, Envelope{StatusCode: status, Message: message,
		Error: &errorBody{Code: code, Message: message, Details: details}, Meta: newMeta(r)})
}

// FailErr turns an error into its HTTP status and error envelope (a body
// that is not JSON at all is a 400). This is
// the one place where error kinds become HTTP statuses.
func FailErr(w http.ResponseWriter, r *http.Request, err error) {
	var malformed Malformed
	if errors.As(err, &malformed) {
		Fail(w, r, http.StatusBadRequest, "BAD_REQUEST", malformed.Msg, nil)
		return
	}
	var e *payment.Error
	if !errors.As(err, &e) {
		if service.Unavailable(err) {
			// The database or Temporal is out of reach or overloaded (a
			// restart, a failover, its limits): nothing is wrong with the
			// request, which the client may send again.
			slog.WarnContext(r.Context(), "request failed: a service is unavailable", "err", err, "path", r.URL.Path, "requestId", RequestID(r.Context()))
			Fail(w, r, http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE", "The service is unavailable for a moment; retry after "+RetryAfterUnavailable+" s", nil)
			return
		}
		slog.ErrorContext(r.Context(), "request failed", "err", err, "path", r.URL.Path, "requestId", RequestID(r.Context()))
		Fail(w, r, http.StatusInternalServerError, "INTERNAL_ERROR", "Internal server error", nil)
		return
	}
	status, code := statusOf(e.Kind)
	if status >= 500 {
		slog.WarnContext(r.Context(), "request failed", "err", err, "path", r.URL.Path, "requestId", RequestID(r.Context()))
	}
	Fail(w, r, status, code, e.Message, e.Details)
}

func statusOf(k payment.Kind) (int, string) {
	switch k {
	case payment.KindValidation:
		return http.StatusUnprocessableEntity, "VALIDATION_ERROR"
	case payment.KindNotFound:
		return http.StatusNotFound, "NOT_FOUND"
	case payment.KindConflict:
		return http.StatusConflict, "CONFLICT"
	case payment.KindUnauthenticated:
		return http.StatusUnauthorized, "UNAUTHENTICATED"
	case payment.KindForbidden:
		return http.StatusForbidden, "FORBIDDEN"
	case payment.KindRateLimited:
		return http.StatusTooManyRequests, "RATE_LIMITED"
	case payment.KindUnavailable:
		return http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE"
	}
	return http.StatusInternalServerError, "INTERNAL_ERROR"
}
