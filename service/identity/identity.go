package identity

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/internal/auth"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service/access"
)

// Dashboard sessions' lifetimes: a session ends after SessionIdle without
// a request, and SessionAbsolute after sign-in whatever happens.
const (
	SessionIdle     = 12 * time.Hour
	SessionAbsolute = 7 * 24 * time.Hour
)

// ErrBadLogin is every failed sign-in: it never says which part was wrong.
var ErrBadLogin = &payment.Error{Kind: payment.KindUnauthenticated, Message: "Email or password is incorrect"}

// SignedIn is a new dashboard session: its token goes to the cookie and
// nowhere else.
type SignedIn struct {
	User    payment.User
	Session payment.UserSession
	Token   string
}

// Client is where a sign-in comes from, kept with its session.
type Client struct {
	UserAgent string
	IP        string
}

// SignupWithoutPassword makes an account with no password and signs it
// in: its passkeys will sign it in (it adds one next).
func (svc Service) SignupWithoutPassword(ctx context.Context, email string, c Client) (SignedIn, error) {
	email, err := access.CheckCredentials(email, "a valid placeholder")
	if err != nil {
		return SignedIn{}, err
	}
	now := svc.Now()
	u := payment.User{ID: payment.NewID(payment.PrefixUser, now), Email: email, CreatedAt: now}
	if err := svc.Store.Identity().CreateUser(ctx, u, ""); err != nil {
		if errors.Is(err, payment.ErrConflict) {
			return SignedIn{}, payment.Conflict("An account with this email exists")
		}
		return SignedIn{}, err
	}
	return svc.startSession(ctx, u, c)
}

// CreateUser makes an account with a password (`paymentsd admin
// create-user`, and sign-up).
func (svc Service) CreateUser(ctx context.Context, email, password string) (payment.User, error) {
	email, err := access.CheckCredentials(email, password)
	if err != nil {
		return payment.User{}, err
	}
	hash, err := auth.HashPassword(password)
	if err != nil {
		return payment.User{}, err
	}
	now := svc.Now()
	u := payment.User{ID: payment.NewID(payment.PrefixUser, now), Email: email, HasPassword: true, CreatedAt: now}
	if err := svc.Store.Identity().CreateUser(ctx, u, hash); err != nil {
		if errors.Is(err, payment.ErrConflict) {
			return u, payment.Conflict("An account with this email exists")
		}
		return u, err
	}
	return u, nil
}

// Signup makes an account and signs it in.
func (svc Service) Signup(ctx context.Context, email, password string, c Client) (SignedIn, error) {
	u, err := svc.CreateUser(ctx, email, password)
	if err != nil {
		return SignedIn{}, err
	}
	return svc.startSession(ctx, u, c)
}

// Login signs a user in with email and password. Every failure is
// ErrBadLogin, in about the same time.
func (svc Service) Login(ctx context.Context, email, password string, c Client) (SignedIn, error) {
	u, hash, err := svc.Store.Identity().UserByEmail(ctx, strings.TrimSpace(email))
	if err != nil && !errors.Is(err, payment.ErrNotFound) {
		return SignedIn{}, err
	}
	if !auth.CheckPassword(hash, password) || err != nil {
		return SignedIn{}, ErrBadLogin
	}
	return svc.startSession(ctx, u, c)
}

func (svc Service) startSession(ctx context.Context, u payment.User, c Client) (SignedIn, error) {
	now := svc.Now()
	token := payment.UserSessionTokenPrefix + auth.NewToken()
	us := payment.UserSession{ID: payment.NewID(payment.PrefixUserSession, now), UserID: u.ID, UserAgent: truncate(c.UserAgent, 512),
		IP: c.IP, CreatedAt: now, LastSeenAt: now, ExpiresAt: now.Add(SessionAbsolute)}
	if err := svc.Store.Identity().CreateUserSession(ctx, us, payment.HashSecret(token)); err != nil {
		return SignedIn{}, err
	}
	return SignedIn{User: u, Session: us, Token: token}, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}

// SessionOf resolves a session cookie's token to its live session and
// user; anything else is unauthenticated.
func (svc Service) SessionOf(ctx context.Context, token string) (payment.User, payment.UserSession, error) {
	// svc_st_ and 64 hex digits; a session started before the prefix has
	// the digits alone.
	if len(strings.TrimPrefix(token, payment.UserSessionTokenPrefix)) != 64 {
		return payment.User{}, payment.UserSession{}, payment.ErrUnauthorized
	}
	us, err := svc.Store.Identity().UserSessionByToken(ctx, payment.HashSecret(token), SessionIdle, svc.Now())
	if errors.Is(err, payment.ErrNotFound) {
		return payment.User{}, us, payment.ErrUnauthorized
	} else if err != nil {
		return payment.User{}, us, err
	}
	u, _, err := svc.Store.Identity().UserByID(ctx, us.UserID)
	return u, us, err
}

// Logout ends one session of the user.
func (svc Service) Logout(ctx context.Context, userID, sessionID string) error {
	_, err := svc.Store.Identity().RevokeUserSessions(ctx, userID, sessionID, "", svc.Now())
	return err
}

// UserSessions lists the user's live sessions.
func (svc Service) UserSessions(ctx context.Context, userID string) ([]payment.UserSession, error) {
	return svc.Store.Identity().ListUserSessions(ctx, userID, SessionIdle, svc.Now())
}

// RevokeUserSession ends one of the user's sessions.
func (svc Service) RevokeUserSession(ctx context.Context, userID, id string) error {
	if !payment.ValidID(payment.PrefixUserSession, id) {
		return payment.NotFound("Session")
	}
	n, err := svc.Store.Identity().RevokeUserSessions(ctx, userID, id, "", svc.Now())
	if err == nil && n == 0 {
		return payment.NotFound("Session")
	}
	return err
}

// SignedOut is what a sign-out everywhere ended: the other sessions, and
// the applications' grants.
type SignedOut struct {
	Sessions    int64
	OAuthGrants int
}

// RevokeOtherSessions signs the user out everywhere but keep: it ends
// every other session, and every application's access on the user's
// consent (grants, their tokens, codes not yet exchanged), in one
// transaction.
func (svc Service) RevokeOtherSessions(ctx context.Context, userID, keep string) (SignedOut, error) {
	var out SignedOut
	err := svc.Store.InTx(ctx, func(ctx context.Context) (err error) {
		if out.Sessions, err = svc.Store.Identity().RevokeUserSessions(ctx, userID, "", keep, svc.Now()); err != nil {
			return err
		}
		out.OAuthGrants, err = svc.access().EndUserOAuthGrants(ctx, userID, access.GrantsEndSignedOutEverywhere)
		return err
	})
	return out, err
}

// Proof is what a password change or a re-authentication is made with:
// the current password, or a fresh passkey assertion (a login
// challenge's answer) of the same user; a password change takes the
// passkey's answer only for an account with no password.
type Proof struct {
	CurrentPassword *string
	ChallengeID     string
	Credential      []byte
}

// ChangePassword sets a new password after checking the proof, ends
// every session of the user and every application's access on the user's
// consent, and signs this one in again (a new token).
func (svc Service) ChangePassword(ctx context.Context, userID string, proof Proof, next string, c Client) (SignedIn, error) {
	u, hash, err := svc.Store.Identity().UserByID(ctx, userID)
	if err != nil {
		return SignedIn{}, err
	}
	var probs payment.Problems
	if msg := auth.CheckPasswordRules(next); msg != "" {
		probs.Add("newPassword", msg)
	}
	switch {
	case proof.CurrentPassword != nil:
		if !auth.CheckPassword(hash, *proof.CurrentPassword) {
			probs.Add("currentPassword", "is not the account's password")
		}
	case hash != "":
		// An account with a password changes it with the password: a
		// passkey's answer proves the device, not the password's holder.
		probs.Add("currentPassword", "is required: this account has a password")
	case proof.ChallengeID != "" && proof.Credential != nil:
		if probs.Err() == nil {
			if err := svc.checkPasskeyOf(ctx, u, proof.ChallengeID, proof.Credential); err != nil {
				return SignedIn{}, err
			}
		}
	default:
		probs.Add("currentPassword", "is required, or a passkey's answer to a sign-in challenge (challengeId and credential)")
	}
	if err := probs.Err(); err != nil {
		return SignedIn{}, err
	}
	newHash, err := auth.HashPassword(next)
	if err != nil {
		return SignedIn{}, err
	}
	if err := svc.Store.InTx(ctx, func(ctx context.Context) error {
		if err := svc.Store.Identity().SetPassword(ctx, userID, newHash, "", svc.Now()); err != nil {
			return err
		}
		grants, err := svc.access().EndUserOAuthGrants(ctx, userID, access.GrantsEndPasswordChanged)
		if err != nil {
			return err
		}
		return svc.accountEvent(ctx, userID, "", payment.AccountPasswordChanged, c, map[string]any{"oauthGrantsRevoked": grants})
	}); err != nil {
		return SignedIn{}, err
	}
	u.HasPassword = true
	return svc.startSession(ctx, u, c)
}
