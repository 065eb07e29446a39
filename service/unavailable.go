package service

import (
	"errors"

	"go.temporal.io/api/serviceerror"

	"github.com/paymentsd/paymentsd/store"
)

// Unavailable tells whether err is a service the engine needs being out
// of reach for now (the database, or Temporal), not a fault of the
// request nor of the engine: the API answers 503, to be tried again.
func Unavailable(err error) bool {
	var down *serviceerror.Unavailable
	var late *serviceerror.DeadlineExceeded
	return store.Unavailable(err) || errors.As(err, &down) || errors.As(err, &late)
}
