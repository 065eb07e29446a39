package main

import (
	"io"
	"log/slog"

	"github.com/paymentsd/paymentsd/internal/redact"
)

// newLogger is the process's logger: JSON lines on w, scrubbed of every
// secret the configuration registered (redact.Register, redact.RegisterURL:
// RPC, database and Redis URLs, the Temporal API key, the webhook
// encryption keys), in the message and in every attribute, errors wrapped
// by libraries included.
func newLogger(w io.Writer) *slog.Logger {
	return slog.New(redact.Handler(slog.NewJSONHandler(w, nil)))
}

// slogAdapter sends the Temporal SDK's logs to slog.
type slogAdapter struct{}

func (slogAdapter) Debug(msg string, kv ...any) {}
func (slogAdapter) Info(msg string, kv ...any)  { slog.Info(msg, kv...) }
func (slogAdapter) Warn(msg string, kv ...any)  { slog.Warn(msg, kv...) }
func (slogAdapter) Error(msg string, kv ...any) { slog.Error(msg, kv...) }
