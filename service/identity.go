package service

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/internal/auth"
	"github.com/paymentsd/paymentsd/payment"
)

// Dashboard sessions' lifetimes: a session ends after SessionIdle without
// a request, and SessionAbsolute after sign-in whatever happens.
const (
	SessionIdle     = 12 * time.Hour
	SessionAbsolute = 7 * 24 * time.Hour
)

// MaxKeyGrace bounds a rolled API key's grace period.
const MaxKeyGrace = 30 * 24 * time.Hour

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

func checkCredentials(email, password string) (string, error) {
	var probs payment.Problems
	email = strings.TrimSpace(email)
	if a, err := mail.ParseAddress(email); err != nil || a.Address != email || len(email) > 254 {
		probs.Add("email", "must be an email address")
	}
	if msg := auth.CheckPasswordRules(password); msg != "" {
		probs.Add("password", msg)
	}
	return email, probs.Err()
}

// SignupWithoutPassword makes an account with no password and signs it
// in: its passkeys will sign it in (it adds one next).
func (svc Identity) SignupWithoutPassword(ctx context.Context, email string, c Client) (SignedIn, error) {
	email, err := checkCredentials(email, "a valid placeholder")
	if err != nil {
		return SignedIn{}, err
	}
	now := svc.now()
	u := payment.User{ID: payment.NewID(payment.PrefixUser, now), Email: email, CreatedAt: now}
	if err := svc.store.Identity().CreateUser(ctx, u, ""); err != nil {
		if errors.Is(err, payment.ErrConflict) {
			return SignedIn{}, payment.Conflict("An account with this email exists")
		}
		return SignedIn{}, err
	}
	return svc.startSession(ctx, u, c)
}

// CreateUser makes an account with a password (`paymentsd admin
// create-user`, and sign-up).
func (svc Identity) CreateUser(ctx context.Context, email, password string) (payment.User, error) {
	email, err := checkCredentials(email, password)
	if err != nil {
		return payment.User{}, err
	}
	hash, err := auth.HashPassword(password)
	if err != nil {
		return payment.User{}, err
	}
	now := svc.now()
	u := payment.User{ID: payment.NewID(payment.PrefixUser, now), Email: email, HasPassword: true, CreatedAt: now}
	if err := svc.store.Identity().CreateUser(ctx, u, hash); err != nil {
		if errors.Is(err, payment.ErrConflict) {
			return u, payment.Conflict("An account with this email exists")
		}
		return u, err
	}
	return u, nil
}

// Signup makes an account and signs it in.
func (svc Identity) Signup(ctx context.Context, email, password string, c Client) (SignedIn, error) {
	u, err := svc.CreateUser(ctx, email, password)
	if err != nil {
		return SignedIn{}, err
	}
	return svc.startSession(ctx, u, c)
}

// Login signs a user in with email and password. Every failure is
// ErrBadLogin, in about the same time.
func (svc Identity) Login(ctx context.Context, email, password string, c Client) (SignedIn, error) {
	u, hash, err := svc.store.Identity().UserByEmail(ctx, strings.TrimSpace(email))
	if err != nil && !errors.Is(err, payment.ErrNotFound) {
		return SignedIn{}, err
	}
	if !auth.CheckPassword(hash, password) || err != nil {
		return SignedIn{}, ErrBadLogin
	}
	return svc.startSession(ctx, u, c)
}

func (svc Identity) startSession(ctx context.Context, u payment.User, c Client) (SignedIn, error) {
	now := svc.now()
	token := payment.UserSessionTokenPrefix + auth.NewToken()
	us := payment.UserSession{ID: payment.NewID(payment.PrefixUserSession, now), UserID: u.ID, UserAgent: truncate(c.UserAgent, 512),
		IP: c.IP, CreatedAt: now, LastSeenAt: now, ExpiresAt: now.Add(SessionAbsolute)}
	if err := svc.store.Identity().CreateUserSession(ctx, us, payment.HashSecret(token)); err != nil {
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
func (svc Identity) SessionOf(ctx context.Context, token string) (payment.User, payment.UserSession, error) {
	// svc_st_ and 64 hex digits; a session started before the prefix has
	// the digits alone.
	if len(strings.TrimPrefix(token, payment.UserSessionTokenPrefix)) != 64 {
		return payment.User{}, payment.UserSession{}, payment.ErrUnauthorized
	}
	us, err := svc.store.Identity().UserSessionByToken(ctx, payment.HashSecret(token), SessionIdle, svc.now())
	if errors.Is(err, payment.ErrNotFound) {
		return payment.User{}, us, payment.ErrUnauthorized
	} else if err != nil {
		return payment.User{}, us, err
	}
	u, _, err := svc.store.Identity().UserByID(ctx, us.UserID)
	return u, us, err
}

// Logout ends one session of the user.
func (svc Identity) Logout(ctx context.Context, userID, sessionID string) error {
	_, err := svc.store.Identity().RevokeUserSessions(ctx, userID, sessionID, "", svc.now())
	return err
}

// UserSessions lists the user's live sessions.
func (svc Identity) UserSessions(ctx context.Context, userID string) ([]payment.UserSession, error) {
	return svc.store.Identity().ListUserSessions(ctx, userID, SessionIdle, svc.now())
}

// RevokeUserSession ends one of the user's sessions.
func (svc Identity) RevokeUserSession(ctx context.Context, userID, id string) error {
	if !payment.ValidID(payment.PrefixUserSession, id) {
		return payment.NotFound("Session")
	}
	n, err := svc.store.Identity().RevokeUserSessions(ctx, userID, id, "", svc.now())
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
func (svc Identity) RevokeOtherSessions(ctx context.Context, userID, keep string) (SignedOut, error) {
	var out SignedOut
	err := svc.store.InTx(ctx, func(ctx context.Context) (err error) {
		if out.Sessions, err = svc.store.Identity().RevokeUserSessions(ctx, userID, "", keep, svc.now()); err != nil {
			return err
		}
		out.OAuthGrants, err = svc.Access().endUserOAuthGrants(ctx, userID, GrantsEndSignedOutEverywhere)
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
func (svc Identity) ChangePassword(ctx context.Context, userID string, proof Proof, next string, c Client) (SignedIn, error) {
	u, hash, err := svc.store.Identity().UserByID(ctx, userID)
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
	if err := svc.store.InTx(ctx, func(ctx context.Context) error {
		if err := svc.store.Identity().SetPassword(ctx, userID, newHash, "", svc.now()); err != nil {
			return err
		}
		grants, err := svc.Access().endUserOAuthGrants(ctx, userID, GrantsEndPasswordChanged)
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

// MemberPrincipal is the principal of a signed-in user acting in a
// project environment: a project the user is not a member of does not
// exist for them.
func (svc Access) MemberPrincipal(ctx context.Context, u payment.User, us payment.UserSession, projectID string, isLive bool) (payment.Principal, error) {
	role, err := svc.store.Access().MemberRole(ctx, projectID, u.ID)
	if errors.Is(err, payment.ErrNotFound) {
		return payment.Principal{}, payment.NotFound("Project")
	} else if err != nil {
		return payment.Principal{}, err
	}
	return payment.Principal{ProjectID: projectID, IsLive: isLive, UserID: u.ID, Role: role, SessionID: us.ID}, nil
}

// MemberSession reads a checkout session by its ID for a signed-in user
// who is a member of its project (the second shape's session lookup);
// to anyone else it does not exist.
func (svc Access) MemberSession(ctx context.Context, u payment.User, us payment.UserSession, id string) (SessionView, error) {
	if !payment.ValidID(payment.PrefixSession, id) {
		return SessionView{}, payment.NotFound("Checkout session")
	}
	projectID, isLive, err := svc.store.Checkout().SessionOwner(ctx, id)
	if errors.Is(err, payment.ErrNotFound) {
		return SessionView{}, payment.NotFound("Checkout session")
	} else if err != nil {
		return SessionView{}, err
	}
	p, err := svc.MemberPrincipal(ctx, u, us, projectID, isLive)
	if err != nil {
		return SessionView{}, payment.NotFound("Checkout session")
	}
	return svc.Checkout().GetSession(ctx, p, projectID, id)
}

// AddOwner makes a user an owner of a project (the admin command and the
// dev stack's seed).
func (svc Access) AddOwner(ctx context.Context, projectID, userID string) error {
	if _, err := svc.store.Checkout().GetProject(ctx, projectID); err != nil {
		return err
	}
	return svc.store.Access().AddMember(ctx, projectID, userID, payment.RoleOwner, svc.now())
}

// Projects lists the user's projects with their roles.
func (svc Checkout) Projects(ctx context.Context, userID string) ([]payment.Membership, error) {
	return svc.store.Access().ProjectsOfUser(ctx, userID)
}

// CreateProjectFor creates a project whose owner is the user; it has no
// API key until its owner creates one.
func (svc Checkout) CreateProjectFor(ctx context.Context, userID, name string) (payment.Project, error) {
	var probs payment.Problems
	if name == "" || len(name) > payment.MaxTitleLength {
		probs.Addf("name", "must be 1 to %d characters", payment.MaxTitleLength)
	}
	if err := probs.Err(); err != nil {
		return payment.Project{}, err
	}
	now := svc.now()
	p := payment.Project{ID: payment.NewID(payment.PrefixProject, now), Name: name, CompleteOn: payment.TxFinalized,
		LatePaymentWindow: 24 * time.Hour, CreatedAt: now, UpdatedAt: now}
	if err := svc.store.Checkout().CreateProjectWithOwner(ctx, p, nil, userID); err != nil {
		return p, fmt.Errorf("create project: %w", err)
	}
	return p, nil
}

func canManageKeys(p payment.Principal, projectID string) error {
	if err := owns(p, projectID); err != nil {
		return err
	}
	if !p.CanManageKeys() {
		return payment.ErrForbidden
	}
	return nil
}

// APIKeys lists the working API keys of the principal's environment.
func (svc Access) APIKeys(ctx context.Context, p payment.Principal, projectID string) ([]payment.APIKeyInfo, error) {
	if err := canManageKeys(p, projectID); err != nil {
		return nil, err
	}
	return svc.store.Access().ListAPIKeys(ctx, projectID, p.IsLive, svc.now())
}

// CreateAPIKey makes an API key of the principal's environment; its
// secret is returned this once.
func (svc Access) CreateAPIKey(ctx context.Context, p payment.Principal, projectID string) (payment.APIKeyInfo, string, error) {
	if err := canManageKeys(p, projectID); err != nil {
		return payment.APIKeyInfo{}, "", err
	}
	now := svc.now()
	k, secret := newAPIKey(p.IsLive, now)
	k.ProjectID = projectID
	if err := svc.audited(ctx, projectID, p.IsLive, payment.AuditAPIKeyCreated, "api_key", k.ID, map[string]any{"hint": k.Hint},
		func(ctx context.Context) error { return svc.store.Access().InsertAPIKey(ctx, k) }); err != nil {
		return payment.APIKeyInfo{}, "", err
	}
	return payment.APIKeyInfo{ID: k.ID, IsLive: k.IsLive, Hint: k.Hint, CreatedAt: now}, secret, nil
}

// RevokeAPIKey ends a key at once (within AuthCacheTTL for API
// processes that verified it just before).
func (svc Access) RevokeAPIKey(ctx context.Context, p payment.Principal, projectID, keyID string) error {
	if err := canManageKeys(p, projectID); err != nil {
		return err
	}
	if !payment.ValidID(payment.PrefixAPIKey, keyID) {
		return payment.NotFound("API key")
	}
	if err := svc.audited(ctx, projectID, p.IsLive, payment.AuditAPIKeyRevoked, "api_key", keyID, nil, func(ctx context.Context) error {
		return svc.store.Access().EndAPIKey(ctx, projectID, p.IsLive, keyID, nil, svc.now())
	}); err != nil {
		if errors.Is(err, payment.ErrNotFound) {
			return payment.NotFound("API key")
		}
		return err
	}
	svc.Checkout().forgetKey(keyID)
	return nil
}

// RollAPIKey makes a new key and keeps the old one working for grace
// (0: it ends now), as a deploy switching keys needs.
func (svc Access) RollAPIKey(ctx context.Context, p payment.Principal, projectID, keyID string, grace time.Duration) (payment.APIKeyInfo, string, error) {
	if err := canManageKeys(p, projectID); err != nil {
		return payment.APIKeyInfo{}, "", err
	}
	if grace < 0 || grace > MaxKeyGrace {
		var probs payment.Problems
		probs.Addf("gracePeriodSeconds", "must be from 0 to %d", int(MaxKeyGrace/time.Second))
		return payment.APIKeyInfo{}, "", probs.Err()
	}
	if !payment.ValidID(payment.PrefixAPIKey, keyID) {
		return payment.APIKeyInfo{}, "", payment.NotFound("API key")
	}
	now := svc.now()
	end := now.Add(grace)
	k, secret := newAPIKey(p.IsLive, now)
	k.ProjectID = projectID
	// The old key's end, the new key and the entry: one transaction.
	if err := svc.audited(ctx, projectID, p.IsLive, payment.AuditAPIKeyRolled, "api_key", keyID,
		map[string]any{"newKeyId": k.ID, "oldKeyWorksUntil": end.Format(time.RFC3339)}, func(ctx context.Context) error {
			if err := svc.store.Access().EndAPIKey(ctx, projectID, p.IsLive, keyID, &end, now); err != nil {
				return err
			}
			return svc.store.Access().InsertAPIKey(ctx, k)
		}); err != nil {
		if errors.Is(err, payment.ErrNotFound) {
			return payment.APIKeyInfo{}, "", payment.NotFound("API key")
		}
		return payment.APIKeyInfo{}, "", err
	}
	if grace == 0 {
		svc.Checkout().forgetKey(keyID)
	}
	return payment.APIKeyInfo{ID: k.ID, IsLive: k.IsLive, Hint: k.Hint, CreatedAt: now}, secret, nil
}
