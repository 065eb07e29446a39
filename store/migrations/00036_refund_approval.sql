-- +goose Up
-- A refund to an address the merchant gave waits for an owner's approval
-- (docs/decisions.md, "A refund to the merchant's address is approved"):
-- who approved it, and when. Columns with defaults only: a release before
-- them runs unchanged on this schema. A refund already waiting for its
-- signature with an address the merchant gave is put back to wait for
-- that approval: nothing was sent for it, and an owner approves it before
-- it is signed, as every later one is.
ALTER TABLE refunds ADD COLUMN approved_by text NOT NULL DEFAULT '', ADD COLUMN approved_at timestamptz;
UPDATE refunds SET status = 'awaiting_approval' WHERE status = 'awaiting_signature' AND address_source = 'merchant';

-- +goose Down
UPDATE refunds SET status = 'awaiting_signature' WHERE status = 'awaiting_approval';
ALTER TABLE refunds DROP COLUMN approved_at, DROP COLUMN approved_by;
