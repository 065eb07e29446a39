package identity

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/api/internal/rest"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/payment/views"
	"github.com/paymentsd/paymentsd/service"
)

func (s Handlers) setSessionCookie(w http.ResponseWriter, token string, expires time.Time) {
	c := &http.Cookie{Name: rest.SessionCookie, Value: token, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode,
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
	in, err := rest.BodyFields(body, []string{emailField, passwordField})
	if err != nil {
		return "", "", err
	}
	return *in[emailField], *in[passwordField], nil
}

func (s Handlers) client(r *http.Request) service.Client {
	return service.Client{UserAgent: r.UserAgent(), IP: s.ClientAddress(r)}
}

func (s Handlers) Signup(w http.ResponseWriter, r *http.Request) error {
	if err := s.CrossOrigin(r); err != nil {
		return err
	}
	if s.SignupDisabled {
		return &payment.Error{Kind: payment.KindForbidden, Message: "Sign-up is switched off on this deployment: ask its operator for an account"}
	}
	fields, err := rest.FieldsOf(r, []string{"email"}, "password")
	if err != nil {
		return err
	}
	var in service.SignedIn
	if fields["password"] == nil {
		// No password: the account signs in with the passkeys it adds.
		in, err = s.Svc.Identity().SignupWithoutPassword(r.Context(), *fields["email"], s.client(r))
	} else {
		in, err = s.Svc.Identity().Signup(r.Context(), *fields["email"], *fields["password"], s.client(r))
	}
	if err != nil {
		return err
	}
	s.setSessionCookie(w, in.Token, in.Session.ExpiresAt)
	rest.OK(w, r, http.StatusCreated, "Signed up", userViewOf(in.User))
	return nil
}

func (s Handlers) Login(w http.ResponseWriter, r *http.Request) error {
	if err := s.CrossOrigin(r); err != nil {
		return err
	}
	body, _ := io.ReadAll(r.Body)
	email, password, err := decodeCredentials(body, "email", "password")
	if err != nil {
		return err
	}
	// Guessing is throttled per account and address, and slowed per
	// account, without locking the password's holder out (sudo.go).
	ip := s.ClientIP(r)
	if err := s.loginGate(r.Context(), w.Header(), email, ip); err != nil {
		return err
	}
	in, err := s.Svc.Identity().Login(r.Context(), email, password, s.client(r))
	if err != nil {
		if payment.KindOf(err) == payment.KindUnauthenticated {
			s.loginFailed(r.Context(), email, ip)
		}
		return err
	}
	s.setSessionCookie(w, in.Token, in.Session.ExpiresAt)
	if s.Shape == views.ShapeSecond {
		// Non-browser clients of the second shape send the token back as
		// `Authorization: Bearer svc_st_…`.
		rest.OK(w, r, http.StatusOK, "Signed in", map[string]any{"user": userViewOf(in.User), "token": in.Token,
			"expiresAt": views.Time(in.Session.ExpiresAt)})
		return nil
	}
	rest.OK(w, r, http.StatusOK, "Signed in", userViewOf(in.User))
	return nil
}

func (s Handlers) Logout(w http.ResponseWriter, r *http.Request) error {
	u := rest.CurrentUser(r)
	if err := s.Svc.Identity().Logout(r.Context(), u.User.ID, u.Session.ID); err != nil {
		return err
	}
	s.setSessionCookie(w, "", time.Time{})
	rest.OK(w, r, http.StatusOK, "Signed out", map[string]any{})
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

func (s Handlers) Me(w http.ResponseWriter, r *http.Request) error {
	u := rest.CurrentUser(r)
	ms, err := s.Svc.Checkout().Projects(r.Context(), u.User.ID)
	if err != nil {
		return err
	}
	rest.OK(w, r, http.StatusOK, "Signed in", map[string]any{"user": userViewOf(u.User),
		"session":  map[string]any{"id": u.Session.ID, "expiresAt": views.Time(u.Session.ExpiresAt)},
		"projects": rest.MapSlice(ms, membershipViewOf), "apiShape": s.Shape})
	return nil
}

func (s Handlers) ChangePassword(w http.ResponseWriter, r *http.Request) error {
	u := rest.CurrentUser(r)
	obj, err := rest.BodyOf(r, rest.ParseObject)
	if err != nil {
		return err
	}
	var probs payment.Problems
	f := rest.NewFields(obj, "", &probs)
	proof := service.Proof{CurrentPassword: f.Str("currentPassword")}
	next, cid, cred := f.Str("newPassword"), f.Str("challengeId"), f.Raw("credential")
	f.Done()
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
	in, err := s.Svc.Identity().ChangePassword(r.Context(), u.User.ID, proof, *next, s.client(r))
	if err != nil {
		return err
	}
	s.setSessionCookie(w, in.Token, in.Session.ExpiresAt)
	rest.OK(w, r, http.StatusOK, "Password changed; every other session is signed out and every application you authorized disconnected", userViewOf(in.User))
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

func (s Handlers) ListUserSessions(w http.ResponseWriter, r *http.Request) error {
	u := rest.CurrentUser(r)
	list, err := s.Svc.Identity().UserSessions(r.Context(), u.User.ID)
	if err != nil {
		return err
	}
	rest.OK(w, r, http.StatusOK, "Sessions retrieved", rest.MapSlice(list, func(us payment.UserSession) userSessionView {
		return userSessionView{ID: us.ID, CreatedAt: views.Time(us.CreatedAt), LastSeenAt: views.Time(us.LastSeenAt),
			ExpiresAt: views.Time(us.ExpiresAt), UserAgent: us.UserAgent, IP: us.IP, Current: us.ID == u.Session.ID}
	}))
	return nil
}

func (s Handlers) RevokeUserSession(w http.ResponseWriter, r *http.Request) error {
	u := rest.CurrentUser(r)
	id := r.PathValue("userSessionId")
	if err := s.Svc.Identity().RevokeUserSession(r.Context(), u.User.ID, id); err != nil {
		return err
	}
	if id == u.Session.ID {
		s.setSessionCookie(w, "", time.Time{})
	}
	rest.OK(w, r, http.StatusOK, "Session ended", map[string]any{"id": id})
	return nil
}

func (s Handlers) RevokeOtherSessions(w http.ResponseWriter, r *http.Request) error {
	u := rest.CurrentUser(r)
	out, err := s.Svc.Identity().RevokeOtherSessions(r.Context(), u.User.ID, u.Session.ID)
	if err != nil {
		return err
	}
	rest.OK(w, r, http.StatusOK, "Every other session ended, and every application you authorized disconnected",
		map[string]any{"revoked": out.Sessions, "oauthGrantsRevoked": out.OAuthGrants})
	return nil
}

func (s Handlers) ListMyProjects(w http.ResponseWriter, r *http.Request) error {
	return rest.RespondList(w, r, "Projects retrieved", membershipViewOf)(s.Svc.Checkout().Projects(r.Context(), rest.CurrentUser(r).User.ID))
}

func (s Handlers) CreateMyProject(w http.ResponseWriter, r *http.Request) error {
	in, err := rest.FieldsOf(r, []string{"name"})
	if err != nil {
		return err
	}
	return rest.Respond(w, r, http.StatusCreated, "Project created", views.ProjectOf)(s.Svc.Checkout().CreateProjectFor(r.Context(), rest.CurrentUser(r).User.ID, *in["name"]))
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

func (s Handlers) ListAPIKeys(w http.ResponseWriter, r *http.Request) error {
	return rest.RespondList(w, r, "API keys retrieved", apiKeyViewOf)(s.Svc.Access().APIKeys(r.Context(), rest.Principal(r), r.PathValue("projectId")))
}

func (s Handlers) CreateAPIKey(w http.ResponseWriter, r *http.Request) error {
	k, secret, err := s.Svc.Access().CreateAPIKey(r.Context(), rest.Principal(r), r.PathValue("projectId"))
	if err != nil {
		return err
	}
	rest.OK(w, r, http.StatusCreated, "API key created; its secret is shown this once", map[string]any{"apiKey": apiKeyViewOf(k), "secret": secret})
	return nil
}

func (s Handlers) RevokeAPIKey(w http.ResponseWriter, r *http.Request) error {
	if err := s.Svc.Access().RevokeAPIKey(r.Context(), rest.Principal(r), r.PathValue("projectId"), r.PathValue("keyId")); err != nil {
		return err
	}
	rest.OK(w, r, http.StatusOK, "API key revoked", map[string]any{"id": r.PathValue("keyId")})
	return nil
}

func (s Handlers) RollAPIKey(w http.ResponseWriter, r *http.Request) error {
	body, _ := io.ReadAll(r.Body)
	var grace time.Duration
	if len(strings.TrimSpace(string(body))) > 0 {
		obj, err := rest.ParseObject(body)
		if err != nil {
			return err
		}
		var probs payment.Problems
		f := rest.NewFields(obj, "", &probs)
		if g := f.Integer("gracePeriodSeconds"); g != nil {
			grace = time.Duration(*g) * time.Second
		}
		f.Done()
		if err := probs.Err(); err != nil {
			return err
		}
	}
	k, secret, err := s.Svc.Access().RollAPIKey(r.Context(), rest.Principal(r), r.PathValue("projectId"), r.PathValue("keyId"), grace)
	if err != nil {
		return err
	}
	rest.OK(w, r, http.StatusCreated, "API key rolled; the new secret is shown this once", map[string]any{"apiKey": apiKeyViewOf(k), "secret": secret})
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
	obj, err := rest.ParseObject(body)
	if err != nil {
		return "", "", nil, err
	}
	var probs payment.Problems
	f := rest.NewFields(obj, "", &probs)
	cid, cred := f.Str("challengeId"), f.Raw("credential")
	var n *string
	if withName {
		n = f.Str("name")
	}
	f.Done()
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

func (s Handlers) BeginPasskeyRegistration(w http.ResponseWriter, r *http.Request) error {
	id, options, err := s.Svc.Identity().BeginPasskeyRegistration(r.Context(), rest.CurrentUser(r).User)
	if err != nil {
		return err
	}
	rest.OK(w, r, http.StatusOK, "Pass publicKey to navigator.credentials.create, then post the credential with challengeId",
		map[string]any{"challengeId": id, "publicKey": options})
	return nil
}

func (s Handlers) FinishPasskeyRegistration(w http.ResponseWriter, r *http.Request) error {
	body, _ := io.ReadAll(r.Body)
	id, name, credential, err := ceremonyBody(body, true)
	if err != nil {
		return err
	}
	return rest.Respond(w, r, http.StatusCreated, "Passkey added", passkeyViewOf)(s.Svc.Identity().FinishPasskeyRegistration(r.Context(), rest.CurrentUser(r).User, id, name, credential))
}

func (s Handlers) ListPasskeys(w http.ResponseWriter, r *http.Request) error {
	return rest.RespondList(w, r, "Passkeys retrieved", passkeyViewOf)(s.Svc.Identity().Passkeys(r.Context(), rest.CurrentUser(r).User.ID))
}

func (s Handlers) RenamePasskey(w http.ResponseWriter, r *http.Request) error {
	in, err := rest.FieldsOf(r, nil, "name")
	if err != nil {
		return err
	}
	name := ""
	if in["name"] != nil {
		name = *in["name"]
	}
	if err := s.Svc.Identity().RenamePasskey(r.Context(), rest.CurrentUser(r).User.ID, r.PathValue("passkeyId"), name); err != nil {
		return err
	}
	rest.OK(w, r, http.StatusOK, "Passkey renamed", map[string]any{"id": r.PathValue("passkeyId"), "name": strings.TrimSpace(name)})
	return nil
}

func (s Handlers) DeletePasskey(w http.ResponseWriter, r *http.Request) error {
	if err := s.Svc.Identity().DeletePasskey(r.Context(), rest.CurrentUser(r).User.ID, r.PathValue("passkeyId")); err != nil {
		return err
	}
	rest.OK(w, r, http.StatusOK, "Passkey deleted", map[string]any{"id": r.PathValue("passkeyId")})
	return nil
}

func (s Handlers) BeginPasskeyLogin(w http.ResponseWriter, r *http.Request) error {
	if err := s.CrossOrigin(r); err != nil {
		return err
	}
	id, options, err := s.Svc.Identity().BeginPasskeyLogin(r.Context())
	if err != nil {
		return err
	}
	rest.OK(w, r, http.StatusOK, "Pass publicKey to navigator.credentials.get, then post the credential with challengeId",
		map[string]any{"challengeId": id, "publicKey": options})
	return nil
}

func (s Handlers) PasskeyLogin(w http.ResponseWriter, r *http.Request) error {
	if err := s.CrossOrigin(r); err != nil {
		return err
	}
	body, _ := io.ReadAll(r.Body)
	id, _, credential, err := ceremonyBody(body, false)
	if err != nil {
		return err
	}
	in, err := s.Svc.Identity().FinishPasskeyLogin(r.Context(), id, credential, s.client(r))
	if err != nil {
		return err
	}
	s.setSessionCookie(w, in.Token, in.Session.ExpiresAt)
	rest.OK(w, r, http.StatusOK, "Signed in", userViewOf(in.User))
	return nil
}
