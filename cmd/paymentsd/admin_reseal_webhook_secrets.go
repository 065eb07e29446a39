package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/paymentsd/paymentsd/service"
)

// runResealWebhookSecrets seals every webhook secret again under the
// newest key, reporting each batch, and fails when any secret did not open
// (its key is missing, or the value is damaged): an older key must not be
// retired then.
func runResealWebhookSecrets(ctx context.Context, out io.Writer, args []string) error {
	fs := flag.NewFlagSet("reseal-webhook-secrets", flag.ContinueOnError)
	batch := fs.Int("batch", service.ResealBatchSize, "endpoints per database transaction")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *batch < 1 || *batch > 10_000 {
		return errors.New("--batch must be from 1 to 10000")
	}
	e, closeStore, err := adminService(ctx)
	if err != nil {
		return err
	}
	defer closeStore()
	r, err := e.Webhooks().ResealWebhookSecrets(adminOrigin(ctx), *batch, func(r service.ResealReport) {
		fmt.Fprintf(out, "%d endpoints so far: %d resealed, %d failed\n", r.Endpoints, r.Resealed, len(r.Failed))
	})
	if err != nil {
		return err
	}
	for _, f := range r.Failed {
		fmt.Fprintf(out, "%s: %v\n", f.EndpointID, f.Err)
	}
	fmt.Fprintf(out, "%d endpoints: %d resealed under key %q, %d current already, %d failed\n",
		r.Endpoints, r.Resealed, r.KeyID, r.Endpoints-r.Resealed-len(r.Failed), len(r.Failed))
	if len(r.Failed) > 0 {
		return fmt.Errorf("%d endpoints' secrets did not open (listed above); keep the keys they name until they are resealed", len(r.Failed))
	}
	return nil
}
