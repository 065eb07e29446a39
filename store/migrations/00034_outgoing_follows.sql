-- +goose Up
-- Money out takes the road money in takes (docs/decisions.md, "Money out
-- on the same road as money in"): a workflow follows each refund and
-- payout once sent, each on-chain transfer counts once, and the scans
-- find a transfer made unreported by its destination rather than through
-- a capped list. Columns and tables are added; a release before them runs
-- unchanged on this schema.
ALTER TABLE refunds ADD COLUMN sent_at timestamptz, ADD COLUMN log_index integer;
ALTER TABLE payouts ADD COLUMN sent_at timestamptz, ADD COLUMN log_index integer;
UPDATE refunds SET sent_at = updated_at WHERE tx_hash <> '';
UPDATE payouts SET sent_at = updated_at WHERE tx_hash <> '';

-- Each on-chain transfer (chain, transaction, log index) pays one
-- outgoing item at most, whichever project's.
CREATE TABLE outgoing_transfers (
    chain_id  bigint NOT NULL,
    tx_hash   text NOT NULL,
    log_index integer NOT NULL,
    item_id   text NOT NULL UNIQUE,
    PRIMARY KEY (chain_id, tx_hash, log_index)
);

-- The workflow starts not made yet of the items to follow: written with
-- the change that makes an item sent, deleted once its workflow runs.
CREATE TABLE outgoing_follows (
    item_id  text PRIMARY KEY,
    due_at   timestamptz NOT NULL,
    attempts integer NOT NULL DEFAULT 0
);
CREATE INDEX outgoing_follows_due ON outgoing_follows (due_at);
INSERT INTO outgoing_follows (item_id, due_at)
    SELECT id, now() FROM refunds WHERE status IN ('sent', 'confirmed')
    UNION ALL SELECT id, now() FROM payouts WHERE status IN ('sent', 'confirmed');

-- refunds_following, payouts_following, refunds_awaiting and
-- payouts_awaiting serve the previous release's scans while it drains:
-- dropped by a later release.
-- What a scan's recipients find waiting for their signature, or sent and
-- not mined (a replacement may pay them).
CREATE INDEX refunds_awaiting_to ON refunds (network, lower(to_address)) WHERE status IN ('awaiting_signature', 'sent', 'stale');
CREATE INDEX payouts_awaiting_to ON payouts (network, lower(to_address)) WHERE status IN ('awaiting_signature', 'sent', 'stale');
-- A reported transaction's items, and a project's transfers in flight.
CREATE INDEX refunds_tx_hash ON refunds (tx_hash) WHERE tx_hash <> '';
CREATE INDEX payouts_tx_hash ON payouts (tx_hash) WHERE tx_hash <> '';
CREATE INDEX refunds_in_flight ON refunds (project_id, is_live) WHERE status IN ('sent', 'stale');
CREATE INDEX payouts_in_flight ON payouts (project_id, is_live) WHERE status IN ('sent', 'stale');

-- +goose Down
DROP INDEX payouts_in_flight;
DROP INDEX refunds_in_flight;
DROP INDEX payouts_tx_hash;
DROP INDEX refunds_tx_hash;
DROP INDEX payouts_awaiting_to;
DROP INDEX refunds_awaiting_to;
DROP TABLE outgoing_follows;
DROP TABLE outgoing_transfers;
ALTER TABLE payouts DROP COLUMN log_index, DROP COLUMN sent_at;
ALTER TABLE refunds DROP COLUMN log_index, DROP COLUMN sent_at;
