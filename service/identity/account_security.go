package identity

import (
	"context"

	"github.com/paymentsd/paymentsd/internal/auth"
	"github.com/paymentsd/paymentsd/payment"
)

// accountEvent records an entry of the user's security log, in ctx's
// transaction when it has one; the client is ctx's origin unless c names
// one.
func (svc Service) accountEvent(ctx context.Context, userID, sessionID, action string, c Client, details map[string]any) error {
	now := svc.Now()
	o := payment.OriginOf(ctx)
	if c.IP == "" {
		c = Client{IP: o.IP, UserAgent: o.UserAgent}
	}
	return svc.Store.Identity().RecordAccountEvent(ctx, payment.AccountEvent{ID: payment.NewID(payment.PrefixAccountEvent, now), UserID: userID,
		OccurredAt: now, Action: action, SessionID: sessionID, IP: c.IP, UserAgent: truncate(c.UserAgent, 512), Details: details})
}

// AccountEvents is the user's security log, newest first (the last 100).
func (svc Service) AccountEvents(ctx context.Context, userID string) ([]payment.AccountEvent, error) {
	return svc.Store.Identity().AccountEvents(ctx, userID, 100)
}

// Reauthenticate is sudo mode's door: the signed-in user proves who they
// are again (the account's password, or a passkey's fresh answer to a
// sign-in challenge) and the session counts as freshly signed in. It is
// recorded in the account's security log.
func (svc Service) Reauthenticate(ctx context.Context, u payment.User, us payment.UserSession, proof Proof) error {
	_, hash, err := svc.Store.Identity().UserByID(ctx, u.ID)
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
	return svc.Store.InTx(ctx, func(ctx context.Context) error {
		if err := svc.Store.Identity().SessionAuthenticated(ctx, us.ID, svc.Now()); err != nil {
			return err
		}
		return svc.accountEvent(ctx, u.ID, us.ID, payment.AccountReauthenticated, Client{}, map[string]any{"method": method})
	})
}
