-- +goose Up
-- Merchant accounts: users, their dashboard sessions (the cookie's token,
-- stored hashed) and their membership of projects, with a role.
CREATE TABLE users (
    id            text PRIMARY KEY,
    email         text NOT NULL,
    password_hash text NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL
);
CREATE UNIQUE INDEX users_email ON users (lower(email));

CREATE TABLE user_sessions (
    id           text PRIMARY KEY,
    user_id      text NOT NULL REFERENCES users (id),
    token_hash   text NOT NULL UNIQUE,
    user_agent   text NOT NULL DEFAULT '',
    ip           text NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    revoked_at   timestamptz
);
CREATE INDEX user_sessions_user ON user_sessions (user_id);

CREATE TABLE project_members (
    project_id text NOT NULL REFERENCES projects (id),
    user_id    text NOT NULL REFERENCES users (id),
    role       text NOT NULL CHECK (role IN ('owner', 'developer', 'viewer')),
    created_at timestamptz NOT NULL,
    PRIMARY KEY (project_id, user_id)
);
CREATE INDEX project_members_user ON project_members (user_id);

-- API keys managed through the API: a rolled key stays valid until
-- expires_at; last_used_at is kept to the minute.
ALTER TABLE api_keys ADD COLUMN expires_at timestamptz, ADD COLUMN last_used_at timestamptz;

-- +goose Down
ALTER TABLE api_keys DROP COLUMN last_used_at, DROP COLUMN expires_at;
DROP TABLE project_members;
DROP TABLE user_sessions;
DROP TABLE users;
