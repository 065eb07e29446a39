-- +goose Up
-- Third-party applications a project's owners register for OAuth 2.1:
-- their redirect URIs (matched exactly) and, for a confidential client,
-- the SHA-256 of its secret (a random 256-bit value, shown once).
CREATE TABLE oauth_clients (
    id            text PRIMARY KEY,
    project_id    text NOT NULL REFERENCES projects (id),
    name          text NOT NULL,
    redirect_uris jsonb NOT NULL,
    confidential  boolean NOT NULL,
    secret_hash   text NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL,
    revoked_at    timestamptz
);
CREATE INDEX oauth_clients_project ON oauth_clients (project_id, created_at DESC);

-- +goose Down
DROP TABLE oauth_clients;
