-- +goose Up
-- Sudo mode (docs/identity.md "Sensitive actions"): when the session's
-- user last proved who they are (a password or a passkey assertion, at
-- sign-in or re-authentication). A session opened before is taken as
-- proved at its start.
ALTER TABLE user_sessions ADD COLUMN authenticated_at timestamptz;
UPDATE user_sessions SET authenticated_at = created_at;
ALTER TABLE user_sessions ALTER COLUMN authenticated_at SET NOT NULL;

-- The account's own security log: re-authentications, password changes,
-- passkeys added, removed or refused; what a project's audit log cannot
-- hold, since an account is no project's.
CREATE TABLE account_events (
    id         text PRIMARY KEY,
    user_id    text NOT NULL REFERENCES users (id),
    created_at timestamptz NOT NULL,
    action     text NOT NULL,
    session_id text NOT NULL DEFAULT '',
    ip         text NOT NULL DEFAULT '',
    user_agent text NOT NULL DEFAULT '',
    details    jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX account_events_user ON account_events (user_id, created_at DESC, id DESC);

-- +goose Down
DROP TABLE account_events;
ALTER TABLE user_sessions DROP COLUMN authenticated_at;
