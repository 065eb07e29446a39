-- +goose Up
-- A transfer to the deposit address of a session that no longer took
-- payments is recorded, counted for no session, and flagged for the
-- merchant to settle with the payer.
ALTER TABLE transactions ADD COLUMN unexpected boolean NOT NULL DEFAULT false;
CREATE INDEX transactions_unexpected ON transactions (project_id, created_at) WHERE unexpected;

-- +goose Down
DROP INDEX transactions_unexpected;
ALTER TABLE transactions DROP COLUMN unexpected;
