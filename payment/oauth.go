package payment

import (
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// PrefixOAuthClient begins an OAuth client's ID (its client_id).
const PrefixOAuthClient = "app_"

// OAuthClientSecretPrefix begins a confidential client's secret.
const OAuthClientSecretPrefix = "svc_cs_"

// OAuthClient is a third-party application registered by a project's
// owners to act for its users through OAuth 2.1.
type OAuthClient struct {
	ID           string
	ProjectID    string
	Name         string
	RedirectURIs []string
	// Confidential clients authenticate with their secret at the token
	// endpoint; public ones (a native or browser app) cannot keep one and
	// rely on PKCE alone.
	Confidential bool
	SecretHash   string
	CreatedAt    time.Time
	RevokedAt    *time.Time
}

// OAuthClientInput registers a client.
type OAuthClientInput struct {
	Name         *string
	RedirectURIs []string
	Confidential *bool
}

// MaxRedirectURIs bounds a client's redirect URIs.
const MaxRedirectURIs = 10

// CheckOAuthClient validates a registration: a name, 1 to 10 redirect
// URIs that OAuth 2.1 allows (each https, or http on a loopback address
// for native apps, RFC 8252), and the client's type.
func CheckOAuthClient(in OAuthClientInput) (name string, uris []string, confidential bool, err error) {
	var probs Problems
	if in.Name == nil || strings.TrimSpace(*in.Name) == "" {
		probs.Add("name", "is required: the application's name, shown to users on the consent page")
	} else if name = strings.TrimSpace(*in.Name); len(name) > 100 {
		probs.Add("name", "must be at most 100 characters")
	}
	switch {
	case len(in.RedirectURIs) == 0:
		probs.Add("redirectUris", "is required: the addresses the application receives its codes at")
	case len(in.RedirectURIs) > MaxRedirectURIs:
		probs.Addf("redirectUris", "must hold at most %d addresses", MaxRedirectURIs)
	}
	for i, u := range in.RedirectURIs {
		if msg := checkRedirectURI(u); msg != "" {
			probs.Add("redirectUris["+strconv.Itoa(i)+"]", msg)
		}
	}
	if in.Confidential == nil {
		probs.Add("confidential", "is required: true for a server that keeps a secret, false for a native or browser app")
	} else {
		confidential = *in.Confidential
	}
	return name, in.RedirectURIs, confidential, probs.Err()
}

func checkRedirectURI(s string) string {
	u, err := url.Parse(s)
	switch {
	case err != nil || !u.IsAbs() || u.Host == "" || len(s) > 2000:
		return "must be an absolute https address"
	case u.Fragment != "" || strings.Contains(s, "#"):
		return "must not have a fragment"
	case u.User != nil:
		return "must not carry a user name or password"
	case u.Scheme == "https":
		return ""
	case u.Scheme == "http" && IsLoopback(u.Hostname()):
		return ""
	}
	return "must be https, or http on a loopback address (127.0.0.1, [::1] or localhost) for a native app"
}

// IsLoopback tells whether a host names the machine itself.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// PrefixOAuthGrant is the ID prefix of a user's authorization of an
// application: the OAuth request ID its codes and tokens share.
const PrefixOAuthGrant = "grt_"

// Prefixes of the authorization server's opaque tokens.
const (
	OAuthAccessTokenPrefix  = "svc_at_"
	OAuthRefreshTokenPrefix = "svc_rt_"
	OAuthCodePrefix         = "svc_ac_"
)

// Scope is what an OAuth access token may do.
type Scope struct {
	Name string
	// Description says it in plain words, on the consent page.
	Description string
}

// OAuthScopes are the scopes an application may ask for (docs/api.md
// "OAuth scopes"): read and write per kind of record, and read for the
// project. A write scope does not include its read scope.
var OAuthScopes = []Scope{
	{"project:read", "See the project's settings, overview, deposit addresses and audit log"},
	{"plans:read", "See payment plans"},
	{"plans:write", "Create, change and archive payment plans"},
	{"checkout_sessions:read", "See checkout sessions"},
	{"checkout_sessions:write", "Open, cancel and resolve checkout sessions"},
	{"transactions:read", "See transactions"},
	{"transactions:write", "Assign unexpected transfers to checkout sessions"},
	{"refunds:read", "See refunds"},
	{"refunds:write", "Create refunds, give their addresses and cancel them"},
	{"payouts:read", "See payout batches and payouts"},
	{"payouts:write", "Upload and cancel payout batches and report their transactions (never approve them)"},
	{"webhooks:read", "See webhook endpoints, events and deliveries"},
	{"webhooks:write", "Create, change, test and delete webhook endpoints, and redeliver events"},
}

// ScopeNames are the names of OAuthScopes.
func ScopeNames() []string {
	out := make([]string, len(OAuthScopes))
	for i, s := range OAuthScopes {
		out[i] = s.Name
	}
	return out
}

// OAuthGrant is a user's authorization of an application for one project
// and environment.
type OAuthGrant struct {
	ID         string
	ClientID   string
	ClientName string
	UserID     string
	UserEmail  string
	ProjectID  string
	IsLive     bool
	Scopes     []string
	CreatedAt  time.Time
	LastUsedAt *time.Time
	RevokedAt  *time.Time
	// RevokedReason: "user", "owner", "client_revoked", "token_revoked",
	// "refresh_token_reused", "code_reused", or for every grant of the
	// user at once "password_changed" or "signed_out_everywhere".
	RevokedReason string
}

// ErrMissingScope is an OAuth access token used beyond its scopes.
func ErrMissingScope(scope string) *Error {
	return &Error{Kind: KindForbidden, Message: "The access token was not granted the scope " + scope,
		Details: []FieldError{{Field: "scope", Message: "requires " + scope}}}
}
