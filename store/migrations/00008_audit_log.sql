-- +goose Up
-- Every management change: who (an API key or an operator), when, from
-- where (the client's address and user agent, or the admin command's
-- host), and what. Append-only: nothing updates or deletes a row.
CREATE TABLE audit_log (
    id          text PRIMARY KEY,
    project_id  text NOT NULL REFERENCES projects (id),
    is_live     boolean NOT NULL,
    created_at  timestamptz NOT NULL,
    actor_kind  text NOT NULL,
    actor_id    text NOT NULL,
    ip          text NOT NULL,
    user_agent  text NOT NULL,
    action      text NOT NULL,
    target_type text NOT NULL,
    target_id   text NOT NULL,
    details     jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_log_list ON audit_log (project_id, is_live, created_at DESC, id DESC);

-- +goose Down
DROP TABLE audit_log;
