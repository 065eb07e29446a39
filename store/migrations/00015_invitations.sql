-- +goose Up
-- Invitations to a project: the owner gets the token once; the invitee,
-- signed in with the invited email, accepts it.
CREATE TABLE project_invitations (
    id          text PRIMARY KEY,
    project_id  text NOT NULL REFERENCES projects (id),
    email       text NOT NULL,
    role        text NOT NULL CHECK (role IN ('owner', 'developer', 'viewer')),
    token_hash  text NOT NULL UNIQUE,
    invited_by  text NOT NULL REFERENCES users (id),
    created_at  timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL,
    accepted_at timestamptz,
    accepted_by text REFERENCES users (id)
);
CREATE INDEX project_invitations_project ON project_invitations (project_id);

-- +goose Down
DROP TABLE project_invitations;
