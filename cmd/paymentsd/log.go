package main

import "log/slog"

// slogAdapter sends the Temporal SDK's logs to slog.
type slogAdapter struct{}

func (slogAdapter) Debug(msg string, kv ...any) {}
func (slogAdapter) Info(msg string, kv ...any)  { slog.Info(msg, kv...) }
func (slogAdapter) Warn(msg string, kv ...any)  { slog.Warn(msg, kv...) }
func (slogAdapter) Error(msg string, kv ...any) { slog.Error(msg, kv...) }
