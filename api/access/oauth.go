package access

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/ory/fosite"
	"github.com/paymentsd/paymentsd/api/internal/rest"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/payment/views"
	"github.com/paymentsd/paymentsd/service/oauth"
)

// parseAuthorization reads and checks an authorization request (the
// query of /oauth/authorize) with the engine's own rules on top of
// fosite's: PKCE with S256 and at least one scope.
//
// A request without state is accepted: PKCE, which every request must
// use, protects the code from injection and CSRF (OAuth 2.1 §4.1.1,
// §7.5.1), so state is for the client's own use. fosite refuses a state
// shorter than 8 characters, so an absent one is passed to it as a
// placeholder and taken off the request again; a state that is sent must
// still have 8 characters or more.
func (s Handlers) parseAuthorization(ctx context.Context, r *http.Request) (fosite.AuthorizeRequester, error) {
	raw, q := r.URL.RawQuery, r.URL.Query()
	noState := q.Get("state") == ""
	if noState {
		q.Set("state", stateless)
		raw = q.Encode()
	}
	get := &http.Request{Method: http.MethodGet, URL: &url.URL{Path: "/oauth/authorize", RawQuery: raw},
		Header: http.Header{}, Body: http.NoBody}
	ar, err := s.Svc.OAuth().NewAuthorizeRequest(ctx, get.WithContext(ctx))
	if a, ok := ar.(*fosite.AuthorizeRequest); ok {
		if noState {
			a.State = ""
			a.Form.Del("state")
		}
		// Answers go back in the query, the only response mode offered:
		// a request for another is refused there too.
		if a.ResponseMode != fosite.ResponseModeQuery && a.ResponseMode != fosite.ResponseModeDefault {
			a.ResponseMode = fosite.ResponseModeQuery
		}
	}
	if err != nil {
		return ar, err
	}
	switch {
	case q.Get("code_challenge") == "":
		return ar, fosite.ErrInvalidRequest.WithHint("PKCE is required: send code_challenge and code_challenge_method=S256.")
	case q.Get("code_challenge_method") != "S256":
		return ar, fosite.ErrInvalidRequest.WithHint("code_challenge_method must be S256: plain is refused.")
	case len(ar.GetRequestedScopes()) == 0:
		return ar, fosite.ErrInvalidScope.WithHintf("Ask for at least one scope of: %s.", strings.Join(payment.ScopeNames(), " "))
	}
	return ar, nil
}

// Authorize answers /oauth/authorize: a request that cannot go back to
// the application (unknown client, unregistered redirect URI) is shown on
// the consent page, one that can but is wrong goes back with its error,
// and a good one goes to the consent page.
func (s Handlers) Authorize(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	ar, err := s.parseAuthorization(ctx, r)
	if err != nil && ar != nil && ar.IsRedirectURIValid() {
		rec := &locationRecorder{header: http.Header{}}
		s.Svc.OAuth().WriteAuthorizeError(ctx, rec, ar, err)
		for k, v := range rec.header {
			w.Header()[k] = v
		}
		w.Header().Set("Location", authorizationRedirect(rec.header.Get("Location"), s.issuer(r)))
		w.WriteHeader(http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, "/dashboard/authorize?"+r.URL.RawQuery, http.StatusFound)
}

// stateless stands for the state a client did not send, while fosite
// reads the request (see parseAuthorization); it never reaches a client.
const stateless = "no-state-was-sent"

// authorizationRedirect finishes the redirect of an authorization
// response, a code or an error: it names the issuer (RFC 9207's iss, so
// that a client talking to several servers knows which one answered), and
// carries no state when the client sent none (fosite writes an empty
// one, which a strict client refuses before reading the answer).
func authorizationRedirect(location, issuer string) string {
	u, err := url.Parse(location)
	if err != nil || location == "" {
		return location
	}
	q := u.Query()
	if st := q.Get("state"); st == "" || st == stateless {
		q.Del("state")
	}
	q.Set("iss", issuer)
	u.RawQuery = q.Encode()
	return u.String()
}

// issuer is the authorization server's issuer identifier (RFC 8414): the
// deployment's public URL, or the host the request named when none is
// configured.
func (s Handlers) issuer(r *http.Request) string {
	if s.CheckoutURL != "" {
		return s.CheckoutURL
	}
	return "http://" + r.Host
}

// oauthError is an OAuth error in the API's envelope, for the consent
// page's calls.
func oauthError(err error) error {
	e := fosite.ErrorToRFC6749Error(err)
	msg := e.GetDescription()
	if e.CodeField >= 500 {
		return err
	}
	return &payment.Error{Kind: payment.KindValidation, Message: "This authorization request cannot be accepted: " + msg}
}

type scopeView struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// AuthorizationRequest is the consent page's view of an authorization
// request: the application, the scopes in plain words, where the user
// goes back to, and the projects they may grant it.
func (s Handlers) AuthorizationRequest(w http.ResponseWriter, r *http.Request) error {
	ar, err := s.parseAuthorization(r.Context(), r)
	if err != nil {
		return oauthError(err)
	}
	c, err := s.Svc.Access().OAuthClientForConsent(r.Context(), ar.GetClient().GetID())
	if err != nil {
		return err
	}
	var scopes []scopeView
	for _, sc := range payment.OAuthScopes {
		if slices.Contains(ar.GetRequestedScopes(), sc.Name) {
			scopes = append(scopes, scopeView{sc.Name, sc.Description})
		}
	}
	rest.OK(w, r, http.StatusOK, "Authorization request", map[string]any{
		"client":      map[string]string{"id": c.ID, "name": c.Name},
		"scopes":      scopes,
		"redirectUri": ar.GetRedirectURI().String(),
	})
	return nil
}

// DecideAuthorization answers the consent page: the user allows the
// application for a project and environment, or denies it. The answer is
// where the browser goes next, back to the application: {redirectTo}.
func (s Handlers) DecideAuthorization(w http.ResponseWriter, r *http.Request) error {
	obj, err := rest.BodyOf(r, rest.ParseObject)
	if err != nil {
		return err
	}
	var probs payment.Problems
	f := rest.NewFields(obj, "", &probs)
	decision, projectID, env := f.Str("decision"), f.Str("projectId"), f.Str("environment")
	f.Done()
	switch {
	case decision == nil || *decision != "allow" && *decision != "deny":
		probs.Add("decision", "must be allow or deny")
	case *decision == "allow" && projectID == nil:
		probs.Add("projectId", "is required: the project the application acts for")
	case *decision == "allow" && (env == nil || *env != "live" && *env != "sandbox"):
		probs.Add("environment", "must be live or sandbox")
	}
	if err := probs.Err(); err != nil {
		return err
	}
	ctx := r.Context()
	provider := s.Svc.OAuth()
	ar, err := s.parseAuthorization(ctx, r)
	if err != nil {
		return oauthError(err)
	}
	rec := &locationRecorder{header: http.Header{}}
	if *decision == "deny" {
		provider.WriteAuthorizeError(ctx, rec, ar, fosite.ErrAccessDenied.WithHint("The user denied the request."))
		rest.OK(w, r, http.StatusOK, "Authorization denied", map[string]string{"redirectTo": authorizationRedirect(rec.header.Get("Location"), s.issuer(r))})
		return nil
	}
	in := rest.CurrentUser(r)
	p, err := s.Svc.Access().MemberPrincipal(ctx, in.User, in.Session, *projectID, *env == "live")
	if err != nil {
		return err
	}
	grantID := oauth.NewGrantID()
	ar.SetID(grantID)
	for _, sc := range ar.GetRequestedScopes() {
		ar.GrantScope(sc)
	}
	// The code and the audit entry of the consent commit together.
	var resp fosite.AuthorizeResponder
	if err := s.Svc.Access().ConsentOAuth(ctx, p, grantID, ar.GetClient().GetID(), ar.GetGrantedScopes(), func(ctx context.Context) (err error) {
		resp, err = provider.NewAuthorizeResponse(ctx, ar, &oauth.Session{UserID: in.User.ID, ProjectID: p.ProjectID, IsLive: p.IsLive})
		return err
	}); err != nil {
		return oauthError(err)
	}
	provider.WriteAuthorizeResponse(ctx, rec, ar, resp)
	rest.OK(w, r, http.StatusOK, "Authorization granted", map[string]string{"redirectTo": authorizationRedirect(rec.header.Get("Location"), s.issuer(r))})
	return nil
}

// locationRecorder keeps the redirect fosite writes, for the consent
// page to follow.
type locationRecorder struct {
	header http.Header
}

func (l *locationRecorder) Header() http.Header         { return l.header }
func (l *locationRecorder) Write(b []byte) (int, error) { return len(b), nil }
func (l *locationRecorder) WriteHeader(int)             {}

// Token is the token endpoint: a code (with its PKCE verifier) or a
// refresh token for an access token and a new refresh token.
func (s Handlers) Token(w http.ResponseWriter, r *http.Request) {
	provider := s.Svc.OAuth()
	if gt := r.PostFormValue("grant_type"); gt != "" && gt != "authorization_code" && gt != "refresh_token" {
		// fosite answers a grant no handler takes with invalid_request.
		oauthFail(r.Context(), w, provider, fosite.ErrUnsupportedGrantType.WithHint(
			"Only the authorization_code and refresh_token grants are supported (OAuth 2.1)."))
		return
	}
	reason := "refresh_token_reused"
	if r.PostFormValue("grant_type") == "authorization_code" {
		reason = "code_reused"
	}
	ctx := oauth.WithRevocationReason(r.Context(), reason)
	ar, err := provider.NewAccessRequest(ctx, r, &oauth.Session{})
	if err != nil {
		oauthFail(ctx, w, provider, err)
		return
	}
	resp, err := provider.NewAccessResponse(ctx, ar)
	if err != nil {
		oauthFail(ctx, w, provider, err)
		return
	}
	provider.WriteAccessResponse(ctx, w, ar, resp)
}

// oauthFail answers an authorization server's endpoint with an OAuth
// error (RFC 6749 §5.2). A 401 (invalid_client) carries the challenge
// HTTP requires, for HTTP Basic: the scheme clients authenticate with in
// the Authorization header.
func oauthFail(ctx context.Context, w http.ResponseWriter, provider *oauth.Provider, err error) {
	if fosite.ErrorToRFC6749Error(err).CodeField == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", basicChallenge)
	}
	provider.WriteAccessError(ctx, w, nil, err)
}

// basicChallenge is the challenge of the token, revocation and
// introspection endpoints' 401s.
const basicChallenge = `Basic realm="paymentsd", charset="UTF-8"`

// RevokeToken is RFC 7009: revoking an access or refresh token ends its
// whole grant. A token that is unknown (or already revoked) is no error;
// a token issued to another client is refused (unauthorized_client), as
// are the client's wrong credentials (invalid_client). fosite's own writer
// answers 200 to the former and drops the errors' descriptions.
func (s Handlers) RevokeToken(w http.ResponseWriter, r *http.Request) {
	provider := s.Svc.OAuth()
	ctx := oauth.WithRevocationReason(r.Context(), "token_revoked")
	if r.PostFormValue("token") == "" {
		oauthFail(ctx, w, provider, fosite.ErrInvalidRequest.WithHint("The token to revoke is required."))
		return
	}
	err := provider.NewRevocationRequest(ctx, r)
	switch {
	case err == nil:
		w.Header().Set("Pragma", "no-cache")
		w.WriteHeader(http.StatusOK)
		return
	case errors.Is(err, fosite.ErrUnauthorizedClient):
		err = fosite.ErrUnauthorizedClient.WithHint("The token was not issued to this client: a client revokes its own tokens only.")
	}
	oauthFail(ctx, w, provider, err)
}

// Introspect is RFC 7662, for confidential clients authenticating with
// HTTP Basic: a client learns about its own tokens only. Credentials that
// are missing or wrong are invalid_client (RFC 7662 §2.3), not fosite's
// request_unauthorized; the expiry is the introspected token's own.
func (s Handlers) Introspect(w http.ResponseWriter, r *http.Request) {
	provider := s.Svc.OAuth()
	ctx := r.Context()
	id, _, basic := r.BasicAuth()
	if !basic {
		oauthFail(ctx, w, provider, fosite.ErrInvalidClient.WithHint(
			"Authenticate as a confidential client with HTTP Basic (client ID and secret)."))
		return
	}
	ir, err := provider.NewIntrospectionRequest(ctx, r, &oauth.Session{})
	switch {
	case err != nil && !errors.Is(err, fosite.ErrInactiveToken) && errors.Is(err, fosite.ErrRequestUnauthorized):
		oauthFail(ctx, w, provider, fosite.ErrInvalidClient.WithHint(
			"The client's credentials are invalid: authenticate as a confidential client with HTTP Basic (client ID and secret)."))
		return
	case err != nil:
		provider.WriteIntrospectionError(ctx, w, err)
		return
	}
	if clientID, _ := url.QueryUnescape(id); ir.GetAccessRequester().GetClient().GetID() != clientID {
		provider.WriteIntrospectionError(ctx, w, fosite.ErrInactiveToken)
		return
	}
	// fosite's writer reports the access token's expiry whatever the
	// token: a refresh token's is its own.
	if sess, ok := ir.GetAccessRequester().GetSession().(*oauth.Session); ok && ir.GetTokenUse() == fosite.RefreshToken {
		sess.SetExpiresAt(fosite.AccessToken, sess.GetExpiresAt(fosite.RefreshToken))
	}
	provider.WriteIntrospectionResponse(ctx, w, ir)
}

// OauthMetadata is the authorization server's metadata (RFC 8414).
func (s Handlers) OauthMetadata(w http.ResponseWriter, r *http.Request) {
	base := s.issuer(r)
	rest.WriteJSON(w, http.StatusOK, map[string]any{
		"issuer":                                         base,
		"authorization_endpoint":                         base + "/oauth/authorize",
		"token_endpoint":                                 base + "/oauth/token",
		"revocation_endpoint":                            base + "/oauth/revoke",
		"introspection_endpoint":                         base + "/oauth/introspect",
		"scopes_supported":                               payment.ScopeNames(),
		"response_types_supported":                       []string{"code"},
		"response_modes_supported":                       []string{"query"},
		"grant_types_supported":                          []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":               []string{"S256"},
		"token_endpoint_auth_methods_supported":          []string{"client_secret_basic", "client_secret_post", "none"},
		"revocation_endpoint_auth_methods_supported":     []string{"client_secret_basic", "client_secret_post", "none"},
		"introspection_endpoint_auth_methods_supported":  []string{"client_secret_basic"},
		"service_documentation":                          base + "/api/v1/docs",
		"authorization_response_iss_parameter_supported": true,
	})
}

type oauthGrantView struct {
	ID            string   `json:"id"`
	ClientID      string   `json:"clientId"`
	ClientName    string   `json:"clientName"`
	UserID        string   `json:"userId"`
	UserEmail     string   `json:"userEmail"`
	ProjectID     string   `json:"projectId"`
	Environment   string   `json:"environment"`
	Scopes        []string `json:"scopes"`
	CreatedAt     string   `json:"createdAt"`
	LastUsedAt    *string  `json:"lastUsedAt"`
	RevokedAt     *string  `json:"revokedAt"`
	RevokedReason *string  `json:"revokedReason"`
}

func oauthGrantViewOf(g payment.OAuthGrant) oauthGrantView {
	env := "sandbox"
	if g.IsLive {
		env = "live"
	}
	v := oauthGrantView{ID: g.ID, ClientID: g.ClientID, ClientName: g.ClientName, UserID: g.UserID, UserEmail: g.UserEmail,
		ProjectID: g.ProjectID, Environment: env, Scopes: g.Scopes, CreatedAt: views.Time(g.CreatedAt),
		LastUsedAt: views.OptTime(g.LastUsedAt), RevokedAt: views.OptTime(g.RevokedAt)}
	if g.RevokedReason != "" {
		v.RevokedReason = &g.RevokedReason
	}
	return v
}

func (s Handlers) ListUserGrants(w http.ResponseWriter, r *http.Request) error {
	return rest.RespondList(w, r, "Authorized applications retrieved", oauthGrantViewOf)(s.Svc.Access().UserOAuthGrants(r.Context(), rest.CurrentUser(r).User.ID))
}

func (s Handlers) RevokeUserGrant(w http.ResponseWriter, r *http.Request) error {
	return rest.Respond(w, r, http.StatusOK, "Authorization revoked: the application's tokens no longer work", oauthGrantViewOf)(s.Svc.Access().RevokeUserOAuthGrant(r.Context(), rest.CurrentUser(r).User.ID, r.PathValue("grantId")))
}

func (s Handlers) ListProjectGrants(w http.ResponseWriter, r *http.Request) error {
	return rest.RespondList(w, r, "Authorized applications retrieved", oauthGrantViewOf)(s.Svc.Access().ProjectOAuthGrants(r.Context(), rest.Principal(r), r.PathValue("projectId")))
}

func (s Handlers) RevokeProjectGrant(w http.ResponseWriter, r *http.Request) error {
	return rest.Respond(w, r, http.StatusOK, "Authorization revoked: the application's tokens no longer work", oauthGrantViewOf)(s.Svc.Access().RevokeProjectOAuthGrant(r.Context(), rest.Principal(r), r.PathValue("projectId"), r.PathValue("grantId")))
}
