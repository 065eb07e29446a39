-- +goose NO TRANSACTION
-- +goose Up
-- The transaction that created a session, for the scanning process's set
-- of every deposit address issued (store.WatchedDepositAddresses): each
-- scan reads the sessions created by transactions from the oldest one
-- still running at its previous read on, so no session committed since
-- is missed whatever the order transactions commit in. The column is added
-- without a default (no rewrite of the table), then given one for new rows;
-- rows from before have none and come with the set's first, whole read.
ALTER TABLE checkout_sessions ADD COLUMN IF NOT EXISTS created_xid xid8;
ALTER TABLE checkout_sessions ALTER COLUMN created_xid SET DEFAULT pg_current_xact_id();
DROP INDEX CONCURRENTLY IF EXISTS checkout_sessions_created_xid;
CREATE INDEX CONCURRENTLY checkout_sessions_created_xid ON checkout_sessions (created_xid)
    WHERE created_xid IS NOT NULL AND deposit_address <> '' AND NOT shared_recipient;

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS checkout_sessions_created_xid;
ALTER TABLE checkout_sessions DROP COLUMN IF EXISTS created_xid;
