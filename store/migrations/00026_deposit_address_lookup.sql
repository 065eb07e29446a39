-- +goose NO TRANSACTION
-- +goose Up
-- The scan's lookup of watched addresses (DepositAddresses, Recipients)
-- asks for a few hundred addresses at a time among every deposit address
-- ever issued: one hash bucket each instead of a descent of the unique
-- B-tree, so the lookup costs about the same among a million sessions as
-- among a thousand (docs/performance.md, "Data at scale"). The B-tree
-- stays: it holds the addresses unique. Built concurrently, so sessions
-- keep opening meanwhile; one left invalid by a failed build is dropped
-- first.
DROP INDEX CONCURRENTLY IF EXISTS checkout_sessions_deposit_lookup;
CREATE INDEX CONCURRENTLY checkout_sessions_deposit_lookup ON checkout_sessions USING hash (lower(deposit_address))
    WHERE deposit_address <> '' AND NOT shared_recipient;

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS checkout_sessions_deposit_lookup;
