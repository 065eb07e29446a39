-- +goose Up
-- The events feed (GET …/events?since=…&after=…): every event exactly
-- once, in an order that a concurrent writer cannot insert into behind a
-- reader. Events are ordered by the ID of the database transaction that
-- wrote them (xid), then by a sequence within it (seq), and a reader sees
-- only the events of transactions older than the oldest one still running
-- (pg_snapshot_xmin of its snapshot): those are all committed or rolled
-- back, so no event can appear later before the reader's position. An
-- order by created_at or by seq alone cannot promise that: both are taken
-- when a row is written, not when it commits.
ALTER TABLE events ADD COLUMN xid xid8, ADD COLUMN seq bigint;

-- The events recorded so far are all committed: they come first (xid 0),
-- in the order they were recorded.
UPDATE events e SET xid = '0', seq = o.n
FROM (SELECT id, row_number() OVER (ORDER BY created_at, id) AS n FROM events) o
WHERE e.id = o.id;

CREATE SEQUENCE events_seq OWNED BY events.seq;
SELECT setval('events_seq', coalesce((SELECT max(seq) FROM events), 0) + 1, false);

ALTER TABLE events
    ALTER COLUMN xid SET DEFAULT pg_current_xact_id(),
    ALTER COLUMN xid SET NOT NULL,
    ALTER COLUMN seq SET DEFAULT nextval('events_seq'),
    ALTER COLUMN seq SET NOT NULL;

CREATE UNIQUE INDEX events_feed ON events (project_id, is_live, xid, seq);

-- +goose Down
DROP INDEX events_feed;
ALTER TABLE events DROP COLUMN seq, DROP COLUMN xid;
