-- +goose Up
-- A checkout session whose workflow is still to be started. The API
-- records it with the session, in one database transaction, then starts
-- the workflow and deletes the row; a row left behind (the API crashed,
-- Temporal was unreachable) is started by a worker's sweep once it is
-- due, or by the first call that needs the session's workflow.
CREATE TABLE session_starts (
    session_id text PRIMARY KEY REFERENCES checkout_sessions (id) ON DELETE CASCADE,
    plan_title text NOT NULL,
    -- The workflow's input, as JSON text, byte for byte.
    input      json NOT NULL,
    created_at timestamptz NOT NULL,
    -- When a sweep may take it: after the API had its chance, and after
    -- a sweep's claim has lapsed.
    due_at     timestamptz NOT NULL,
    attempts   integer NOT NULL DEFAULT 0
);
CREATE INDEX session_starts_due ON session_starts (due_at);

-- +goose Down
DROP TABLE session_starts;
