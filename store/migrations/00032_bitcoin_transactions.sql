-- +goose Up
-- The Bitcoin deposit addresses given to sessions, by address (the scans
-- look them up) and by derivation index of the project environment's
-- Bitcoin account key (project_bitcoin_keys).
CREATE TABLE bitcoin_deposit_addresses (
    address          text PRIMARY KEY,
    session_id       text NOT NULL UNIQUE,
    project_id       text NOT NULL,
    is_live          boolean NOT NULL,
    derivation_index bigint NOT NULL,
    created_at       timestamptz NOT NULL,
    UNIQUE (project_id, is_live, derivation_index)
);

-- What a Bitcoin network's scans saw of each transaction that pays a
-- watched address (docs/networks.md, "Bitcoin"): those outputs (vout,
-- address, sats), the outputs it spends
-- ("txid:vout"; another transaction spending one conflicts with it), the
-- block that last mined it, and the transaction found conflicting with it
-- (a replacement by fee, a double spend), in a block or in the mempool.
-- A transaction's follower reads it with the node's chain to tell where the
-- transaction stands. A new table only: a release before it runs unchanged.
CREATE TABLE bitcoin_transactions (
    network            text NOT NULL,
    txid               text NOT NULL,
    outputs            jsonb NOT NULL,
    spends             text[] NOT NULL,
    block_hash         text,
    block_height       bigint,
    block_time         timestamptz,
    conflicted_by      text,
    conflict_mined     boolean NOT NULL DEFAULT false,
    first_seen_at      timestamptz NOT NULL,
    PRIMARY KEY (network, txid),
    CHECK ((block_hash IS NULL) = (block_height IS NULL) AND (block_hash IS NULL) = (block_time IS NULL))
);
CREATE INDEX bitcoin_transactions_spends ON bitcoin_transactions USING gin (spends);

-- +goose Down
DROP TABLE bitcoin_transactions;
DROP TABLE bitcoin_deposit_addresses;
