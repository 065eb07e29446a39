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
