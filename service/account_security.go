package service

import (
	"context"
	"fmt"

	"github.com/paymentsd/paymentsd/internal/auth"
	"github.com/paymentsd/paymentsd/internal/observability"
	"github.com/paymentsd/paymentsd/payment"
)

// audited makes a change and its audit entry in one database transaction:
// both are committed, or neither is. change runs with the transaction's
// context (store.InTx): the store methods it calls with that context write
// in the transaction.
func (svc Identity) audited(ctx context.Context, projectID string, isLive bool, action, targetType, targetID string,
	details map[string]any, change func(ctx context.Context) error) error {
	a := svc.Access().auditEntry(ctx, projectID, isLive, action, targetType, targetID, details)
	return svc.store.InTx(ctx, func(ctx context.Context) error {
		if err := change(ctx); err != nil {
			return err
		}
		return svc.recordAudit(ctx, a)
	})
}

// auditIn records a change's audit entry in ctx's transaction
// (store.InTx), for a change whose entry depends on what it did: a
// failure is returned, so that the transaction, and the change, roll back.
func (svc Identity) auditIn(ctx context.Context, projectID string, isLive bool, action, targetType, targetID string, details map[string]any) error {
	return svc.recordAudit(ctx, svc.Access().auditEntry(ctx, projectID, isLive, action, targetType, targetID, details))
}

func (svc Identity) recordAudit(ctx context.Context, a payment.AuditEntry) error {
	if err := svc.store.Access().RecordAudit(ctx, a); err != nil {
		observability.AuditFailures.Inc()
		return fmt.Errorf("audit log: %s not recorded, so not made: %w", a.Action, err)
	}
	return nil
}

// accountEvent records an entry of the user's security log, in ctx's
// transaction when it has one; the client is ctx's origin unless c names
// one.
func (svc Identity) accountEvent(ctx context.Context, userID, sessionID, action string, c Client, details map[string]any) error {
	now := svc.now()
	o := payment.OriginOf(ctx)
	if c.IP == "" {
		c = Client{IP: o.IP, UserAgent: o.UserAgent}
	}
	return svc.store.Identity().RecordAccountEvent(ctx, payment.AccountEvent{ID: payment.NewID(payment.PrefixAccountEvent, now), UserID: userID,
		OccurredAt: now, Action: action, SessionID: sessionID, IP: c.IP, UserAgent: truncate(c.UserAgent, 512), Details: details})
}

// AccountEvents is the user's security log, newest first (the last 100).
func (svc Identity) AccountEvents(ctx context.Context, userID string) ([]payment.AccountEvent, error) {
	return svc.store.Identity().AccountEvents(ctx, userID, 100)
}

// Reauthenticate is sudo mode's door: the signed-in user proves who they
// are again (the account's password, or a passkey's fresh answer to a
// sign-in challenge) and the session counts as freshly signed in. It is
// recorded in the account's security log.
func (svc Identity) Reauthenticate(ctx context.Context, u payment.User, us payment.UserSession, proof Proof) error {
	_, hash, err := svc.store.Identity().UserByID(ctx, u.ID)
	if err != nil {
		return err
	}
	method := "password"
	var probs payment.Problems
	switch {
	case proof.CurrentPassword != nil:
		if hash == "" {
			probs.Add("password", "this account has no password: answer with a passkey (challengeId and credential)")
		} else if !auth.CheckPassword(hash, *proof.CurrentPassword) {
			probs.Add("password", "is not the account's password")
		}
	case proof.ChallengeID != "" && proof.Credential != nil:
		method = "passkey"
		if err := svc.checkPasskeyOf(ctx, u, proof.ChallengeID, proof.Credential); err != nil {
			return err
		}
	default:
		probs.Add("password", "is required, or a passkey's answer to a sign-in challenge (challengeId and credential)")
	}
	if err := probs.Err(); err != nil {
		return err
	}
	return svc.store.InTx(ctx, func(ctx context.Context) error {
		if err := svc.store.Identity().SessionAuthenticated(ctx, us.ID, svc.now()); err != nil {
			return err
		}
		return svc.accountEvent(ctx, u.ID, us.ID, payment.AccountReauthenticated, Client{}, map[string]any{"method": method})
	})
}
