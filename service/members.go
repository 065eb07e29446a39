package service

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/internal/auth"
	"github.com/paymentsd/paymentsd/internal/keys"
	"github.com/paymentsd/paymentsd/payment"
)

// InvitationLifetime is how long an invitation can be accepted.
const InvitationLifetime = 7 * 24 * time.Hour

// MaxSessionLifetime bounds a project's checkout session lifetime.
const MaxSessionLifetime = 7 * 24 * time.Hour

// MaxLatePaymentWindow bounds a project's late-payment window.
const MaxLatePaymentWindow = 30 * 24 * time.Hour

// memberOnly refuses API keys: members and their roles are the members'.
func memberOnly(p payment.Principal, projectID string) error {
	if err := owns(p, projectID); err != nil {
		return err
	}
	if p.UserID == "" {
		return &payment.Error{Kind: payment.KindForbidden, Message: "API keys do not see or manage members: sign in"}
	}
	return nil
}

// Members lists the project's members (any member may read them).
func (svc Access) Members(ctx context.Context, p payment.Principal, projectID string) ([]payment.Member, error) {
	if err := memberOnly(p, projectID); err != nil {
		return nil, err
	}
	return svc.store.Access().ListMembers(ctx, projectID)
}

// Invite makes an invitation to the project for an email with a role; its
// token is returned this once, for the owner to pass on.
func (svc Access) Invite(ctx context.Context, p payment.Principal, projectID, email, role string) (payment.Invitation, string, error) {
	if err := canManageKeys(p, projectID); err != nil {
		return payment.Invitation{}, "", err
	}
	var probs payment.Problems
	email = strings.TrimSpace(email)
	if _, err := checkCredentials(email, "a valid placeholder"); err != nil {
		probs.Add("email", "must be an email address")
	}
	if !payment.ValidRole(role) {
		probs.Add("role", "must be one of owner, developer, viewer")
	}
	if err := probs.Err(); err != nil {
		return payment.Invitation{}, "", err
	}
	now := svc.now()
	token := auth.NewToken()
	inv := payment.Invitation{ID: payment.NewID(payment.PrefixInvitation, now), ProjectID: projectID, Email: email,
		Role: payment.Role(role), InvitedBy: p.UserID, CreatedAt: now, ExpiresAt: now.Add(InvitationLifetime)}
	err := svc.audited(ctx, projectID, p.IsLive, payment.AuditMemberInvited, "invitation", inv.ID, map[string]any{"email": email, "role": role},
		func(ctx context.Context) error {
			return svc.store.Access().CreateInvitation(ctx, inv, payment.HashSecret(token))
		})
	if err != nil {
		return inv, "", err
	}
	return inv, token, nil
}

// Invitations lists the project's pending invitations (owners).
func (svc Access) Invitations(ctx context.Context, p payment.Principal, projectID string) ([]payment.Invitation, error) {
	if err := canManageKeys(p, projectID); err != nil {
		return nil, err
	}
	return svc.store.Access().ListInvitations(ctx, projectID, svc.now())
}

// RevokeInvitation revokes a pending invitation of the project (owners):
// its token no longer joins anyone.
func (svc Access) RevokeInvitation(ctx context.Context, p payment.Principal, projectID, id string) (payment.Invitation, error) {
	if err := canManageKeys(p, projectID); err != nil {
		return payment.Invitation{}, err
	}
	if !payment.ValidID(payment.PrefixInvitation, id) {
		return payment.Invitation{}, payment.NotFound("Invitation")
	}
	var inv payment.Invitation
	err := svc.audited(ctx, projectID, p.IsLive, payment.AuditInvitationRevoked, "invitation", id, map[string]any{"reason": "revoked"},
		func(ctx context.Context) (err error) {
			inv, err = svc.store.Access().RevokeInvitation(ctx, projectID, id, svc.now())
			return err
		})
	if errors.Is(err, payment.ErrNotFound) {
		return inv, payment.NotFound("Invitation")
	}
	return inv, err
}

// AcceptInvitation makes the signed-in user a member with the
// invitation's role. An unknown, used or expired token, or one made out
// to another email, is not found.
func (svc Access) AcceptInvitation(ctx context.Context, u payment.User, token string) (payment.Invitation, error) {
	if len(token) != 64 {
		return payment.Invitation{}, payment.NotFound("Invitation")
	}
	var inv payment.Invitation
	err := svc.store.InTx(ctx, func(ctx context.Context) (err error) {
		if inv, err = svc.store.Access().AcceptInvitation(ctx, payment.HashSecret(token), u, svc.now()); err != nil {
			return err
		}
		o := payment.OriginOf(ctx)
		o.ActorKind, o.ActorID = payment.AuditActorUser, u.ID
		a := svc.auditEntry(payment.WithOrigin(ctx, o), inv.ProjectID, false, payment.AuditMemberJoined, "member", u.ID,
			map[string]any{"role": string(inv.Role), "invitationId": inv.ID})
		return svc.store.Access().RecordAudit(ctx, a)
	})
	if errors.Is(err, payment.ErrNotFound) {
		return inv, payment.NotFound("Invitation")
	}
	return inv, err
}

// ChangeMember sets a member's role, or (role empty) removes the member.
// Owners may do either; a member may remove themselves. A project keeps
// one owner at least.
func (svc Access) ChangeMember(ctx context.Context, p payment.Principal, projectID, userID, role string) error {
	if err := memberOnly(p, projectID); err != nil {
		return err
	}
	leaving := role == "" && userID == p.UserID
	if !leaving && !p.CanManageKeys() {
		return payment.ErrForbidden
	}
	if role != "" && !payment.ValidRole(role) {
		var probs payment.Problems
		probs.Add("role", "must be one of owner, developer, viewer")
		return probs.Err()
	}
	if !payment.ValidID(payment.PrefixUser, userID) {
		return payment.NotFound("Member")
	}
	action, details := payment.AuditMemberRemoved, map[string]any(nil)
	if role != "" {
		action, details = payment.AuditMemberRoleChanged, map[string]any{"role": role}
	}
	return svc.audited(ctx, projectID, p.IsLive, action, "member", userID, details, func(ctx context.Context) error {
		revoked, err := svc.store.Access().ChangeMember(ctx, projectID, userID, payment.Role(role), svc.now())
		if err != nil {
			return err
		}
		// The invitations the member sent, and those addressed to them,
		// end with the membership.
		for _, id := range revoked {
			a := svc.auditEntry(ctx, projectID, p.IsLive, payment.AuditInvitationRevoked, "invitation", id,
				map[string]any{"reason": "member_removed", "memberId": userID})
			if err := svc.store.Access().RecordAudit(ctx, a); err != nil {
				return err
			}
		}
		return nil
	})
}

// ProjectInput is a change of a project's name and settings; nil fields
// stay as they are.
type ProjectInput struct {
	Name                         *string
	CompleteOn                   *string
	UnderpaymentTolerancePercent *string
	LatePaymentWindowSeconds     *int64
	// SessionLifetimeSeconds: 0 is the deployment's.
	SessionLifetimeSeconds *int64
}

// UpdateProject changes a project's name and settings (owners).
func (svc Checkout) UpdateProject(ctx context.Context, p payment.Principal, projectID string, in ProjectInput) (payment.Project, error) {
	if err := canManageKeys(p, projectID); err != nil {
		return payment.Project{}, err
	}
	proj, err := svc.store.Checkout().GetProject(ctx, projectID)
	if err != nil {
		return proj, err
	}
	var probs payment.Problems
	if in.Name != nil {
		if *in.Name == "" || len(*in.Name) > payment.MaxTitleLength {
			probs.Addf("name", "must be 1 to %d characters", payment.MaxTitleLength)
		}
		proj.Name = *in.Name
	}
	if in.CompleteOn != nil {
		switch payment.TransactionStatus(*in.CompleteOn) {
		case payment.TxConfirmed, payment.TxFinalized:
			proj.CompleteOn = payment.TransactionStatus(*in.CompleteOn)
		default:
			probs.Add("completeOn", "must be confirmed or finalized")
		}
	}
	if in.UnderpaymentTolerancePercent != nil {
		d, err := decimal.NewFromString(*in.UnderpaymentTolerancePercent)
		if err != nil || d.IsNegative() || d.GreaterThan(decimal.NewFromInt(50)) || d.Exponent() < -2 {
			probs.Add("underpaymentTolerancePercent", "must be a decimal from 0 to 50 with at most 2 decimals")
		} else {
			proj.UnderpaymentTolerancePercent = d
		}
	}
	if in.LatePaymentWindowSeconds != nil {
		w := time.Duration(*in.LatePaymentWindowSeconds) * time.Second
		if *in.LatePaymentWindowSeconds < 0 || w > MaxLatePaymentWindow {
			probs.Addf("latePaymentWindowSeconds", "must be from 0 to %d", int64(MaxLatePaymentWindow/time.Second))
		} else {
			proj.LatePaymentWindow = w
		}
	}
	if in.SessionLifetimeSeconds != nil {
		secs := *in.SessionLifetimeSeconds
		if secs != 0 && (secs < 60 || secs > int64(MaxSessionLifetime/time.Second)) {
			probs.Addf("sessionLifetimeSeconds", "must be 0 (the deployment's) or from 60 to %d", int64(MaxSessionLifetime/time.Second))
		} else {
			proj.SessionLifetime = time.Duration(secs) * time.Second
		}
	}
	if err := probs.Err(); err != nil {
		return proj, err
	}
	proj.UpdatedAt = svc.now()
	err = svc.audited(ctx, projectID, p.IsLive, payment.AuditProjectUpdated, "project", projectID, nil,
		func(ctx context.Context) error { return svc.store.Access().UpdateProject(ctx, proj) })
	return proj, err
}

// SetDepositKeyAs sets the deposit key of the principal's environment
// (owners) and returns it as the principal reads it.
func (svc Checkout) SetDepositKeyAs(ctx context.Context, p payment.Principal, projectID, xpub string) (DepositKeyInfo, error) {
	if err := canManageKeys(p, projectID); err != nil {
		return DepositKeyInfo{}, err
	}
	if err := svc.SetDepositKey(ctx, projectID, p.IsLive, xpub); err != nil {
		return DepositKeyInfo{}, err
	}
	return svc.DepositKey(ctx, p, projectID)
}

// DepositKeyInfo is an environment's deposit key as a principal reads it.
// The key itself derives every address the project has handed out or
// will, and, an account key of the merchant's wallet, every other
// address of that account: it is shown to an owner signed in to the
// dashboard only (payment.Principal.CanManageKeys), who may replace it
// anyway; everyone else (other members, API keys, OAuth applications)
// reads its fingerprint and first address.
type DepositKeyInfo struct {
	// Xpub is the key as it was set; "" when none is set or the principal
	// may not read it.
	Xpub string
	// Fingerprint is the key's identity (keys.Key.Identity); "" when
	// none is set.
	Fingerprint string
	// FirstAddress is <key>/0/0, for a wallet to confirm the key; "" when
	// none is set.
	FirstAddress string
	// Issued is how many addresses the environment has handed out.
	Issued int64
}

// DepositKey returns the principal's environment's deposit key as the
// principal may read it (DepositKeyInfo).
func (svc Checkout) DepositKey(ctx context.Context, p payment.Principal, projectID string) (DepositKeyInfo, error) {
	if err := owns(p, projectID); err != nil {
		return DepositKeyInfo{}, err
	}
	xpub, issued, err := svc.store.Chains().DepositKey(ctx, projectID, p.IsLive)
	if err != nil || xpub == "" {
		return DepositKeyInfo{Issued: issued}, err
	}
	key, err := keys.ParseKey(xpub)
	if err != nil {
		return DepositKeyInfo{}, fmt.Errorf("deposit key of %s: %w", projectID, err)
	}
	first, err := key.DeriveAddress(0)
	if err != nil {
		return DepositKeyInfo{}, err
	}
	info := DepositKeyInfo{Fingerprint: key.Identity(), FirstAddress: first.Hex(), Issued: issued}
	if p.CanManageKeys() {
		info.Xpub = xpub
	}
	return info, nil
}
