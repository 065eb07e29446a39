-- +goose Up
-- Invitations can be revoked: by an owner, or when the member who sent
-- one, or the person it was addressed to, is removed from the project
-- (docs/identity.md "Members and invitations").
ALTER TABLE project_invitations
    ADD COLUMN revoked_at timestamptz,
    ADD COLUMN revoked_reason text;

-- +goose Down
ALTER TABLE project_invitations DROP COLUMN revoked_reason, DROP COLUMN revoked_at;
