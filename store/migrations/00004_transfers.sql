-- +goose Up
-- A claim (a hash the payer submitted, not matched to a transfer yet) has
-- no log index. A session has at most one open claim per transaction.
ALTER TABLE transactions ALTER COLUMN log_index DROP NOT NULL;
ALTER TABLE transactions ALTER COLUMN log_index DROP DEFAULT;
CREATE UNIQUE INDEX transactions_open_claim ON transactions (chain_id, tx_hash, checkout_session_id)
    WHERE log_index IS NULL AND status = 'pending';

-- How far each network's scanner has reported transfers to their sessions:
-- a session decides its expiry once every network it takes is reported
-- past its expiresAt, so a payment mined in time is never judged late
-- because the scanner saw it late.
CREATE TABLE scan_progress (
    network      text PRIMARY KEY,
    block_number bigint NOT NULL,
    block_time   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL
);

-- +goose Down
DROP TABLE scan_progress;
DROP INDEX transactions_open_claim;
DELETE FROM transactions WHERE log_index IS NULL;
ALTER TABLE transactions ALTER COLUMN log_index SET DEFAULT -1;
ALTER TABLE transactions ALTER COLUMN log_index SET NOT NULL;
