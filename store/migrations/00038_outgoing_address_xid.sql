-- +goose NO TRANSACTION
-- +goose Up
-- The transaction that last gave a refund or payout its destination, for
-- the scanning process's set of every destination money out was ever
-- given (store.AwaitingOutgoingTo), read as the set of deposit addresses
-- is (00028): each scan reads the items whose destination was set by
-- transactions from the oldest one still running at its previous read on.
-- A new row takes its transaction's ID by default; a trigger renews it when
-- the destination changes (a claim, a merchant's change). Rows from before
-- have none and come with the set's first, whole read.
ALTER TABLE refunds ADD COLUMN IF NOT EXISTS address_xid xid8;
ALTER TABLE refunds ALTER COLUMN address_xid SET DEFAULT pg_current_xact_id();
ALTER TABLE payouts ADD COLUMN IF NOT EXISTS address_xid xid8;
ALTER TABLE payouts ALTER COLUMN address_xid SET DEFAULT pg_current_xact_id();

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION outgoing_address_xid() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.address_xid := pg_current_xact_id();
    RETURN NEW;
END
$$;
-- +goose StatementEnd
CREATE OR REPLACE TRIGGER refunds_address_xid BEFORE UPDATE OF to_address ON refunds
    FOR EACH ROW WHEN (OLD.to_address IS DISTINCT FROM NEW.to_address) EXECUTE FUNCTION outgoing_address_xid();
CREATE OR REPLACE TRIGGER payouts_address_xid BEFORE UPDATE OF to_address ON payouts
    FOR EACH ROW WHEN (OLD.to_address IS DISTINCT FROM NEW.to_address) EXECUTE FUNCTION outgoing_address_xid();

DROP INDEX CONCURRENTLY IF EXISTS refunds_address_xid;
CREATE INDEX CONCURRENTLY refunds_address_xid ON refunds (address_xid) WHERE address_xid IS NOT NULL AND to_address <> '';
DROP INDEX CONCURRENTLY IF EXISTS payouts_address_xid;
CREATE INDEX CONCURRENTLY payouts_address_xid ON payouts (address_xid) WHERE address_xid IS NOT NULL AND to_address <> '';

-- The refunds and payouts approved and not sent yet are followed from now
-- by their workflows, as newly approved ones are from their approval.
INSERT INTO outgoing_follows (item_id, due_at)
    SELECT id, now() FROM refunds WHERE status = 'awaiting_signature'
    UNION ALL SELECT id, now() FROM payouts WHERE status = 'awaiting_signature'
    ON CONFLICT (item_id) DO NOTHING;

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS payouts_address_xid;
DROP INDEX CONCURRENTLY IF EXISTS refunds_address_xid;
DROP TRIGGER IF EXISTS payouts_address_xid ON payouts;
DROP TRIGGER IF EXISTS refunds_address_xid ON refunds;
DROP FUNCTION IF EXISTS outgoing_address_xid();
ALTER TABLE payouts DROP COLUMN IF EXISTS address_xid;
ALTER TABLE refunds DROP COLUMN IF EXISTS address_xid;
