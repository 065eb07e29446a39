-- +goose Up
-- The export of a project's used deposit addresses reads them by index.
CREATE INDEX checkout_sessions_deposit_index ON checkout_sessions (project_id, is_live, deposit_index)
    WHERE deposit_index IS NOT NULL;

-- +goose Down
DROP INDEX checkout_sessions_deposit_index;
