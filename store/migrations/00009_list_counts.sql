-- +goose Up
-- The number of rows of the counted lists (transactions, checkout_sessions)
-- per project, environment and status, kept by triggers in the database
-- transaction that writes the rows: a list's total without counting the
-- project's rows on every request, exact whatever path wrote them.
--
-- Each key is split over up to 16 rows (slot), summed on read. A database
-- transaction that changes counts first takes a slot of its own (an
-- advisory lock held to its end) and changes only that slot's rows, so
-- concurrent writers of one project never queue on one counter row until
-- they commit (one row per key caps a project's session creation at a few
-- hundred a second, see docs/performance.md), and never deadlock on them.
CREATE TABLE list_counts (
    kind       text NOT NULL, -- the counted table
    project_id text NOT NULL,
    is_live    boolean NOT NULL,
    status     text NOT NULL,
    slot       smallint NOT NULL,
    n          bigint NOT NULL,
    PRIMARY KEY (kind, project_id, is_live, status, slot)
) WITH (fillfactor = 50); -- room for updates in place (n is in no index)

-- list_counts_slot returns the running database transaction's slot,
-- taking a free one the first time: it tries them all from one its
-- transaction ID picks, and waits for that one only when all 16 are taken
-- (more concurrent writers than slots). The slot is remembered in a setting
-- local to the transaction.
-- +goose StatementBegin
CREATE FUNCTION list_counts_slot() RETURNS smallint
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    slot  smallint := nullif(current_setting('paymentsd.list_counts_slot', true), '')::smallint;
    first smallint;
BEGIN
    IF slot IS NOT NULL THEN
        RETURN slot;
    END IF;
    first := txid_current() % 16;
    FOR i IN 0..15 LOOP
        slot := (first + i) % 16;
        IF pg_try_advisory_xact_lock(hashtext('list_counts'), slot) THEN
            PERFORM set_config('paymentsd.list_counts_slot', slot::text, true);
            RETURN slot;
        END IF;
    END LOOP;
    slot := first;
    PERFORM pg_advisory_xact_lock(hashtext('list_counts'), slot);
    PERFORM set_config('paymentsd.list_counts_slot', slot::text, true);
    RETURN slot;
END
$$;
-- +goose StatementEnd

-- Rows inserted or deleted by a statement are counted once per key, keys
-- in order (a bulk insert takes each counter row once).
-- +goose StatementBegin
CREATE FUNCTION list_counts_inserted() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO list_counts AS c (kind, project_id, is_live, status, slot, n)
    SELECT TG_TABLE_NAME, project_id, is_live, status, list_counts_slot(), count(*) FROM new_rows
    GROUP BY project_id, is_live, status ORDER BY project_id, is_live, status
    ON CONFLICT (kind, project_id, is_live, status, slot) DO UPDATE SET n = c.n + excluded.n;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION list_counts_deleted() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO list_counts AS c (kind, project_id, is_live, status, slot, n)
    SELECT TG_TABLE_NAME, project_id, is_live, status, list_counts_slot(), -count(*) FROM old_rows
    GROUP BY project_id, is_live, status ORDER BY project_id, is_live, status
    ON CONFLICT (kind, project_id, is_live, status, slot) DO UPDATE SET n = c.n + excluded.n;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- A row that changes key (its status, mostly) moves from one count to
-- another. The two counter rows are taken in key order: should two writers
-- ever share a slot (more of them than slots), two changes in opposite
-- directions (a reorg back to pending, say) still never each hold the row
-- the other waits for.
-- +goose StatementBegin
CREATE FUNCTION list_counts_moved() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO list_counts AS c (kind, project_id, is_live, status, slot, n)
    SELECT TG_TABLE_NAME, k.project_id, k.is_live, k.status, list_counts_slot(), k.n
    FROM (VALUES (OLD.project_id, OLD.is_live, OLD.status, -1), (NEW.project_id, NEW.is_live, NEW.status, 1))
        AS k (project_id, is_live, status, n)
    ORDER BY k.project_id, k.is_live, k.status
    ON CONFLICT (kind, project_id, is_live, status, slot) DO UPDATE SET n = c.n + excluded.n;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION list_counts_truncate() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM list_counts WHERE kind = TG_TABLE_NAME;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- list_counts_rebuild recounts a table's rows; it must run where no write
-- to the table can commit meanwhile (the lock below).
-- +goose StatementBegin
CREATE FUNCTION list_counts_rebuild(k text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM list_counts WHERE kind = k;
    EXECUTE format('INSERT INTO list_counts (kind, project_id, is_live, status, slot, n)
        SELECT %L, project_id, is_live, status, 0, count(*) FROM %I GROUP BY project_id, is_live, status', k, k);
END
$$;
-- +goose StatementEnd

-- Writers wait from here to the migration's commit, so the counts below
-- and the triggers' changes after it add up to every row.
LOCK TABLE transactions, checkout_sessions IN SHARE ROW EXCLUSIVE MODE;

CREATE TRIGGER transactions_counted AFTER INSERT ON transactions
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION list_counts_inserted();
CREATE TRIGGER transactions_uncounted AFTER DELETE ON transactions
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION list_counts_deleted();
CREATE TRIGGER transactions_recounted AFTER UPDATE OF project_id, is_live, status ON transactions
    FOR EACH ROW WHEN ((OLD.project_id, OLD.is_live, OLD.status) IS DISTINCT FROM (NEW.project_id, NEW.is_live, NEW.status))
    EXECUTE FUNCTION list_counts_moved();
CREATE TRIGGER transactions_truncated AFTER TRUNCATE ON transactions
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_truncate();

CREATE TRIGGER checkout_sessions_counted AFTER INSERT ON checkout_sessions
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION list_counts_inserted();
CREATE TRIGGER checkout_sessions_uncounted AFTER DELETE ON checkout_sessions
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION list_counts_deleted();
CREATE TRIGGER checkout_sessions_recounted AFTER UPDATE OF project_id, is_live, status ON checkout_sessions
    FOR EACH ROW WHEN ((OLD.project_id, OLD.is_live, OLD.status) IS DISTINCT FROM (NEW.project_id, NEW.is_live, NEW.status))
    EXECUTE FUNCTION list_counts_moved();
CREATE TRIGGER checkout_sessions_truncated AFTER TRUNCATE ON checkout_sessions
    FOR EACH STATEMENT EXECUTE FUNCTION list_counts_truncate();

SELECT list_counts_rebuild('transactions');
SELECT list_counts_rebuild('checkout_sessions');

-- +goose Down
DROP TRIGGER checkout_sessions_truncated ON checkout_sessions;
DROP TRIGGER checkout_sessions_recounted ON checkout_sessions;
DROP TRIGGER checkout_sessions_uncounted ON checkout_sessions;
DROP TRIGGER checkout_sessions_counted ON checkout_sessions;
DROP TRIGGER transactions_truncated ON transactions;
DROP TRIGGER transactions_recounted ON transactions;
DROP TRIGGER transactions_uncounted ON transactions;
DROP TRIGGER transactions_counted ON transactions;
DROP FUNCTION list_counts_rebuild(text);
DROP FUNCTION list_counts_truncate();
DROP FUNCTION list_counts_moved();
DROP FUNCTION list_counts_deleted();
DROP FUNCTION list_counts_inserted();
DROP FUNCTION list_counts_slot();
DROP TABLE list_counts;
