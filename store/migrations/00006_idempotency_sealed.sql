-- +goose Up
-- Idempotency records keep no secret in plaintext: a record is found by a
-- hash of its scope (the API key, or the public caller's address) and key,
-- and the first response is kept sealed with a key derived from the
-- Idempotency-Key itself, which only its caller holds. Records expire after
-- 24 hours and are deleted then.
CREATE TABLE idempotency_records (
    id              bytea PRIMARY KEY,
    request_hash    text NOT NULL,
    status_code     integer,
    response_sealed bytea,
    created_at      timestamptz NOT NULL
);
CREATE INDEX idempotency_records_created ON idempotency_records (created_at);
-- Records of API keys made in the last day still refuse another body and
-- still stop a duplicate; their plaintext response is not carried over, so
-- a replay of one answers a conflict that says so. Records of the old
-- shared public scope are dropped: that scope is gone.
INSERT INTO idempotency_records (id, request_hash, status_code, response_sealed, created_at)
    SELECT sha256(convert_to('key:' || scope || E'\n' || key, 'UTF8')), request_hash, status_code, NULL, created_at
    FROM idempotency_keys
    WHERE scope <> 'public' AND created_at > now() - interval '24 hours';
DROP TABLE idempotency_keys;

-- +goose Down
CREATE TABLE idempotency_keys (
    scope         text NOT NULL,
    key           text NOT NULL,
    request_hash  text NOT NULL,
    status_code   integer,
    response_body bytea,
    created_at    timestamptz NOT NULL,
    PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
DROP TABLE idempotency_records;
