-- +goose Up
ALTER TABLE checkout_sessions ADD COLUMN version integer NOT NULL DEFAULT 0;
ALTER TABLE payment_plans ADD COLUMN version integer NOT NULL DEFAULT 1;
ALTER TABLE events ADD COLUMN dispatched_at timestamptz;
CREATE INDEX events_undispatched ON events (created_at) WHERE dispatched_at IS NULL;
CREATE INDEX events_type ON events (project_id, is_live, type, created_at DESC, id DESC);

CREATE TABLE webhook_endpoints (
    id                    text PRIMARY KEY,
    project_id            text NOT NULL REFERENCES projects (id),
    is_live               boolean NOT NULL,
    url                   text NOT NULL,
    description           text NOT NULL DEFAULT '',
    enabled_events        jsonb NOT NULL,
    secret                text NOT NULL, -- sealed with the deployment's key
    previous_secret       text NOT NULL DEFAULT '',
    previous_secret_until timestamptz,
    status                text NOT NULL,
    disabled_reason       text NOT NULL DEFAULT '',
    failing_since         timestamptz,
    created_at            timestamptz NOT NULL,
    updated_at            timestamptz NOT NULL,
    deleted_at            timestamptz
);
CREATE INDEX webhook_endpoints_list ON webhook_endpoints (project_id, is_live, created_at DESC, id DESC) WHERE deleted_at IS NULL;

CREATE TABLE webhook_deliveries (
    id           text PRIMARY KEY,
    event_id     text NOT NULL REFERENCES events (id),
    endpoint_id  text NOT NULL REFERENCES webhook_endpoints (id),
    project_id   text NOT NULL,
    is_live      boolean NOT NULL,
    status       text NOT NULL,
    attempts     integer NOT NULL DEFAULT 0,
    delivered_at timestamptz,
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    UNIQUE (event_id, endpoint_id)
);
CREATE INDEX webhook_deliveries_list ON webhook_deliveries (endpoint_id, created_at DESC, id DESC);

CREATE TABLE webhook_attempts (
    delivery_id      text NOT NULL REFERENCES webhook_deliveries (id),
    attempt          integer NOT NULL,
    at               timestamptz NOT NULL,
    status_code      integer,
    latency_ms       integer NOT NULL,
    response_excerpt text NOT NULL DEFAULT '',
    error            text NOT NULL DEFAULT '',
    PRIMARY KEY (delivery_id, attempt)
);

-- +goose Down
DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_endpoints;
DROP INDEX events_type;
DROP INDEX events_undispatched;
ALTER TABLE events DROP COLUMN dispatched_at;
ALTER TABLE payment_plans DROP COLUMN version;
ALTER TABLE checkout_sessions DROP COLUMN version;
