-- +goose Up
-- A Bitcoin scan records the transactions paying the destinations of
-- refunds and payouts that wait for their signature or are sent, stale or
-- confirmed (a reorg's new block must be seen while the item is still
-- recorded confirmed): the confirmed ones are read by destination too.
-- New indexes only: a release before it runs unchanged on this schema.
CREATE INDEX refunds_confirmed_to ON refunds (network, lower(to_address)) WHERE status = 'confirmed';
CREATE INDEX payouts_confirmed_to ON payouts (network, lower(to_address)) WHERE status = 'confirmed';

-- +goose Down
DROP INDEX payouts_confirmed_to;
DROP INDEX refunds_confirmed_to;
