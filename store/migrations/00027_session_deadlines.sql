-- +goose Up
-- Chainwatch tells the sessions whose expiry or late-payment window its
-- scan has passed (store.SessionsDue): both are read by time range.
CREATE INDEX checkout_sessions_expiry ON checkout_sessions (expires_at) WHERE status IN ('open', 'processing');
CREATE INDEX checkout_sessions_late_until ON checkout_sessions (late_until);

-- +goose Down
DROP INDEX checkout_sessions_late_until;
DROP INDEX checkout_sessions_expiry;
