package api

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/payment/views"
	"github.com/paymentsd/paymentsd/service"
)

// SessionCookie is the dashboard session's cookie (the spec: a name
// ending in session_token).
const SessionCookie = "paymentsd_session_token"

// EnvironmentHeader chooses the environment a cookie request acts in:
// live or sandbox (the default), as a dashboard's test-mode switch.
const EnvironmentHeader = "Paymentsd-Environment"

// userKey holds a cookie request's user and session.
const userKey ctxKey = 100

type signedIn struct {
	user    payment.User
	session payment.UserSession
}

func currentUser(r *http.Request) signedIn {
	v, _ := r.Context().Value(userKey).(signedIn)
	return v
}

// sessionToken is the request's session cookie, "" without one.
func sessionToken(r *http.Request) string {
	c, err := r.Cookie(SessionCookie)
	if err != nil {
		return ""
	}
	return c.Value
}

// environment is the environment a cookie request names.
func environment(r *http.Request) (bool, error) {
	switch strings.ToLower(r.Header.Get(EnvironmentHeader)) {
	case "", "sandbox":
		return false, nil
	case "live":
		return true, nil
	}
	var probs payment.Problems
	probs.Add(EnvironmentHeader, "must be live or sandbox")
	return false, probs.Err()
}

func unsafeMethod(m string) bool {
	return m != http.MethodGet && m != http.MethodHead && m != http.MethodOptions
}

// crossOrigin refuses a state-changing browser request from another
// origin (net/http.CrossOriginProtection: Sec-Fetch-Site, else Origin
// against Host). Requests without those headers (servers, curl) pass.
func (s *Edge) crossOrigin(r *http.Request) error {
	if err := s.cop.Check(r); err != nil {
		return &payment.Error{Kind: payment.KindForbidden, Message: "Cross-origin request refused"}
	}
	return nil
}

func (s identityAPI) setSessionCookie(w http.ResponseWriter, token string, expires time.Time) {
	c := &http.Cookie{Name: SessionCookie, Value: token, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode,
		Secure: strings.HasPrefix(s.CheckoutURL, "https://")}
	if token == "" {
		c.MaxAge = -1
	} else {
		c.Expires = expires
	}
	http.SetCookie(w, c)
}

type userView struct {
	ID          string `json:"id"`
	Email       string `json:"email"`
	HasPassword bool   `json:"hasPassword"`
	CreatedAt   string `json:"createdAt"`
}

func userViewOf(u payment.User) userView {
	return userView{ID: u.ID, Email: u.Email, HasPassword: u.HasPassword, CreatedAt: views.Time(u.CreatedAt)}
}

func decodeCredentials(body []byte, emailField, passwordField string) (email, password string, err error) {
	in, err := bodyFields(body, []string{emailField, passwordField})
	if err != nil {
		return "", "", err
	}
	return *in[emailField], *in[passwordField], nil
}

func (s identityAPI) client(r *http.Request) service.Client {
	return service.Client{UserAgent: r.UserAgent(), IP: s.clientAddress(r)}
}

func (s identityAPI) signup(w http.ResponseWriter, r *http.Request) error {
	if err := s.crossOrigin(r); err != nil {
		return err
	}
	if s.signupDisabled {
		return &payment.Error{Kind: payment.KindForbidden, Message: "Sign-up is switched off on this deployment: ask its operator for an account"}
	}
	fields, err := fieldsOf(r, []string{"email"}, "password")
	if err != nil {
		return err
	}
	var in service.SignedIn
	if fields["password"] == nil {
		// No password: the account signs in with the passkeys it adds.
		in, err = s.svc.Identity().SignupWithoutPassword(r.Context(), *fields["email"], s.client(r))
	} else {
		in, err = s.svc.Identity().Signup(r.Context(), *fields["email"], *fields["password"], s.client(r))
	}
	if err != nil {
		return err
	}
	s.setSessionCookie(w, in.Token, in.Session.ExpiresAt)
	ok(w, r, http.StatusCreated, "Signed up", userViewOf(in.User))
	return nil
}

func (s identityAPI) login(w http.ResponseWriter, r *http.Request) error {
	if err := s.crossOrigin(r); err != nil {
		return err
	}
	body, _ := io.ReadAll(r.Body)
	email, password, err := decodeCredentials(body, "email", "password")
	if err != nil {
		return err
	}
	// Guessing is throttled per account and address, and slowed per
	// account, without locking the password's holder out (sudo.go).
	ip := s.clientIP(r)
	if err := s.loginGate(r.Context(), w.Header(), email, ip); err != nil {
		return err
	}
	in, err := s.svc.Identity().Login(r.Context(), email, password, s.client(r))
	if err != nil {
		if payment.KindOf(err) == payment.KindUnauthenticated {
			s.loginFailed(r.Context(), email, ip)
		}
		return err
	}
	s.setSessionCookie(w, in.Token, in.Session.ExpiresAt)
	if s.shape == ShapeSecond {
		// Non-browser clients of the second shape send the token back as
		// `Authorization: Bearer svc_st_…`.
		ok(w, r, http.StatusOK, "Signed in", map[string]any{"user": userViewOf(in.User), "token": in.Token,
			"expiresAt": views.Time(in.Session.ExpiresAt)})
		return nil
	}
	ok(w, r, http.StatusOK, "Signed in", userViewOf(in.User))
	return nil
}

func (s identityAPI) logout(w http.ResponseWriter, r *http.Request) error {
	u := currentUser(r)
	if err := s.svc.Identity().Logout(r.Context(), u.user.ID, u.session.ID); err != nil {
		return err
	}
	s.setSessionCookie(w, "", time.Time{})
	ok(w, r, http.StatusOK, "Signed out", map[string]any{})
	return nil
}

type membershipView struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Role string `json:"role"`
}

func membershipViewOf(m payment.Membership) membershipView {
	return membershipView{m.ProjectID, m.ProjectName, string(m.Role)}
}

func (s identityAPI) me(w http.ResponseWriter, r *http.Request) error {
	u := currentUser(r)
	ms, err := s.svc.Checkout().Projects(r.Context(), u.user.ID)
	if err != nil {
		return err
	}
	ok(w, r, http.StatusOK, "Signed in", map[string]any{"user": userViewOf(u.user),
		"session":  map[string]any{"id": u.session.ID, "expiresAt": views.Time(u.session.ExpiresAt)},
		"projects": mapSlice(ms, membershipViewOf), "apiShape": s.shape})
	return nil
}

func (s identityAPI) changePassword(w http.ResponseWriter, r *http.Request) error {
	u := currentUser(r)
	obj, err := bodyOf(r, parseObject)
	if err != nil {
		return err
	}
	var probs payment.Problems
	f := newFields(obj, "", &probs)
	proof := service.Proof{CurrentPassword: f.str("currentPassword")}
	next, cid, cred := f.str("newPassword"), f.str("challengeId"), f.raw("credential")
	f.done()
	if next == nil {
		probs.Add("newPassword", "is required")
	}
	if err := probs.Err(); err != nil {
		return err
	}
	if cid != nil {
		proof.ChallengeID = *cid
	}
	if _, isObj := cred.(map[string]any); isObj {
		proof.Credential, _ = json.Marshal(cred)
	}
	in, err := s.svc.Identity().ChangePassword(r.Context(), u.user.ID, proof, *next, s.client(r))
	if err != nil {
		return err
	}
	s.setSessionCookie(w, in.Token, in.Session.ExpiresAt)
	ok(w, r, http.StatusOK, "Password changed; every other session is signed out and every application you authorized disconnected", userViewOf(in.User))
	return nil
}

type userSessionView struct {
	ID         string `json:"id"`
	CreatedAt  string `json:"createdAt"`
	LastSeenAt string `json:"lastSeenAt"`
	ExpiresAt  string `json:"expiresAt"`
	UserAgent  string `json:"userAgent"`
	IP         string `json:"ip"`
	Current    bool   `json:"current"`
}

func (s identityAPI) listUserSessions(w http.ResponseWriter, r *http.Request) error {
	u := currentUser(r)
	list, err := s.svc.Identity().UserSessions(r.Context(), u.user.ID)
	if err != nil {
		return err
	}
	ok(w, r, http.StatusOK, "Sessions retrieved", mapSlice(list, func(us payment.UserSession) userSessionView {
		return userSessionView{ID: us.ID, CreatedAt: views.Time(us.CreatedAt), LastSeenAt: views.Time(us.LastSeenAt),
			ExpiresAt: views.Time(us.ExpiresAt), UserAgent: us.UserAgent, IP: us.IP, Current: us.ID == u.session.ID}
	}))
	return nil
}

func (s identityAPI) revokeUserSession(w http.ResponseWriter, r *http.Request) error {
	u := currentUser(r)
	id := r.PathValue("userSessionId")
	if err := s.svc.Identity().RevokeUserSession(r.Context(), u.user.ID, id); err != nil {
		return err
	}
	if id == u.session.ID {
		s.setSessionCookie(w, "", time.Time{})
	}
	ok(w, r, http.StatusOK, "Session ended", map[string]any{"id": id})
	return nil
}

func (s identityAPI) revokeOtherSessions(w http.ResponseWriter, r *http.Request) error {
	u := currentUser(r)
	out, err := s.svc.Identity().RevokeOtherSessions(r.Context(), u.user.ID, u.session.ID)
	if err != nil {
		return err
	}
	ok(w, r, http.StatusOK, "Every other session ended, and every application you authorized disconnected",
		map[string]any{"revoked": out.Sessions, "oauthGrantsRevoked": out.OAuthGrants})
	return nil
}

func (s identityAPI) listMyProjects(w http.ResponseWriter, r *http.Request) error {
	return respondList(w, r, "Projects retrieved", membershipViewOf)(s.svc.Checkout().Projects(r.Context(), currentUser(r).user.ID))
}

func (s identityAPI) createMyProject(w http.ResponseWriter, r *http.Request) error {
	in, err := fieldsOf(r, []string{"name"})
	if err != nil {
		return err
	}
	return respond(w, r, http.StatusCreated, "Project created", views.ProjectOf)(s.svc.Checkout().CreateProjectFor(r.Context(), currentUser(r).user.ID, *in["name"]))
}

type apiKeyView struct {
	ID          string  `json:"id"`
	Environment string  `json:"environment"`
	Hint        string  `json:"hint"`
	CreatedAt   string  `json:"createdAt"`
	LastUsedAt  *string `json:"lastUsedAt"`
	ExpiresAt   *string `json:"expiresAt"`
}

func apiKeyViewOf(k payment.APIKeyInfo) apiKeyView {
	env := "sandbox"
	if k.IsLive {
		env = "live"
	}
	return apiKeyView{ID: k.ID, Environment: env, Hint: k.Hint, CreatedAt: views.Time(k.CreatedAt),
		LastUsedAt: views.OptTime(k.LastUsedAt), ExpiresAt: views.OptTime(k.ExpiresAt)}
}

func (s identityAPI) listAPIKeys(w http.ResponseWriter, r *http.Request) error {
	return respondList(w, r, "API keys retrieved", apiKeyViewOf)(s.svc.Access().APIKeys(r.Context(), principal(r), r.PathValue("projectId")))
}

func (s identityAPI) createAPIKey(w http.ResponseWriter, r *http.Request) error {
	k, secret, err := s.svc.Access().CreateAPIKey(r.Context(), principal(r), r.PathValue("projectId"))
	if err != nil {
		return err
	}
	ok(w, r, http.StatusCreated, "API key created; its secret is shown this once", map[string]any{"apiKey": apiKeyViewOf(k), "secret": secret})
	return nil
}

func (s identityAPI) revokeAPIKey(w http.ResponseWriter, r *http.Request) error {
	if err := s.svc.Access().RevokeAPIKey(r.Context(), principal(r), r.PathValue("projectId"), r.PathValue("keyId")); err != nil {
		return err
	}
	ok(w, r, http.StatusOK, "API key revoked", map[string]any{"id": r.PathValue("keyId")})
	return nil
}

func (s identityAPI) rollAPIKey(w http.ResponseWriter, r *http.Request) error {
	body, _ := io.ReadAll(r.Body)
	var grace time.Duration
	if len(strings.TrimSpace(string(body))) > 0 {
		obj, err := parseObject(body)
		if err != nil {
			return err
		}
		var probs payment.Problems
		f := newFields(obj, "", &probs)
		if g := f.integer("gracePeriodSeconds"); g != nil {
			grace = time.Duration(*g) * time.Second
		}
		f.done()
		if err := probs.Err(); err != nil {
			return err
		}
	}
	k, secret, err := s.svc.Access().RollAPIKey(r.Context(), principal(r), r.PathValue("projectId"), r.PathValue("keyId"), grace)
	if err != nil {
		return err
	}
	ok(w, r, http.StatusCreated, "API key rolled; the new secret is shown this once", map[string]any{"apiKey": apiKeyViewOf(k), "secret": secret})
	return nil
}

type passkeyView struct {
	ID         string  `json:"id"`
	Name       string  `json:"name"`
	CreatedAt  string  `json:"createdAt"`
	LastUsedAt *string `json:"lastUsedAt"`
}

func passkeyViewOf(p payment.Passkey) passkeyView {
	return passkeyView{ID: p.ID, Name: p.Name, CreatedAt: views.Time(p.CreatedAt), LastUsedAt: views.OptTime(p.LastUsedAt)}
}

// ceremonyBody reads {challengeId, credential[, name]}: the credential is
// the browser's PublicKeyCredential as JSON (its toJSON()).
func ceremonyBody(body []byte, withName bool) (id, name string, credential []byte, err error) {
	obj, err := parseObject(body)
	if err != nil {
		return "", "", nil, err
	}
	var probs payment.Problems
	f := newFields(obj, "", &probs)
	cid, cred := f.str("challengeId"), f.raw("credential")
	var n *string
	if withName {
		n = f.str("name")
	}
	f.done()
	if cid == nil {
		probs.Add("challengeId", "is required")
	}
	if _, isObj := cred.(map[string]any); !isObj {
		probs.Add("credential", "is required: the PublicKeyCredential, as JSON")
	}
	if withName && n == nil {
		probs.Add("name", "is required")
	}
	if err := probs.Err(); err != nil {
		return "", "", nil, err
	}
	credential, _ = json.Marshal(cred)
	if n != nil {
		name = *n
	}
	return *cid, name, credential, nil
}

func (s identityAPI) beginPasskeyRegistration(w http.ResponseWriter, r *http.Request) error {
	id, options, err := s.svc.Identity().BeginPasskeyRegistration(r.Context(), currentUser(r).user)
	if err != nil {
		return err
	}
	ok(w, r, http.StatusOK, "Pass publicKey to navigator.credentials.create, then post the credential with challengeId",
		map[string]any{"challengeId": id, "publicKey": options})
	return nil
}

func (s identityAPI) finishPasskeyRegistration(w http.ResponseWriter, r *http.Request) error {
	body, _ := io.ReadAll(r.Body)
	id, name, credential, err := ceremonyBody(body, true)
	if err != nil {
		return err
	}
	return respond(w, r, http.StatusCreated, "Passkey added", passkeyViewOf)(s.svc.Identity().FinishPasskeyRegistration(r.Context(), currentUser(r).user, id, name, credential))
}

func (s identityAPI) listPasskeys(w http.ResponseWriter, r *http.Request) error {
	return respondList(w, r, "Passkeys retrieved", passkeyViewOf)(s.svc.Identity().Passkeys(r.Context(), currentUser(r).user.ID))
}

func (s identityAPI) renamePasskey(w http.ResponseWriter, r *http.Request) error {
	in, err := fieldsOf(r, nil, "name")
	if err != nil {
		return err
	}
	name := ""
	if in["name"] != nil {
		name = *in["name"]
	}
	if err := s.svc.Identity().RenamePasskey(r.Context(), currentUser(r).user.ID, r.PathValue("passkeyId"), name); err != nil {
		return err
	}
	ok(w, r, http.StatusOK, "Passkey renamed", map[string]any{"id": r.PathValue("passkeyId"), "name": strings.TrimSpace(name)})
	return nil
}

func (s identityAPI) deletePasskey(w http.ResponseWriter, r *http.Request) error {
	if err := s.svc.Identity().DeletePasskey(r.Context(), currentUser(r).user.ID, r.PathValue("passkeyId")); err != nil {
		return err
	}
	ok(w, r, http.StatusOK, "Passkey deleted", map[string]any{"id": r.PathValue("passkeyId")})
	return nil
}

func (s identityAPI) beginPasskeyLogin(w http.ResponseWriter, r *http.Request) error {
	if err := s.crossOrigin(r); err != nil {
		return err
	}
	id, options, err := s.svc.Identity().BeginPasskeyLogin(r.Context())
	if err != nil {
		return err
	}
	ok(w, r, http.StatusOK, "Pass publicKey to navigator.credentials.get, then post the credential with challengeId",
		map[string]any{"challengeId": id, "publicKey": options})
	return nil
}

func (s identityAPI) passkeyLogin(w http.ResponseWriter, r *http.Request) error {
	if err := s.crossOrigin(r); err != nil {
		return err
	}
	body, _ := io.ReadAll(r.Body)
	id, _, credential, err := ceremonyBody(body, false)
	if err != nil {
		return err
	}
	in, err := s.svc.Identity().FinishPasskeyLogin(r.Context(), id, credential, s.client(r))
	if err != nil {
		return err
	}
	s.setSessionCookie(w, in.Token, in.Session.ExpiresAt)
	ok(w, r, http.StatusOK, "Signed in", userViewOf(in.User))
	return nil
}
