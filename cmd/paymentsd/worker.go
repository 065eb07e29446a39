package main

import (
	"context"
	"log/slog"

	"github.com/paymentsd/paymentsd/worker"
)

// runWorker is `paymentsd worker`: the Temporal worker with the chainwatch workflows,
// the webhook dispatcher and the sweeper of session starts.
func runWorker(ctx context.Context) error {
	p, closeProcess, err := startProcess(ctx, "paymentsd-worker")
	if err != nil {
		return err
	}
	defer closeProcess()
	c, d := p.c, p.d
	slog.Info("worker starting", "temporal", c.Temporal.Address, "namespace", c.Temporal.Namespace, "security", c.Temporal.Mode())
	return worker.Run(ctx, worker.Deps{
		Store: d.store, Temporal: d.temporal, Chains: d.chains,
		Webhooks: worker.Webhooks{Sealer: sealer(c), AllowPrivate: c.WebhookAllowPrivate,
			DisableAfter: c.WebhookDisableAfter, Shape: c.Shape},
		Namespace:         c.Temporal.Namespace,
		MetricsAddr:       c.MetricsAddr,
		StopTimeout:       c.WorkerStopTimeout,
		StaleAfter:        c.MoneyOutStaleAfter,
		WorkflowCacheSize: c.WorkflowCacheSize,
		Promote:           c.WorkerPromote,
	})
}
