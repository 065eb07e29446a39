package oauth_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ory/fosite"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service"
	"github.com/paymentsd/paymentsd/service/oauth"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/store/storetest"
)

// The authorization server driven as the API drives it (api/oauth.go):
// an authorization request read from the query, a consent that issues the
// code with its audit entry, and the token, revocation and introspection
// endpoints reading form posts.

const redirectURI = "https://app.example.test/callback"

type world struct {
	svc      *service.Service
	store    *store.Store
	provider *oauth.Provider
}

// tenant is a project with its owner and a registered application.
type tenant struct {
	owner  payment.Principal
	user   payment.User
	client payment.OAuthClient
	secret string // "" for a public client
}

func newWorld(t *testing.T) world {
	t.Helper()
	st := storetest.NewStore(t)
	svc := service.New(service.Deps{Store: st})
	return world{svc: svc, store: st, provider: svc.OAuth()}
}

var seq int

func (w world) tenant(t *testing.T, confidential bool) tenant {
	t.Helper()
	ctx := context.Background()
	seq++
	in, err := w.svc.Identity().Signup(ctx, "owner"+strings.Repeat("x", seq)+"@example.test", "correct horse battery staple", service.Client{})
	if err != nil {
		t.Fatal(err)
	}
	proj, err := w.svc.Checkout().CreateProjectFor(ctx, in.User.ID, "Shop")
	if err != nil {
		t.Fatal(err)
	}
	p, err := w.svc.Access().MemberPrincipal(ctx, in.User, in.Session, proj.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	name := "Bookkeeping app"
	c, secret, err := w.svc.Access().CreateOAuthClient(ctx, p, proj.ID, payment.OAuthClientInput{Name: &name,
		RedirectURIs: []string{redirectURI}, Confidential: &confidential})
	if err != nil {
		t.Fatal(err)
	}
	return tenant{owner: p, user: in.User, client: c, secret: secret}
}

// pkcePair is a verifier and its S256 challenge.
func pkcePair() (verifier, challenge string) {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	verifier = base64.RawURLEncoding.EncodeToString(b)
	sum := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(sum[:])
}

// authorize asks for a code for tn's client with the query q on top of
// the usual parameters, and consents as tn's owner, as the API does.
func (w world) authorize(tn tenant, q url.Values) (string, error) {
	ctx := context.Background()
	base := url.Values{"response_type": {"code"}, "client_id": {tn.client.ID}, "redirect_uri": {redirectURI},
		"scope": {"plans:read"}, "state": {"state-of-the-client"}}
	for k, v := range q {
		base[k] = v
	}
	req := httptest.NewRequest(http.MethodGet, "/oauth/authorize?"+base.Encode(), nil)
	ar, err := w.provider.NewAuthorizeRequest(ctx, req)
	if err != nil {
		return "", err
	}
	grantID := oauth.NewGrantID()
	ar.SetID(grantID)
	for _, s := range ar.GetRequestedScopes() {
		ar.GrantScope(s)
	}
	var resp fosite.AuthorizeResponder
	err = w.svc.Access().ConsentOAuth(ctx, tn.owner, grantID, tn.client.ID, ar.GetGrantedScopes(), func(ctx context.Context) (err error) {
		resp, err = w.provider.NewAuthorizeResponse(ctx, ar, &oauth.Session{UserID: tn.user.ID, ProjectID: tn.owner.ProjectID, IsLive: tn.owner.IsLive})
		return err
	})
	if err != nil {
		return "", err
	}
	return resp.GetParameters().Get("code"), nil
}

// post is a form post to an endpoint, authenticated as c: HTTP Basic for
// a confidential client, client_id in the form for a public one.
func post(path string, c tenant, form url.Values) *http.Request {
	if c.secret == "" {
		form.Set("client_id", c.client.ID)
	}
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if c.secret != "" {
		req.SetBasicAuth(url.QueryEscape(c.client.ID), url.QueryEscape(c.secret))
	}
	return req
}

type tokens struct{ access, refresh string }

// token is the token endpoint: form's grant exchanged by client c.
func (w world) token(c tenant, form url.Values, reason string) (tokens, error) {
	ctx := oauth.WithRevocationReason(context.Background(), reason)
	ar, err := w.provider.NewAccessRequest(ctx, post("/oauth/token", c, form), &oauth.Session{})
	if err != nil {
		return tokens{}, err
	}
	resp, err := w.provider.NewAccessResponse(ctx, ar)
	if err != nil {
		return tokens{}, err
	}
	refresh, _ := resp.GetExtra("refresh_token").(string)
	return tokens{access: resp.GetAccessToken(), refresh: refresh}, nil
}

func (w world) exchange(c tenant, code, verifier string) (tokens, error) {
	return w.token(c, url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirectURI},
		"code_verifier": {verifier}}, "code_reused")
}

func (w world) refresh(c tenant, refresh string) (tokens, error) {
	return w.token(c, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}}, "refresh_token_reused")
}

// grant runs the whole code flow for tn's client and returns its tokens.
func (w world) grant(t *testing.T, tn tenant) tokens {
	t.Helper()
	verifier, challenge := pkcePair()
	code, err := w.authorize(tn, url.Values{"code_challenge": {challenge}, "code_challenge_method": {"S256"}})
	if err != nil {
		t.Fatalf("authorize: %v", err)
	}
	tk, err := w.exchange(tn, code, verifier)
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	return tk
}

func (w world) works(t *testing.T, what, access string) payment.Principal {
	t.Helper()
	p, err := w.provider.Authenticate(context.Background(), access)
	if err != nil {
		t.Fatalf("%s: the access token is refused: %v", what, err)
	}
	return p
}

func (w world) refused(t *testing.T, what, access string) {
	t.Helper()
	if _, err := w.provider.Authenticate(context.Background(), access); !errors.Is(err, oauth.ErrInvalidToken) {
		t.Fatalf("%s: the access token = %v, want ErrInvalidToken", what, err)
	}
}

// revokedFor fails unless the grant has ended for reason, and is gone
// from the project's list of authorized applications.
func (w world) revokedFor(t *testing.T, grantID, reason string) {
	t.Helper()
	g, err := w.store.Access().OAuthGrant(context.Background(), grantID)
	if err != nil || g.RevokedAt == nil || g.RevokedReason != reason {
		t.Fatalf("grant %s = %+v, %v; want revoked for %s", grantID, g, err, reason)
	}
}

// The code flow with PKCE S256 gives an access token acting for the user
// in the consented project and environment with the consented scopes,
// and a refresh token; the code works once, with its verifier only.
func TestCodeFlowWithPKCE(t *testing.T) {
	w := newWorld(t)
	tn := w.tenant(t, false)
	verifier, challenge := pkcePair()
	code, err := w.authorize(tn, url.Values{"code_challenge": {challenge}, "code_challenge_method": {"S256"},
		"scope": {"plans:read transactions:read"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(code, payment.OAuthCodePrefix) {
		t.Fatalf("code %q", code)
	}
	_, err = w.exchange(tn, code, "a-verifier-that-is-long-enough-but-not-the-one-0123456789")
	if err == nil {
		t.Fatal("a code was exchanged with the wrong verifier")
	}
	// The failed exchange spent nothing the right one needs? It did: a
	// code is tried once. A fresh one for the rest.
	code, err = w.authorize(tn, url.Values{"code_challenge": {challenge}, "code_challenge_method": {"S256"},
		"scope": {"plans:read transactions:read"}})
	if err != nil {
		t.Fatal(err)
	}
	tk, err := w.exchange(tn, code, verifier)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tk.access, payment.OAuthAccessTokenPrefix) || !strings.HasPrefix(tk.refresh, payment.OAuthRefreshTokenPrefix) {
		t.Fatalf("tokens %+v", tk)
	}
	p := w.works(t, "a fresh token", tk.access)
	if p.ProjectID != tn.owner.ProjectID || p.IsLive || p.UserID != tn.user.ID || p.Role != payment.RoleOwner ||
		p.ClientID != tn.client.ID || p.GrantID == "" || !p.HasScope("plans:read") || !p.HasScope("transactions:read") || p.HasScope("plans:write") {
		t.Fatalf("the token's principal = %+v", p)
	}
	// An application never manages keys or members, whatever the user's role.
	if p.CanManageKeys() {
		t.Fatal("an OAuth token may manage keys")
	}

	// The code is spent: exchanged again, it fails and ends the grant.
	if _, err := w.exchange(tn, code, verifier); err == nil {
		t.Fatal("a code was exchanged twice")
	}
	w.refused(t, "after its code was replayed", tk.access)
	if _, err := w.refresh(tn, tk.refresh); err == nil {
		t.Fatal("the refresh token of a grant ended by a replayed code still works")
	}
	w.revokedFor(t, p.GrantID, "code_reused")
}

// PKCE is S256 on every code: a request without a challenge, or with the
// plain method, gets no code.
func TestPKCEPlainAndMissingAreRefused(t *testing.T) {
	w := newWorld(t)
	tn := w.tenant(t, false)
	verifier, _ := pkcePair()
	if _, err := w.authorize(tn, url.Values{"code_challenge": {verifier}, "code_challenge_method": {"plain"}}); err == nil {
		t.Fatal("a plain PKCE challenge got a code")
	}
	if _, err := w.authorize(tn, url.Values{}); err == nil {
		t.Fatal("a request without PKCE got a code")
	}
	_, challenge := pkcePair()
	if _, err := w.authorize(tn, url.Values{"code_challenge": {challenge}, "code_challenge_method": {"S256"},
		"redirect_uri": {"https://evil.example.test/callback"}}); err == nil {
		t.Fatal("a code was issued to an unregistered redirect URI")
	}
}

// A refresh token is used once: it gives a new pair and ends the old
// access token; used again (a stolen copy), it ends the whole grant.
func TestRefreshTokensRotateAndReuseEndsTheGrant(t *testing.T) {
	w := newWorld(t)
	tn := w.tenant(t, true)
	first := w.grant(t, tn)

	second, err := w.refresh(tn, first.refresh)
	if err != nil {
		t.Fatal(err)
	}
	if second.refresh == first.refresh || second.access == first.access {
		t.Fatalf("the refresh did not rotate: %+v then %+v", first, second)
	}
	w.refused(t, "the access token of a used refresh token", first.access)
	grantID := w.works(t, "the new access token", second.access).GrantID

	if _, err := w.refresh(tn, first.refresh); err == nil {
		t.Fatal("a used refresh token worked again")
	}
	w.refused(t, "after a refresh token was reused", second.access)
	if _, err := w.refresh(tn, second.refresh); err == nil {
		t.Fatal("the newest refresh token works after the grant ended for a reuse")
	}
	w.revokedFor(t, grantID, "refresh_token_reused")
}

// RFC 7009: a client revoking its access or refresh token ends the whole
// grant; another client, even of the same project, cannot revoke it.
func TestRevocationEndsTheGrant(t *testing.T) {
	w := newWorld(t)
	tn := w.tenant(t, true)
	other := w.tenant(t, true)
	ctx := oauth.WithRevocationReason(context.Background(), "token_revoked")

	tk := w.grant(t, tn)
	err := w.provider.NewRevocationRequest(ctx, post("/oauth/revoke", other, url.Values{"token": {tk.access}}))
	if !errors.Is(err, fosite.ErrUnauthorizedClient) {
		t.Fatalf("another client revoking the token: %v, want unauthorized_client", err)
	}
	w.works(t, "after another client tried to revoke it", tk.access)
	wrong := tn
	wrong.secret = "svc_cs_wrong"
	if err := w.provider.NewRevocationRequest(ctx, post("/oauth/revoke", wrong, url.Values{"token": {tk.access}})); err == nil {
		t.Fatal("a revocation with a wrong client secret was accepted")
	}

	grantID := w.works(t, "before its revocation", tk.access).GrantID
	if err := w.provider.NewRevocationRequest(ctx, post("/oauth/revoke", tn, url.Values{"token": {tk.refresh}})); err != nil {
		t.Fatal(err)
	}
	w.refused(t, "after its refresh token was revoked", tk.access)
	w.revokedFor(t, grantID, "token_revoked")
	if _, err := w.refresh(tn, tk.refresh); err == nil {
		t.Fatal("a revoked refresh token worked")
	}
	// Revoking it again is no error (RFC 7009 §2.2).
	if err := w.provider.NewRevocationRequest(ctx, post("/oauth/revoke", tn, url.Values{"token": {tk.refresh}})); err != nil {
		t.Fatalf("revoking a revoked token: %v", err)
	}

	// Revoking an access token ends the grant's refresh token too.
	tk = w.grant(t, tn)
	if err := w.provider.NewRevocationRequest(ctx, post("/oauth/revoke", tn, url.Values{"token": {tk.access}})); err != nil {
		t.Fatal(err)
	}
	w.refused(t, "a revoked access token", tk.access)
	if _, err := w.refresh(tn, tk.refresh); err == nil {
		t.Fatal("the refresh token of a grant whose access token was revoked still works")
	}
}

// RFC 7662: a confidential client introspects its token: active, its
// client, scopes, user and project; an ended one is inactive.
func TestIntrospection(t *testing.T) {
	w := newWorld(t)
	tn := w.tenant(t, true)
	tk := w.grant(t, tn)
	ctx := context.Background()

	ir, err := w.provider.NewIntrospectionRequest(ctx, post("/oauth/introspect", tn, url.Values{"token": {tk.access}}), &oauth.Session{})
	if err != nil || !ir.IsActive() {
		t.Fatalf("introspecting a live token: %+v, %v", ir, err)
	}
	ar := ir.GetAccessRequester()
	sess := ar.GetSession().(*oauth.Session)
	if ar.GetClient().GetID() != tn.client.ID || sess.UserID != tn.user.ID || sess.GetExtraClaims()["project_id"] != tn.owner.ProjectID ||
		sess.GetExtraClaims()["environment"] != "sandbox" || !ar.GetGrantedScopes().Has("plans:read") {
		t.Fatalf("introspected %+v (session %+v)", ar, sess)
	}
	if exp := sess.GetExpiresAt(fosite.AccessToken); time.Until(exp) > oauth.AccessTokenLifetime+time.Minute || time.Until(exp) < oauth.AccessTokenLifetime-time.Minute {
		t.Fatalf("the access token expires at %v, want in %v", exp, oauth.AccessTokenLifetime)
	}

	if err := w.provider.NewRevocationRequest(oauth.WithRevocationReason(ctx, "token_revoked"),
		post("/oauth/revoke", tn, url.Values{"token": {tk.access}})); err != nil {
		t.Fatal(err)
	}
	_, err = w.provider.NewIntrospectionRequest(ctx, post("/oauth/introspect", tn, url.Values{"token": {tk.access}}), &oauth.Session{})
	if !errors.Is(err, fosite.ErrInactiveToken) {
		t.Fatalf("introspecting a revoked token: %v, want inactive", err)
	}
}

// A client of another project can do nothing with a token or code it did
// not get: it cannot exchange the code, refresh the token or revoke it,
// and the owner's token acts in its own project only.
func TestAnotherProjectsClientCannotUseTheTokens(t *testing.T) {
	w := newWorld(t)
	victim, thief := w.tenant(t, false), w.tenant(t, false)

	verifier, challenge := pkcePair()
	code, err := w.authorize(victim, url.Values{"code_challenge": {challenge}, "code_challenge_method": {"S256"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.exchange(thief, code, verifier); err == nil {
		t.Fatal("another project's client exchanged the code")
	}
	// The attempt ended nothing of the victim's: the code still works for
	// its own client.
	tk, err := w.exchange(victim, code, verifier)
	if err != nil {
		t.Fatalf("the victim's exchange after a thief's attempt: %v", err)
	}
	if _, err := w.refresh(thief, tk.refresh); err == nil {
		t.Fatal("another project's client refreshed the token")
	}
	p := w.works(t, "after a thief's refresh attempt", tk.access)
	if p.ProjectID != victim.owner.ProjectID || p.ProjectID == thief.owner.ProjectID {
		t.Fatalf("the victim's token acts for %s", p.ProjectID)
	}
	if _, err := w.refresh(victim, tk.refresh); err != nil {
		t.Fatalf("the victim's own refresh after a thief's attempt: %v", err)
	}

	// A client cannot ask for a code on a redirect URI registered by
	// another project's client.
	if _, err := w.authorize(thief, url.Values{"client_id": {victim.client.ID}, "redirect_uri": {"https://evil.example.test/cb"},
		"code_challenge": {challenge}, "code_challenge_method": {"S256"}}); err == nil {
		t.Fatal("a code for the victim's client went to another redirect URI")
	}
}

// A revoked application and a member who left end the tokens at once;
// a token acts with its user's role of the day.
func TestTokensEndWithTheirClientOrMembership(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	tn := w.tenant(t, false)

	// A second owner authorizes the application, is made a viewer, then
	// leaves.
	in, err := w.svc.Identity().Signup(ctx, "colleague@example.test", "correct horse battery staple", service.Client{})
	if err != nil {
		t.Fatal(err)
	}
	_, invitation, err := w.svc.Access().Invite(ctx, tn.owner, tn.owner.ProjectID, in.User.Email, "owner")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.svc.Access().AcceptInvitation(ctx, in.User, invitation); err != nil {
		t.Fatal(err)
	}
	colleague := tn
	colleague.user = in.User
	if colleague.owner, err = w.svc.Access().MemberPrincipal(ctx, in.User, in.Session, tn.owner.ProjectID, false); err != nil {
		t.Fatal(err)
	}
	theirs := w.grant(t, colleague)
	if p := w.works(t, "the colleague's token", theirs.access); p.Role != payment.RoleOwner || p.UserID != in.User.ID {
		t.Fatalf("the colleague's token acts as %+v", p)
	}
	if err := w.svc.Access().ChangeMember(ctx, tn.owner, tn.owner.ProjectID, in.User.ID, "viewer"); err != nil {
		t.Fatal(err)
	}
	if p := w.works(t, "the colleague's token once a viewer", theirs.access); p.Role != payment.RoleViewer || p.CanWrite() {
		t.Fatalf("the token of a member made viewer acts as %+v", p)
	}
	if err := w.svc.Access().ChangeMember(ctx, tn.owner, tn.owner.ProjectID, in.User.ID, ""); err != nil {
		t.Fatal(err)
	}
	w.refused(t, "the token of a member who left", theirs.access)

	tk := w.grant(t, tn)
	if _, err := w.svc.Access().RevokeOAuthClient(ctx, tn.owner, tn.owner.ProjectID, tn.client.ID); err != nil {
		t.Fatal(err)
	}
	w.refused(t, "a token of a revoked client", tk.access)
	if _, err := w.refresh(tn, tk.refresh); err == nil {
		t.Fatal("a revoked client refreshed its token")
	}
}
