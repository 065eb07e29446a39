-- +goose NO TRANSACTION
-- +goose Up
-- The transaction that created a hold, for the scanning process's set of
-- every shared recipient ever held (store.WatchedRecipients), read as the
-- set of deposit addresses is (00028): each scan reads the holds created
-- by transactions from the oldest one still running at its previous read
-- on. Added without a default (no rewrite of the table), then given one for
-- new rows; rows from before have none and come with the set's first, whole
-- read.
ALTER TABLE amount_reservations ADD COLUMN IF NOT EXISTS created_xid xid8;
ALTER TABLE amount_reservations ALTER COLUMN created_xid SET DEFAULT pg_current_xact_id();
DROP INDEX CONCURRENTLY IF EXISTS amount_reservations_created_xid;
CREATE INDEX CONCURRENTLY amount_reservations_created_xid ON amount_reservations (created_xid)
    WHERE created_xid IS NOT NULL;

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS amount_reservations_created_xid;
ALTER TABLE amount_reservations DROP COLUMN IF EXISTS created_xid;
