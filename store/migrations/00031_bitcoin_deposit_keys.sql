-- +goose Up
-- A project environment's Bitcoin account key (docs/bitcoin.md): the
-- BIP84 (or BIP86) account's extended public key its Bitcoin deposit
-- addresses derive from, beside the EVM key of project_deposit_keys. Its
-- identity is claimed in deposit_key_identities like an EVM key's: one
-- account key serves one project environment, whichever chains it serves.
-- A new table only: a release before it runs unchanged on this schema.
CREATE TABLE project_bitcoin_keys (
    project_id   text NOT NULL REFERENCES projects (id),
    is_live      boolean NOT NULL,
    xpub         text NOT NULL,
    address_type text NOT NULL CHECK (address_type IN ('p2wpkh', 'p2tr')),
    key_identity text NOT NULL,
    next_index   bigint NOT NULL DEFAULT 0,
    created_at   timestamptz NOT NULL,
    PRIMARY KEY (project_id, is_live)
);

-- +goose Down
DROP TABLE project_bitcoin_keys;
