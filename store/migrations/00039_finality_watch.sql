-- +goose NO TRANSACTION
-- +goose Up
-- The finality watch re-checks, by block hash, the blocks of the finalized
-- payments of each network within its reorg window (store.FinalizedBlocks):
-- read by network and block number. Refunds and payouts keep the block
-- that mined their transfer, as incoming transactions do. Built
-- concurrently, so payments keep being recorded meanwhile.
ALTER TABLE refunds ADD COLUMN IF NOT EXISTS block_number bigint, ADD COLUMN IF NOT EXISTS block_hash text NOT NULL DEFAULT '';
ALTER TABLE payouts ADD COLUMN IF NOT EXISTS block_number bigint, ADD COLUMN IF NOT EXISTS block_hash text NOT NULL DEFAULT '';
DROP INDEX CONCURRENTLY IF EXISTS transactions_finalized_blocks;
CREATE INDEX CONCURRENTLY transactions_finalized_blocks ON transactions (network, block_number) WHERE status = 'finalized';
DROP INDEX CONCURRENTLY IF EXISTS refunds_finalized_blocks;
CREATE INDEX CONCURRENTLY refunds_finalized_blocks ON refunds (network, block_number) WHERE status = 'finalized';
DROP INDEX CONCURRENTLY IF EXISTS payouts_finalized_blocks;
CREATE INDEX CONCURRENTLY payouts_finalized_blocks ON payouts (network, block_number) WHERE status = 'finalized';

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS payouts_finalized_blocks;
DROP INDEX CONCURRENTLY IF EXISTS refunds_finalized_blocks;
DROP INDEX CONCURRENTLY IF EXISTS transactions_finalized_blocks;
ALTER TABLE payouts DROP COLUMN IF EXISTS block_hash, DROP COLUMN IF EXISTS block_number;
ALTER TABLE refunds DROP COLUMN IF EXISTS block_hash, DROP COLUMN IF EXISTS block_number;
