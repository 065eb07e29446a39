-- +goose Up
-- A Bitcoin scan records the transactions paying the destinations of
-- refunds and payouts that wait for their signature or are sent, stale or
-- confirmed (a reorg's new block must be seen while the item is still
-- recorded confirmed): the confirmed ones are read by destination too.
-- New indexes only: a release before it runs unchanged on this schema.
CREATE INDEX refunds_confirmed_to ON refunds (network, lower(to_address)) WHERE status = 'confirmed';
CREATE INDEX payouts_confirmed_to ON payouts (network, lower(to_address)) WHERE status = 'confirmed';
-- The outputs a Bitcoin transaction pays to watched addresses, by
-- address: a deposit address's listing finds the change the project's own
-- refunds and payouts sent back to it.
CREATE INDEX bitcoin_transactions_outputs ON bitcoin_transactions USING gin (outputs jsonb_path_ops);

-- +goose Down
DROP INDEX bitcoin_transactions_outputs;
DROP INDEX payouts_confirmed_to;
DROP INDEX refunds_confirmed_to;
