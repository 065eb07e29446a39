package service

import (
	"context"
	"errors"

	"go.temporal.io/api/serviceerror"

	"github.com/paymentsd/paymentsd/store"
)

// Unavailable tells whether err is a service the engine needs being out
// of reach or overloaded for now (the database, or Temporal: its rate
// limits, an unreachable or restarting server, a call it did not answer
// in time), or a wait past its deadline, not a fault of the request nor
// of the engine: the API answers 503 with Retry-After, to be tried again.
func Unavailable(err error) bool {
	var down *serviceerror.Unavailable
	var late *serviceerror.DeadlineExceeded
	var exhausted *serviceerror.ResourceExhausted
	return store.Unavailable(err) || errors.As(err, &down) || errors.As(err, &late) || errors.As(err, &exhausted) ||
		errors.Is(err, context.DeadlineExceeded)
}
