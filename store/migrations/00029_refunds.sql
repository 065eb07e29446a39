-- +goose Up
-- Refunds of checkout sessions (docs/decisions.md "Refunds"): what goes
-- back, from which address, to whom, and where its transfer stands. A new
-- table only: a release before it runs unchanged on this schema.
CREATE TABLE refunds (
    id                  text PRIMARY KEY,
    project_id          text NOT NULL REFERENCES projects (id),
    is_live             boolean NOT NULL,
    checkout_session_id text NOT NULL REFERENCES checkout_sessions (id),
    status              text NOT NULL,
    network             text NOT NULL,
    chain_id            bigint NOT NULL,
    asset_definition_id text NOT NULL,
    symbol              text NOT NULL,
    decimals            integer NOT NULL,
    token_address       text NOT NULL DEFAULT '',
    amount_base_units   numeric(78, 0) NOT NULL CHECK (amount_base_units > 0),
    amount_usd          numeric(19, 6),
    rate_usd            numeric,
    reason              text NOT NULL DEFAULT '',
    from_address        text NOT NULL,
    to_address          text NOT NULL DEFAULT '',
    address_source      text NOT NULL DEFAULT '' CHECK (address_source IN ('', 'customer', 'merchant')),
    claim_token_hash    text NOT NULL UNIQUE,
    tx_hash             text NOT NULL DEFAULT '',
    failure_reason      text NOT NULL DEFAULT '',
    version             integer NOT NULL,
    created_at          timestamptz NOT NULL,
    updated_at          timestamptz NOT NULL
);
CREATE INDEX refunds_list ON refunds (project_id, is_live, created_at DESC, id DESC);
CREATE INDEX refunds_status ON refunds (project_id, is_live, status, created_at DESC, id DESC);
CREATE INDEX refunds_session ON refunds (checkout_session_id);
-- The refunds each network's chainwatch follows on chain, and those whose
-- prepared transfer its scans watch for.
CREATE INDEX refunds_following ON refunds (network, updated_at) WHERE status IN ('sent', 'confirmed');
CREATE INDEX refunds_awaiting ON refunds (network, created_at) WHERE status = 'awaiting_signature';

-- +goose Down
DROP TABLE refunds;
