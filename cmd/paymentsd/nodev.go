//go:build !devstack

package main

import (
	"context"
	"errors"
)

// runDev is only in the dev build: the production build leaves the embedded
// Temporal server out.
func runDev(context.Context, []string) error {
	return errors.New("this build has no dev stack; run `make dev` (or go run -tags devstack ./cmd/paymentsd dev)")
}
