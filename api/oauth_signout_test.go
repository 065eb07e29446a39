package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"golang.org/x/oauth2"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service"
)

// refresh uses a refresh token once.
func (a testApp) refresh(refreshToken string) (*oauth2.Token, error) {
	return a.conf.TokenSource(context.Background(), &oauth2.Token{RefreshToken: refreshToken}).Token()
}

func oauthErrorCode(err error) string {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		return re.ErrorCode
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

// An application the owner authorized (the code flow with PKCE, through
// the consent page's API) loses its access when the owner signs out
// everywhere, and when the owner changes the password: its refresh
// token, its access token and a code not yet exchanged stop working, and
// the grant is revoked in the store with the reason, in the project's
// audit log.
func TestSigningOutEverywhereAndPasswordChangeEndTheApplicationsAccess(t *testing.T) {
	for _, c := range []struct {
		name, reason string
		end          func(t *testing.T, w sudoWorld, owner credential) reply
	}{
		{"sign out everywhere", service.GrantsEndSignedOutEverywhere, func(t *testing.T, w sudoWorld, owner credential) reply {
			return w.call(t, owner, http.MethodPost, "/api/v1/auth/sessions/revoke-others", nil)
		}},
		{"password change", service.GrantsEndPasswordChanged, func(t *testing.T, w sudoWorld, owner credential) reply {
			return w.call(t, owner, http.MethodPost, "/api/v1/auth/password",
				map[string]any{"currentPassword": w.password, "newPassword": "another long password"})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			w := newSudoWorld(t)
			owner := w.signIn(t)
			app := w.registerApp(t, owner, "webhooks:read", "plans:read")
			allow := map[string]any{"decision": "allow", "projectId": w.project.ID, "environment": "sandbox"}

			// Authorized from another browser: tokens, refreshed once
			// (the refresh token rotates).
			elsewhere := w.signIn(t)
			authURL, verifier := app.authURL()
			a := w.consent(t, elsewhere, authURL, allow)
			if a.status != http.StatusOK {
				t.Fatalf("consent: %d %s", a.status, a.raw)
			}
			first, err := app.exchange(t, str(a.data["redirectTo"]), verifier)
			if err != nil {
				t.Fatal(err)
			}
			tok, err := app.refresh(first.RefreshToken)
			if err != nil || tok.RefreshToken == first.RefreshToken {
				t.Fatalf("refresh before: %v (rotated: %v)", err, tok != nil && tok.RefreshToken != first.RefreshToken)
			}
			hooks := "/api/v1/projects/" + w.project.ID + "/webhooks"
			if a := w.call(t, credential{bearer: tok.AccessToken}, http.MethodGet, hooks, nil); a.status != http.StatusOK {
				t.Fatalf("the access token before: %d %s", a.status, a.raw)
			}
			// A second authorization whose code is not exchanged yet.
			pendingURL, pendingVerifier := app.authURL()
			pending := w.consent(t, elsewhere, pendingURL, allow)
			if pending.status != http.StatusOK {
				t.Fatalf("second consent: %d %s", pending.status, pending.raw)
			}

			ended := c.end(t, w, owner)
			if ended.status != http.StatusOK {
				t.Fatalf("%s: %d %s", c.name, ended.status, ended.raw)
			}

			// The access token first: a refresh retires it.
			if a := w.call(t, credential{bearer: tok.AccessToken}, http.MethodGet, hooks, nil); a.status != http.StatusUnauthorized {
				t.Errorf("the access token after %s: %d %s; want 401", c.name, a.status, a.raw)
			}
			if _, err := app.refresh(tok.RefreshToken); oauthErrorCode(err) != "invalid_grant" {
				t.Errorf("the refresh token after %s: %v; want invalid_grant", c.name, err)
			}
			if _, err := app.exchange(t, str(pending.data["redirectTo"]), pendingVerifier); oauthErrorCode(err) != "invalid_grant" {
				t.Errorf("a code issued before %s, exchanged after: %v; want invalid_grant", c.name, err)
			}
			if c.reason == service.GrantsEndSignedOutEverywhere {
				if n, _ := ended.data["oauthGrantsRevoked"].(float64); n != 1 {
					t.Errorf("sign out everywhere reports %v grants ended; want 1: %s", ended.data["oauthGrantsRevoked"], ended.raw)
				}
			}
			if t.Failed() {
				t.FailNow()
			}

			// Revoked in the store, with the reason; every token inactive
			// or gone; the end in the project's audit log.
			var revokedReason *string
			if err := w.st.Pool().QueryRow(ctx, `SELECT revoked_reason FROM oauth_grants WHERE client_id = $1`, app.conf.ClientID).
				Scan(&revokedReason); err != nil {
				t.Fatal(err)
			}
			if revokedReason == nil || *revokedReason != c.reason {
				t.Fatalf("the grant's revoked_reason: %v; want %s", revokedReason, c.reason)
			}
			var active int
			if err := w.st.Pool().QueryRow(ctx, `SELECT count(*) FROM oauth_tokens WHERE client_id = $1 AND active
				AND kind IN ('authorize_code', 'access_token', 'refresh_token')`, app.conf.ClientID).Scan(&active); err != nil {
				t.Fatal(err)
			}
			if active != 0 {
				t.Fatalf("%d codes or tokens still active after %s", active, c.name)
			}
			var audited int
			if err := w.st.Pool().QueryRow(ctx, `SELECT count(*) FROM audit_log WHERE project_id = $1 AND action = $2
				AND details->>'reason' = $3`, w.project.ID, payment.AuditOAuthGrantRevoked, c.reason).Scan(&audited); err != nil {
				t.Fatal(err)
			}
			if audited != 1 {
				t.Fatalf("%d audit entries of the grant's end; want 1", audited)
			}
			// The user's list of authorized applications is empty.
			fresh := owner
			if c.reason == service.GrantsEndPasswordChanged {
				fresh = credential{cookie: cookieOf(t, w, "another long password")}
			}
			var list struct{ Data []any }
			_ = json.Unmarshal([]byte(w.call(t, fresh, http.MethodGet, "/api/v1/auth/oauth-grants", nil).raw), &list)
			if len(list.Data) != 0 {
				t.Fatalf("authorized applications after %s: %v", c.name, list.Data)
			}

			// Authorized again afterwards, the application works: only
			// what came before ended.
			again, againVerifier := app.authURL()
			a = w.consent(t, fresh, again, allow)
			if a.status != http.StatusOK {
				t.Fatalf("consent afterwards: %d %s", a.status, a.raw)
			}
			if tok, err := app.exchange(t, str(a.data["redirectTo"]), againVerifier); err != nil {
				t.Fatalf("exchange afterwards: %v", err)
			} else if _, err := app.refresh(tok.RefreshToken); err != nil {
				t.Fatalf("refresh afterwards: %v", err)
			}
		})
	}
}

// cookieOf signs the owner in with password.
func cookieOf(t *testing.T, w sudoWorld, password string) string {
	t.Helper()
	w.password = password
	return w.signIn(t).cookie
}

// A consent whose session has ended meanwhile (a password change or a
// sign-out everywhere committed after the request was let in) issues no
// code.
func TestConsentOfAnEndedSessionIssuesNothing(t *testing.T) {
	ctx := context.Background()
	w := newSudoWorld(t)
	in, err := w.svc.Identity().Login(ctx, w.email, w.password, service.Client{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := w.svc.Access().MemberPrincipal(ctx, in.User, in.Session, w.project.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.svc.Identity().RevokeOtherSessions(ctx, in.User.ID, ""); err != nil {
		t.Fatal(err)
	}
	issued := false
	err = w.svc.Access().ConsentOAuth(ctx, p, "grant_never", "oauthc_none", []string{"plans:read"}, func(context.Context) error {
		issued = true
		return nil
	})
	if !errors.Is(err, payment.ErrUnauthorized) || issued {
		t.Fatalf("consent of an ended session: %v (issued: %v); want unauthorized, nothing issued", err, issued)
	}
}
