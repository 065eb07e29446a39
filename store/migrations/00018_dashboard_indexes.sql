-- +goose Up
-- The dashboard's reads: what needs the merchant (sessions with an
-- exception not resolved, unexpected transfers not assigned) counted and
-- listed without scanning a project's every row, and the overview's sums
-- of payments by the time they were confirmed.
CREATE INDEX checkout_sessions_exception ON checkout_sessions (project_id, is_live, created_at DESC, id DESC)
    WHERE exception <> '';
CREATE INDEX transactions_unassigned ON transactions (project_id, is_live, created_at DESC, id DESC)
    WHERE unexpected AND assigned_session_id IS NULL;
CREATE INDEX transactions_confirmed ON transactions (project_id, is_live, confirmed_at)
    WHERE confirmed_at IS NOT NULL;

-- +goose Down
DROP INDEX transactions_confirmed;
DROP INDEX transactions_unassigned;
DROP INDEX checkout_sessions_exception;
