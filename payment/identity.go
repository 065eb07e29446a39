package payment

import "time"

// ID prefixes of accounts.
const (
	PrefixUser        = "usr_"
	PrefixUserSession = "uss_"
)

// UserSessionTokenPrefix begins a dashboard session's token (the session
// cookie's value, or a second-shape client's bearer token), telling it
// apart from API keys and access tokens.
const UserSessionTokenPrefix = "svc_st_"

// User is a merchant's account.
type User struct {
	ID          string
	Email       string
	HasPassword bool
	CreatedAt   time.Time
}

// UserSession is a dashboard session: what the session cookie stands for.
type UserSession struct {
	ID         string
	UserID     string
	UserAgent  string
	IP         string
	CreatedAt  time.Time
	LastSeenAt time.Time
	ExpiresAt  time.Time
	// AuthenticatedAt is when the user last proved who they are in this
	// session: a password or a passkey, at sign-in or re-authentication
	// (sudo mode, docs/identity.md).
	AuthenticatedAt time.Time
}

// Role is a user's role in a project (docs/identity.md).
type Role string

// Roles: an owner may do everything, members and keys included; a
// developer everything but members and keys; a viewer reads.
const (
	RoleOwner     Role = "owner"
	RoleDeveloper Role = "developer"
	RoleViewer    Role = "viewer"
)

// Membership is a project a user belongs to, with the role.
type Membership struct {
	ProjectID   string
	ProjectName string
	Role        Role
	CreatedAt   time.Time
}

// APIKeyInfo is an API key as its project's owners see it: never its
// secret.
type APIKeyInfo struct {
	ID         string
	IsLive     bool
	Hint       string
	CreatedAt  time.Time
	LastUsedAt *time.Time
	// ExpiresAt is set on a rolled key: it works until then.
	ExpiresAt *time.Time
}

// ErrForbidden is a principal acting beyond its role.
var ErrForbidden = &Error{Kind: KindForbidden, Message: "Your role in this project does not allow this"}

// PrefixInvitation is an invitation's ID prefix.
const PrefixInvitation = "inv_"

// Member is a user's membership of a project, as its members see it.
type Member struct {
	UserID    string
	Email     string
	Role      Role
	CreatedAt time.Time
}

// Invitation asks the holder of an email to join a project with a role.
type Invitation struct {
	ID        string
	ProjectID string
	Email     string
	Role      Role
	InvitedBy string
	CreatedAt time.Time
	ExpiresAt time.Time
	// InvitedByEmail is the inviter's email, in listings.
	InvitedByEmail string
}

// Account events: the account's own security log (docs/identity.md).
const (
	AccountReauthenticated     = "account.reauthenticated"
	AccountPasswordChanged     = "account.password_changed"
	AccountPasskeyAdded        = "account.passkey_added"
	AccountPasskeyRemoved      = "account.passkey_removed"
	AccountPasskeyCloneRefused = "account.passkey_clone_refused"
)

// PrefixAccountEvent is an account event's ID prefix.
const PrefixAccountEvent = "acev_"

// AccountEvent is an entry of an account's security log.
type AccountEvent struct {
	ID         string
	UserID     string
	OccurredAt time.Time
	Action     string
	SessionID  string
	IP         string
	UserAgent  string
	Details    map[string]any
}

// ValidRole reports whether r is a role.
func ValidRole(r string) bool {
	return r == string(RoleOwner) || r == string(RoleDeveloper) || r == string(RoleViewer)
}

// ID prefixes of passkeys and WebAuthn ceremonies.
const (
	PrefixPasskey   = "pk_"
	PrefixChallenge = "wch_"
)

// Passkey is a user's passkey, as the user sees it.
type Passkey struct {
	ID         string
	UserID     string
	Name       string
	CreatedAt  time.Time
	LastUsedAt *time.Time
}
