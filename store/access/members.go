package access

import (
	"context"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store/internal/db"
)

// ListMembers lists a project's members with their emails and roles.
func (s Store) ListMembers(ctx context.Context, projectID string) ([]payment.Member, error) {
	rows, err := s.h.Pool.Query(ctx, `SELECT m.user_id, u.email, m.role, m.created_at FROM project_members m JOIN users u ON u.id = m.user_id
		WHERE m.project_id = $1 ORDER BY m.created_at, m.user_id`, projectID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (payment.Member, error) {
		var m payment.Member
		err := r.Scan(&m.UserID, &m.Email, &m.Role, &m.CreatedAt)
		m.CreatedAt = m.CreatedAt.UTC()
		return m, err
	})
}

// ChangeMember sets a member's role (role non-empty) or removes the
// member (role empty), refusing to leave the project without an owner. A
// removal revokes, in the same transaction, the project's pending
// invitations the member sent and those addressed to the member's email;
// revoked lists their IDs.
func (s Store) ChangeMember(ctx context.Context, projectID, userID string, role payment.Role, now time.Time) (revoked []string, err error) {
	err = s.h.WithTx(ctx, func(tx pgx.Tx) error {
		// Lock the project's memberships: two owners demoting each other
		// at once cannot leave none.
		rows, err := tx.Query(ctx, `SELECT user_id, role FROM project_members WHERE project_id = $1 FOR UPDATE`, projectID)
		if err != nil {
			return err
		}
		var owners int
		var current payment.Role
		found := false
		for rows.Next() {
			var id string
			var r payment.Role
			if err := rows.Scan(&id, &r); err != nil {
				rows.Close()
				return err
			}
			if r == payment.RoleOwner {
				owners++
			}
			if id == userID {
				current, found = r, true
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if !found {
			return payment.NotFound("Member")
		}
		if current == payment.RoleOwner && role != payment.RoleOwner && owners == 1 {
			return payment.Conflict("A project keeps at least one owner: make another member owner first")
		}
		if role != "" {
			_, err = tx.Exec(ctx, `UPDATE project_members SET role = $3 WHERE project_id = $1 AND user_id = $2`, projectID, userID, role)
			return err
		}
		if _, err = tx.Exec(ctx, `DELETE FROM project_members WHERE project_id = $1 AND user_id = $2`, projectID, userID); err != nil {
			return err
		}
		rows, err = tx.Query(ctx, `UPDATE project_invitations SET revoked_at = $3, revoked_reason = 'member_removed'
			WHERE project_id = $1 AND accepted_at IS NULL AND revoked_at IS NULL
			AND (invited_by = $2 OR lower(email) = (SELECT lower(email) FROM users WHERE id = $2)) RETURNING id`, projectID, userID, now)
		if err != nil {
			return err
		}
		revoked, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	return revoked, err
}

// CreateInvitation records an invitation under its token's hash.
func (s Store) CreateInvitation(ctx context.Context, inv payment.Invitation, tokenHash string) error {
	_, err := s.db(ctx).Exec(ctx, `INSERT INTO project_invitations (id, project_id, email, role, token_hash, invited_by, created_at, expires_at)
		VALUES ($1,$2,$3,$4,$5,$6,$7,$8)`, inv.ID, inv.ProjectID, inv.Email, inv.Role, tokenHash, inv.InvitedBy, inv.CreatedAt, inv.ExpiresAt)
	return db.MapErr(err)
}

// AcceptInvitation makes the user a member with the invitation's role,
// once: the invitation must be unexpired, unused, unrevoked, made out to
// the user's email, and its inviter must still be an owner of the project
// (the inviter's membership is locked while the invitee joins, so a
// removal at the same moment comes first or after, never between). An
// existing member keeps the higher of the two roles.
func (s Store) AcceptInvitation(ctx context.Context, tokenHash string, u payment.User, now time.Time) (payment.Invitation, error) {
	var inv payment.Invitation
	err := s.h.WithTx(ctx, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `SELECT id, project_id, email, role, invited_by, created_at, expires_at FROM project_invitations
			WHERE token_hash = $1 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > $2 FOR UPDATE`, tokenHash, now).
			Scan(&inv.ID, &inv.ProjectID, &inv.Email, &inv.Role, &inv.InvitedBy, &inv.CreatedAt, &inv.ExpiresAt)
		if err != nil {
			return db.MapErr(err)
		}
		if !strings.EqualFold(inv.Email, u.Email) {
			return payment.NotFound("Invitation")
		}
		var inviterRole payment.Role
		err = tx.QueryRow(ctx, `SELECT role FROM project_members WHERE project_id = $1 AND user_id = $2 FOR SHARE`,
			inv.ProjectID, inv.InvitedBy).Scan(&inviterRole)
		if err != nil && err != pgx.ErrNoRows {
			return err
		}
		if inviterRole != payment.RoleOwner {
			return errInviterGone
		}
		if _, err := tx.Exec(ctx, `INSERT INTO project_members (project_id, user_id, role, created_at) VALUES ($1,$2,$3,$4)
			ON CONFLICT (project_id, user_id) DO UPDATE SET role = CASE
				WHEN project_members.role = 'owner' OR EXCLUDED.role = 'owner' THEN 'owner'
				WHEN project_members.role = 'developer' OR EXCLUDED.role = 'developer' THEN 'developer'
				ELSE 'viewer' END`, inv.ProjectID, u.ID, inv.Role, now); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE project_invitations SET accepted_at = $2, accepted_by = $3 WHERE id = $1`, inv.ID, now, u.ID)
		return err
	})
	return inv, err
}

// errInviterGone refuses an invitation whose inviter is no longer an
// owner of the project.
var errInviterGone = &payment.Error{Kind: payment.KindNotFound,
	Message: "Invitation not found: the member who sent it is no longer an owner of the project"}

// ListInvitations lists a project's pending invitations (unaccepted,
// unrevoked, unexpired), newest first, with the inviter's email.
func (s Store) ListInvitations(ctx context.Context, projectID string, now time.Time) ([]payment.Invitation, error) {
	rows, err := s.h.Pool.Query(ctx, `SELECT i.id, i.project_id, i.email, i.role, i.invited_by, coalesce(u.email, ''), i.created_at, i.expires_at
		FROM project_invitations i LEFT JOIN users u ON u.id = i.invited_by
		WHERE i.project_id = $1 AND i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > $2
		ORDER BY i.created_at DESC, i.id DESC`, projectID, now)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (payment.Invitation, error) {
		var inv payment.Invitation
		err := r.Scan(&inv.ID, &inv.ProjectID, &inv.Email, &inv.Role, &inv.InvitedBy, &inv.InvitedByEmail, &inv.CreatedAt, &inv.ExpiresAt)
		inv.CreatedAt, inv.ExpiresAt = inv.CreatedAt.UTC(), inv.ExpiresAt.UTC()
		return inv, err
	})
}

// RevokeInvitation revokes a project's pending invitation; ErrNotFound
// when there is none of that ID pending.
func (s Store) RevokeInvitation(ctx context.Context, projectID, id string, now time.Time) (payment.Invitation, error) {
	var inv payment.Invitation
	err := s.db(ctx).QueryRow(ctx, `UPDATE project_invitations SET revoked_at = $3, revoked_reason = 'revoked'
		WHERE project_id = $1 AND id = $2 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > $3
		RETURNING id, project_id, email, role, invited_by, created_at, expires_at`, projectID, id, now).
		Scan(&inv.ID, &inv.ProjectID, &inv.Email, &inv.Role, &inv.InvitedBy, &inv.CreatedAt, &inv.ExpiresAt)
	return inv, db.MapErr(err)
}

// UpdateProject writes a project's name and settings.
func (s Store) UpdateProject(ctx context.Context, p payment.Project) error {
	var lifetime *int64
	if p.SessionLifetime > 0 {
		secs := int64(p.SessionLifetime / time.Second)
		lifetime = &secs
	}
	tag, err := s.db(ctx).Exec(ctx, `UPDATE projects SET name = $2, complete_on = $3, underpayment_tolerance_percent = $4,
		late_payment_window_seconds = $5, session_lifetime_seconds = $6, updated_at = $7 WHERE id = $1`, p.ID, p.Name, p.CompleteOn,
		p.UnderpaymentTolerancePercent.String(), int64(p.LatePaymentWindow/time.Second), lifetime, p.UpdatedAt)
	if err != nil {
		return db.MapErr(err)
	}
	if tag.RowsAffected() == 0 {
		return payment.ErrNotFound
	}
	return nil
}
