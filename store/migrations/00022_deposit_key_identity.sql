-- +goose Up
-- A deposit key is identified by what derives its addresses: its public key
-- and chain code (deposit.Key.Identity, the hex SHA-256 of the compressed
-- public key followed by the chain code). The serialized key also carries a
-- version, a depth, its parent's fingerprint and its child number, which
-- derive nothing: strings differing there only are one key, and the unique
-- index on xpub (00002) let them through.
ALTER TABLE project_deposit_keys ADD COLUMN key_identity text;

-- Every key identity a project environment has set, bound to it for good:
-- its sessions keep their addresses (a late payment can still come), so the
-- key never serves another project, nor the project's other environment,
-- even after it is replaced. Setting a key claims its identity here first
-- (store SetDepositKey); the primary key makes two claims of one identity,
-- concurrent or not, one winner.
CREATE TABLE deposit_key_identities (
    key_identity text PRIMARY KEY,
    project_id   text NOT NULL REFERENCES projects (id),
    is_live      boolean NOT NULL,
    created_at   timestamptz NOT NULL
);

-- The identity of a stored key, computed here from its base58check string
-- (payload: version 4 bytes, depth 1, parent fingerprint 4, child number 4,
-- chain code 32, public key 33; then a checksum of 4). The keys were checked
-- when set, so the checksum is not checked again.
-- +goose StatementBegin
CREATE FUNCTION pg_temp.xpub_identity(s text) RETURNS text LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
    alphabet constant text := '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
    n numeric := 0;
    b bytea := ''::bytea;
    d int;
BEGIN
    FOR i IN 1..length(s) LOOP
        d := strpos(alphabet, substr(s, i, 1)) - 1;
        IF d < 0 THEN
            RETURN NULL;
        END IF;
        n := n * 58 + d;
    END LOOP;
    FOR i IN 1..82 LOOP
        b := set_byte(decode('00', 'hex'), 0, mod(n, 256)::int) || b;
        n := div(n, 256);
    END LOOP;
    IF n <> 0 THEN
        RETURN NULL;
    END IF;
    RETURN encode(sha256(substring(b FROM 46 FOR 33) || substring(b FROM 14 FOR 32)), 'hex');
END
$$;
-- +goose StatementEnd

UPDATE project_deposit_keys SET key_identity = pg_temp.xpub_identity(xpub);

-- Two environments already sharing a key (set before this check) are both
-- kept, so that neither's sessions stop: the identity is bound to the one
-- that set it first, and `paymentsd admin reconcile` reports the other
-- (deposit-key-shared) for its owner to replace.
INSERT INTO deposit_key_identities (key_identity, project_id, is_live, created_at)
SELECT DISTINCT ON (key_identity) key_identity, project_id, is_live, created_at
FROM project_deposit_keys WHERE key_identity IS NOT NULL
ORDER BY key_identity, created_at, project_id, is_live;

DROP FUNCTION pg_temp.xpub_identity(text);

CREATE INDEX project_deposit_keys_identity ON project_deposit_keys (key_identity);

-- +goose Down
DROP INDEX project_deposit_keys_identity;
DROP TABLE deposit_key_identities;
ALTER TABLE project_deposit_keys DROP COLUMN key_identity;
