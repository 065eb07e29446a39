package main

import (
	"context"
	"log/slog"

	"github.com/paymentsd/paymentsd/api"
)

// runAPI is `paymentsd api`: the REST and Connect API on HTTP_ADDR.
func runAPI(ctx context.Context) error {
	p, closeProcess, err := startProcess(ctx, "paymentsd-api")
	if err != nil {
		return err
	}
	defer closeProcess()
	c, d := p.c, p.d
	if c.DatabaseReadURL != "" {
		if err := d.store.UseReplica(ctx, c.DatabaseReadURL); err != nil {
			return err
		}
	}
	cfg := apiConfig(c)
	// METRICS_ADDR moves /metrics off the API's address (the dev stack,
	// which runs the API and the worker in one process, keeps it there).
	cfg.MetricsAddr = c.MetricsAddr
	if cfg.MetricsAddr == "" {
		slog.Warn("/metrics is served on the API's address: keep it from the public, or set METRICS_ADDR to serve it apart")
	}
	return api.Run(ctx, api.Deps{
		Service:   serviceDeps(c, d),
		Config:    cfg,
		Addr:      c.HTTPAddr,
		RedisURL:  c.RedisURL,
		Telemetry: p.tel,
	})
}

// apiConfig is the API's configuration, for `paymentsd api` and the dev
// stack alike.
func apiConfig(c config) api.Config {
	return api.Config{Limits: c.Limits, PublicURL: c.PublicURL, TrustedProxies: c.TrustedProxies,
		SignupDisabled: c.SignupDisabled, Shape: c.Shape, ReauthWindow: c.ReauthWindow, MaxInflight: c.MaxInflight}
}
