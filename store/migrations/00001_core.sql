-- +goose Up
CREATE TABLE projects (
    id                             text PRIMARY KEY,
    name                           text NOT NULL,
    complete_on                    text NOT NULL DEFAULT 'finalized' CHECK (complete_on IN ('confirmed', 'finalized')),
    underpayment_tolerance_percent numeric(5, 2) NOT NULL DEFAULT 0,
    late_payment_window_seconds    bigint NOT NULL DEFAULT 86400,
    created_at                     timestamptz NOT NULL,
    updated_at                     timestamptz NOT NULL
);

CREATE TABLE api_keys (
    id         text PRIMARY KEY,
    project_id text NOT NULL REFERENCES projects (id),
    is_live    boolean NOT NULL,
    key_hash   text NOT NULL UNIQUE,
    key_hint   text NOT NULL,
    created_at timestamptz NOT NULL,
    revoked_at timestamptz
);
CREATE INDEX api_keys_project ON api_keys (project_id);

CREATE TABLE payment_plans (
    id                      text PRIMARY KEY,
    project_id              text NOT NULL REFERENCES projects (id),
    is_live                 boolean NOT NULL,
    title                   text NOT NULL,
    pricing_model           text NOT NULL,
    amount_usd              numeric(19, 6),
    min_amount_usd          numeric(19, 6),
    max_amount_usd          numeric(19, 6),
    accepted_asset_policies jsonb NOT NULL DEFAULT '[]',
    redirect_url            text NOT NULL DEFAULT '',
    merchant_info           jsonb NOT NULL DEFAULT '{}',
    expires_at              timestamptz,
    status                  text NOT NULL,
    created_at              timestamptz NOT NULL,
    updated_at              timestamptz NOT NULL
);
CREATE INDEX payment_plans_list ON payment_plans (project_id, is_live, created_at DESC, id DESC);

CREATE TABLE checkout_sessions (
    id               text PRIMARY KEY,
    token_hash       text NOT NULL UNIQUE,
    project_id       text NOT NULL REFERENCES projects (id),
    payment_plan_id  text NOT NULL REFERENCES payment_plans (id),
    is_live          boolean NOT NULL,
    status           text NOT NULL,
    email            text NOT NULL DEFAULT '',
    metadata         jsonb NOT NULL DEFAULT '{}',
    amount_usd       numeric(19, 6) NOT NULL,
    amount_paid_usd  numeric(19, 6) NOT NULL DEFAULT 0,
    deposit_address  text NOT NULL DEFAULT '',
    payment_options  jsonb NOT NULL DEFAULT '[]',
    quote_expires_at timestamptz NOT NULL,
    expires_at       timestamptz NOT NULL,
    completed_at     timestamptz,
    exception        text NOT NULL DEFAULT '',
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL
);
CREATE INDEX checkout_sessions_list ON checkout_sessions (project_id, is_live, created_at DESC, id DESC);

CREATE TABLE transactions (
    id                     text PRIMARY KEY,
    project_id             text NOT NULL REFERENCES projects (id),
    checkout_session_id    text NOT NULL REFERENCES checkout_sessions (id),
    payment_plan_id        text NOT NULL REFERENCES payment_plans (id),
    is_live                boolean NOT NULL,
    status                 text NOT NULL,
    network                text NOT NULL,
    chain_id               bigint NOT NULL,
    tx_hash                text NOT NULL,
    log_index              integer NOT NULL DEFAULT -1,
    from_address           text NOT NULL DEFAULT '',
    to_address             text NOT NULL DEFAULT '',
    asset_definition_id    text NOT NULL,
    symbol                 text NOT NULL,
    amount                 text NOT NULL,
    amount_base_units      numeric(78, 0) NOT NULL,
    amount_usd             numeric(19, 6) NOT NULL,
    block_number           bigint,
    block_hash             text NOT NULL DEFAULT '',
    confirmations          integer NOT NULL DEFAULT 0,
    required_confirmations integer NOT NULL DEFAULT 0,
    failure_reason         text NOT NULL DEFAULT '',
    status_history         jsonb NOT NULL DEFAULT '[]',
    created_at             timestamptz NOT NULL,
    updated_at             timestamptz NOT NULL,
    confirmed_at           timestamptz,
    finalized_at           timestamptz,
    failed_at              timestamptz,
    UNIQUE (chain_id, tx_hash, log_index)
);
CREATE INDEX transactions_list ON transactions (project_id, is_live, created_at DESC, id DESC);
CREATE INDEX transactions_status ON transactions (project_id, is_live, status, created_at DESC, id DESC);
CREATE INDEX transactions_session ON transactions (checkout_session_id);

-- Idempotency-Key records: the first response to a POST, replayed for 24 hours.
CREATE TABLE idempotency_keys (
    scope         text NOT NULL,
    key           text NOT NULL,
    request_hash  text NOT NULL,
    status_code   integer,
    response_body bytea,
    created_at    timestamptz NOT NULL,
    PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

-- +goose Down
DROP TABLE idempotency_keys;
DROP TABLE transactions;
DROP TABLE checkout_sessions;
DROP TABLE payment_plans;
DROP TABLE api_keys;
DROP TABLE projects;
