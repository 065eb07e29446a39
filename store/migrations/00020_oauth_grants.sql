-- +goose Up
-- The authorization server's state (docs/decisions.md "OAuth 2.1").
--
-- oauth_grants: a user's authorization of an application for one project
-- and environment with a set of scopes; every token of it dies with it.
-- Its ID is the OAuth request ID all its codes and tokens share.
CREATE TABLE oauth_grants (
    id             text PRIMARY KEY,
    client_id      text NOT NULL REFERENCES oauth_clients (id),
    user_id        text NOT NULL REFERENCES users (id),
    project_id     text NOT NULL REFERENCES projects (id),
    is_live        boolean NOT NULL,
    scopes         text[] NOT NULL,
    created_at     timestamptz NOT NULL,
    last_used_at   timestamptz,
    revoked_at     timestamptz,
    revoked_reason text
);
CREATE INDEX oauth_grants_project ON oauth_grants (project_id, created_at DESC);
CREATE INDEX oauth_grants_user ON oauth_grants (user_id, created_at DESC);
CREATE INDEX oauth_grants_client ON oauth_grants (client_id) WHERE revoked_at IS NULL;

-- oauth_tokens: authorization codes, PKCE challenges, access and refresh
-- tokens, each under its signature (the HMAC-SHA256 part of the token,
-- keyed with oauth_keys.hmac_key): the token itself is never stored. A
-- used code and a rotated refresh token stay, inactive, until they
-- expire, so that their reuse is detected.
CREATE TABLE oauth_tokens (
    signature        text NOT NULL,
    kind             text NOT NULL CHECK (kind IN ('authorize_code', 'pkce', 'access_token', 'refresh_token')),
    request_id       text NOT NULL,
    client_id        text NOT NULL,
    requested_at     timestamptz NOT NULL,
    requested_scopes text[] NOT NULL,
    granted_scopes   text[] NOT NULL,
    form             jsonb NOT NULL,
    session          jsonb NOT NULL,
    active           boolean NOT NULL DEFAULT true,
    expires_at       timestamptz NOT NULL,
    -- A code's PKCE challenge is kept under the code's signature.
    PRIMARY KEY (signature, kind)
);
CREATE INDEX oauth_tokens_request ON oauth_tokens (request_id, kind);
CREATE INDEX oauth_tokens_expiry ON oauth_tokens (expires_at);

-- oauth_keys: the HMAC key of token signatures, made once by the first
-- process that needs it and shared by every replica.
CREATE TABLE oauth_keys (
    id       int PRIMARY KEY CHECK (id = 1),
    hmac_key bytea NOT NULL CHECK (length(hmac_key) >= 32)
);

-- +goose Down
DROP TABLE oauth_keys;
DROP TABLE oauth_tokens;
DROP TABLE oauth_grants;
