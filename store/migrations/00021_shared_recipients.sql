-- +goose Up
-- Plans priced in token amounts, paid to one recipient address that every
-- session of the plan shares (docs/decisions.md "Payments to a shared
-- recipient address").
ALTER TABLE payment_plans
    ADD COLUMN recipient_address text NOT NULL DEFAULT '',
    ADD COLUMN token_options jsonb NOT NULL DEFAULT '[]',
    ADD COLUMN quote_ttl_seconds integer NOT NULL DEFAULT 0;

-- A session of such a plan has the plan's recipient as its address, shared
-- with the plan's other sessions: the unique index covers per-session
-- deposit addresses only.
ALTER TABLE checkout_sessions ADD COLUMN shared_recipient boolean NOT NULL DEFAULT false;
DROP INDEX checkout_sessions_deposit_address;
CREATE UNIQUE INDEX checkout_sessions_deposit_address ON checkout_sessions (lower(deposit_address))
    WHERE deposit_address <> '' AND NOT shared_recipient;

-- The exact amount a session asks on one (network, asset, recipient), held
-- from the session's creation to the end of its late-payment window. Two
-- holds of the same amount never overlap (allocation takes a lock on the
-- triple and skips the amounts held, plus a grace period), so a transfer
-- of that amount mined inside a hold is that session's and no other's.
CREATE TABLE amount_reservations (
    session_id        text NOT NULL,
    project_id        text NOT NULL REFERENCES projects (id),
    is_live           boolean NOT NULL,
    network           text NOT NULL,
    asset_id          text NOT NULL,
    recipient         text NOT NULL, -- lowercase
    amount_base_units numeric(78, 0) NOT NULL,
    held_from         timestamptz NOT NULL,
    held_until        timestamptz NOT NULL,
    PRIMARY KEY (session_id, network, asset_id)
);
CREATE INDEX amount_reservations_match ON amount_reservations (network, recipient, asset_id, amount_base_units, held_until);
CREATE INDEX amount_reservations_recipient ON amount_reservations (network, recipient, held_from DESC);

-- A transfer to a shared recipient that matches no hold is recorded for the
-- recipient's project with no session, for the merchant to assign by hand.
ALTER TABLE transactions ALTER COLUMN checkout_session_id DROP NOT NULL;
ALTER TABLE transactions ALTER COLUMN payment_plan_id DROP NOT NULL;

-- +goose Down
DELETE FROM transactions WHERE checkout_session_id IS NULL;
ALTER TABLE transactions ALTER COLUMN payment_plan_id SET NOT NULL;
ALTER TABLE transactions ALTER COLUMN checkout_session_id SET NOT NULL;
DROP TABLE amount_reservations;
DROP INDEX checkout_sessions_deposit_address;
CREATE UNIQUE INDEX checkout_sessions_deposit_address ON checkout_sessions (lower(deposit_address)) WHERE deposit_address <> '';
ALTER TABLE checkout_sessions DROP COLUMN shared_recipient;
ALTER TABLE payment_plans DROP COLUMN quote_ttl_seconds, DROP COLUMN token_options, DROP COLUMN recipient_address;
