-- +goose Up
-- Payout batches and their payouts (docs/payouts.md): transfers a merchant
-- pays from an address of theirs, approved by an owner, signed by the
-- merchant and followed on chain. New tables only: a release before them
-- runs unchanged on this schema.
CREATE TABLE payout_batches (
    id           text PRIMARY KEY,
    project_id   text NOT NULL REFERENCES projects (id),
    is_live      boolean NOT NULL,
    status       text NOT NULL,
    reference    text NOT NULL DEFAULT '',
    from_address text NOT NULL,
    created_by   text NOT NULL,
    approved_by  text NOT NULL DEFAULT '',
    approved_at  timestamptz,
    payout_count integer NOT NULL CHECK (payout_count > 0),
    version      integer NOT NULL,
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL
);
CREATE INDEX payout_batches_list ON payout_batches (project_id, is_live, created_at DESC, id DESC);
CREATE INDEX payout_batches_status ON payout_batches (project_id, is_live, status, created_at DESC, id DESC);

CREATE TABLE payouts (
    id                  text PRIMARY KEY,
    batch_id            text NOT NULL REFERENCES payout_batches (id),
    project_id          text NOT NULL REFERENCES projects (id),
    is_live             boolean NOT NULL,
    line                integer NOT NULL,
    reference           text NOT NULL DEFAULT '',
    status              text NOT NULL,
    network             text NOT NULL,
    chain_id            bigint NOT NULL,
    asset_definition_id text NOT NULL,
    symbol              text NOT NULL,
    decimals            integer NOT NULL,
    token_address       text NOT NULL DEFAULT '',
    amount_base_units   numeric(78, 0) NOT NULL CHECK (amount_base_units > 0),
    from_address        text NOT NULL,
    to_address          text NOT NULL,
    tx_hash             text NOT NULL DEFAULT '',
    failure_reason      text NOT NULL DEFAULT '',
    version             integer NOT NULL,
    created_at          timestamptz NOT NULL,
    updated_at          timestamptz NOT NULL,
    UNIQUE (batch_id, line)
);
-- The payouts each network's chainwatch follows on chain, and those whose
-- prepared transfer its scans watch for.
CREATE INDEX payouts_following ON payouts (network, updated_at) WHERE status IN ('sent', 'confirmed');
CREATE INDEX payouts_awaiting ON payouts (network, created_at) WHERE status = 'awaiting_signature';

-- +goose Down
DROP TABLE payouts;
DROP TABLE payout_batches;
