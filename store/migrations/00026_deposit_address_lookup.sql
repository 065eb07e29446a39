-- +goose NO TRANSACTION
-- +goose Up
-- The scan's lookup of watched addresses (DepositAddresses, Recipients)
-- asks for a few hundred addresses at a time among every deposit address
-- ever issued: one hash bucket each instead of a descent of the unique
-- B-tree, which among a million sessions takes the lookup from 4.5-5.7 ms
-- to 2.5-3.1 ms (docs/performance.md, "Data at scale"). The B-tree stays:
-- it holds the addresses unique. Built concurrently, so sessions keep
-- opening meanwhile; one left invalid by a failed build is dropped first.
DROP INDEX CONCURRENTLY IF EXISTS checkout_sessions_deposit_lookup;
CREATE INDEX CONCURRENTLY checkout_sessions_deposit_lookup ON checkout_sessions USING hash (lower(deposit_address))
    WHERE deposit_address <> '' AND NOT shared_recipient;

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS checkout_sessions_deposit_lookup;
