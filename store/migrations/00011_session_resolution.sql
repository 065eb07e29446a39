-- +goose Up
-- A merchant's resolution of a session's exception (an underpayment
-- accepted, an overpayment settled outside the engine); empty when none.
ALTER TABLE checkout_sessions ADD COLUMN resolution text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE checkout_sessions DROP COLUMN resolution;
