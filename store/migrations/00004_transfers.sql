-- +goose Up
-- A claim (a hash the payer submitted, not matched to a transfer yet) has
-- no log index. A session has at most one open claim per transaction.
ALTER TABLE transactions ALTER COLUMN log_index DROP NOT NULL;
ALTER TABLE transactions ALTER COLUMN log_index DROP DEFAULT;
CREATE UNIQUE INDEX transactions_open_claim ON transactions (chain_id, tx_hash, checkout_session_id)
    WHERE log_index IS NULL AND status = 'pending';

-- +goose Down
DROP INDEX transactions_open_claim;
DELETE FROM transactions WHERE log_index IS NULL;
ALTER TABLE transactions ALTER COLUMN log_index SET DEFAULT -1;
ALTER TABLE transactions ALTER COLUMN log_index SET NOT NULL;
