-- +goose Up
-- An unexpected transfer (one its address's session no longer took) that
-- the merchant assigned to a session, which then counts it. The row keeps
-- its address's session, so a rescan matches it as before.
ALTER TABLE transactions ADD COLUMN assigned_session_id text REFERENCES checkout_sessions (id);
CREATE INDEX transactions_assigned ON transactions (assigned_session_id) WHERE assigned_session_id IS NOT NULL;

-- +goose Down
DROP INDEX transactions_assigned;
ALTER TABLE transactions DROP COLUMN assigned_session_id;
