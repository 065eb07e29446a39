-- +goose Up
-- Passkeys: a user's WebAuthn handle (random, made with the first
-- passkey), each credential as go-webauthn records it, and the
-- ceremonies' single-use challenges.
ALTER TABLE users ADD COLUMN webauthn_handle bytea UNIQUE;

CREATE TABLE passkeys (
    id            text PRIMARY KEY,
    user_id       text NOT NULL REFERENCES users (id),
    credential_id bytea NOT NULL UNIQUE,
    credential    jsonb NOT NULL,
    name          text NOT NULL,
    created_at    timestamptz NOT NULL,
    last_used_at  timestamptz
);
CREATE INDEX passkeys_user ON passkeys (user_id);

CREATE TABLE webauthn_challenges (
    id         text PRIMARY KEY,
    kind       text NOT NULL CHECK (kind IN ('registration', 'login')),
    user_id    text REFERENCES users (id),
    session    jsonb NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at    timestamptz
);

-- +goose Down
DROP TABLE webauthn_challenges;
DROP TABLE passkeys;
ALTER TABLE users DROP COLUMN webauthn_handle;
