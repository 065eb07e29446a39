//go:build !devstack

package main

import (
	"context"
	"errors"
)

// runDev is only in the dev build: the production build leaves the embedded
// Temporal server out.
func runDev(ctx context.Context, args []string) error {
	if len(args) > 0 && args[0] == "pay" {
		return runDevPay(ctx, args[1:])
	}
	if len(args) > 0 && args[0] == "listen" {
		return runDevListen(ctx, args[1:])
	}
	return errors.New("this build has no dev stack; run `make dev` (or go run -tags devstack ./cmd/paymentsd dev)")
}
