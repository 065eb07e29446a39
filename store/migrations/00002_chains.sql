-- +goose Up
-- A project's extended public key per environment; deposit addresses are
-- derived from it at increasing indexes and never reused.
CREATE TABLE project_deposit_keys (
    project_id text NOT NULL REFERENCES projects (id),
    is_live    boolean NOT NULL,
    xpub       text NOT NULL,
    next_index bigint NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (project_id, is_live)
);
-- One key serves one project environment: two sharing a key would hand
-- out the same addresses.
CREATE UNIQUE INDEX project_deposit_keys_xpub ON project_deposit_keys (xpub);

ALTER TABLE checkout_sessions ADD COLUMN deposit_index bigint;
ALTER TABLE checkout_sessions ADD COLUMN late_until timestamptz;
CREATE UNIQUE INDEX checkout_sessions_deposit_address ON checkout_sessions (lower(deposit_address)) WHERE deposit_address <> '';
CREATE INDEX checkout_sessions_watch ON checkout_sessions (late_until) WHERE deposit_address <> '';

-- The scanner's durable cursor: the hashes of the latest scanned blocks of
-- each network, so that a reorg rewinds to the common ancestor.
CREATE TABLE scanned_blocks (
    network    text NOT NULL,
    number     bigint NOT NULL,
    hash       text NOT NULL,
    parent     text NOT NULL,
    scanned_at timestamptz NOT NULL,
    PRIMARY KEY (network, number)
);

-- Events recorded with the state change they describe (an outbox).
CREATE TABLE events (
    id         text PRIMARY KEY,
    project_id text NOT NULL REFERENCES projects (id),
    is_live    boolean NOT NULL,
    type       text NOT NULL,
    object_id  text NOT NULL,
    version    integer NOT NULL,
    data       jsonb NOT NULL,
    created_at timestamptz NOT NULL,
    UNIQUE (object_id, version)
);
CREATE INDEX events_list ON events (project_id, is_live, created_at DESC, id DESC);

ALTER TABLE transactions ADD COLUMN version integer NOT NULL DEFAULT 1;

-- +goose Down
ALTER TABLE transactions DROP COLUMN version;
DROP TABLE events;
DROP TABLE scanned_blocks;
DROP INDEX checkout_sessions_watch;
DROP INDEX checkout_sessions_deposit_address;
ALTER TABLE checkout_sessions DROP COLUMN late_until;
ALTER TABLE checkout_sessions DROP COLUMN deposit_index;
DROP TABLE project_deposit_keys;
