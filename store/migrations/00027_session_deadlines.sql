-- +goose NO TRANSACTION
-- +goose Up
-- Chainwatch tells the sessions whose expiry or late-payment window its
-- scan has passed (store.SessionsDue): both are read by time range. Built
-- concurrently, so sessions keep opening meanwhile; one left invalid by a
-- failed build is dropped first.
DROP INDEX CONCURRENTLY IF EXISTS checkout_sessions_expiry;
CREATE INDEX CONCURRENTLY checkout_sessions_expiry ON checkout_sessions (expires_at) WHERE status IN ('open', 'processing');
DROP INDEX CONCURRENTLY IF EXISTS checkout_sessions_late_until;
CREATE INDEX CONCURRENTLY checkout_sessions_late_until ON checkout_sessions (late_until);

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS checkout_sessions_late_until;
DROP INDEX CONCURRENTLY IF EXISTS checkout_sessions_expiry;
