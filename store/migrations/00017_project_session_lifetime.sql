-- +goose Up
-- A project's own checkout session lifetime; null: the deployment's
-- (SESSION_LIFETIME).
ALTER TABLE projects ADD COLUMN session_lifetime_seconds bigint;

-- +goose Down
ALTER TABLE projects DROP COLUMN session_lifetime_seconds;
