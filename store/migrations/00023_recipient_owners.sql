-- +goose Up
-- Recipient addresses a project has proven it controls (a signed
-- challenge), per environment (docs/security.md "Tenant isolation of
-- recipients"). A row without verified_at is a pending challenge. One
-- project owns an address per environment: the partial unique index.
CREATE TABLE recipients (
    project_id           text NOT NULL REFERENCES projects (id),
    is_live              boolean NOT NULL,
    address              text NOT NULL, -- lowercase
    challenge            text NOT NULL DEFAULT '',
    challenge_expires_at timestamptz,
    verified_at          timestamptz,
    method               text NOT NULL DEFAULT '' CHECK (method IN ('', 'eip191', 'eip1271')),
    created_at           timestamptz NOT NULL,
    PRIMARY KEY (project_id, is_live, address)
);
CREATE UNIQUE INDEX recipients_owner ON recipients (is_live, address) WHERE verified_at IS NOT NULL;
CREATE INDEX recipients_address ON recipients (address);

-- Holds name their plan, so the open holds of a plan can be bounded.
ALTER TABLE amount_reservations ADD COLUMN plan_id text NOT NULL DEFAULT '';
UPDATE amount_reservations r SET plan_id = s.payment_plan_id FROM checkout_sessions s WHERE s.id = r.session_id;
CREATE INDEX amount_reservations_plan ON amount_reservations (plan_id, held_until);

-- +goose Down
DROP INDEX amount_reservations_plan;
ALTER TABLE amount_reservations DROP COLUMN plan_id;
DROP TABLE recipients;
