package payment

import (
	"errors"
	"fmt"
	"slices"
)

// Kind classifies an error so that each transport can map it to its own
// status: the REST layer to an HTTP status and the spec's error envelope,
// the Connect layer to a Connect code.
type Kind int

const (
	KindInternal Kind = iota
	KindValidation
	KindNotFound
	KindConflict
	KindUnauthenticated
	KindForbidden
	KindRateLimited
	KindUnavailable
)

// FieldError names one offending field by its JSON path, for example
// "acceptedAssetPolicies[0].assetDefinitionId".
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// Error is an error with a kind, a message fit to show to a client and, for
// validation errors, one detail per offending field.
type Error struct {
	Kind    Kind
	Message string
	Details []FieldError
}

func (e *Error) Error() string {
	if len(e.Details) == 0 {
		return e.Message
	}
	return fmt.Sprintf("%s: %s: %s", e.Message, e.Details[0].Field, e.Details[0].Message)
}

// KindOf returns the kind of err, KindInternal for errors without one.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindInternal
}

// Sentinel errors shared by the store and the operations.
var (
	ErrNotFound     = &Error{Kind: KindNotFound, Message: "Resource not found"}
	ErrConflict     = &Error{Kind: KindConflict, Message: "Resource conflict"}
	ErrUnauthorized = &Error{Kind: KindUnauthenticated, Message: "Missing or invalid credentials"}
	ErrPlanArchived = &Error{Kind: KindValidation, Message: "Validation failed", Details: []FieldError{{Field: "paymentPlanId", Message: "payment plan is archived"}}}
	ErrPlanExpired  = &Error{Kind: KindValidation, Message: "Validation failed", Details: []FieldError{{Field: "paymentPlanId", Message: "payment plan has expired"}}}
)

// NotFound returns a not-found error that names what was missing.
func NotFound(what string) *Error {
	return &Error{Kind: KindNotFound, Message: what + " not found"}
}

// Conflict returns a conflict error with the given message.
func Conflict(msg string) *Error { return &Error{Kind: KindConflict, Message: msg} }

// Problems collects field errors while a payload is checked.
type Problems []FieldError

// Add records a problem with a field.
func (p *Problems) Add(field, msg string) { *p = append(*p, FieldError{Field: field, Message: msg}) }

// Addf records a problem with a formatted message.
func (p *Problems) Addf(field, format string, args ...any) {
	p.Add(field, fmt.Sprintf(format, args...))
}

// Merge adds the problems of more whose fields have none yet, so that a
// field of the wrong type is not also reported as missing.
func (p *Problems) Merge(more Problems) {
	for _, m := range more {
		if !slices.ContainsFunc(*p, func(f FieldError) bool { return f.Field == m.Field }) {
			*p = append(*p, m)
		}
	}
}

// Err returns a validation error holding every problem, or nil if none.
func (p Problems) Err() error {
	if len(p) == 0 {
		return nil
	}
	return &Error{Kind: KindValidation, Message: "Validation failed", Details: []FieldError(p)}
}
