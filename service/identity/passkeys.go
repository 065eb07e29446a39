package identity

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store"
)

// ChallengeLifetime is how long a passkey ceremony's challenge can be
// answered; each is answered once.
const ChallengeLifetime = 5 * time.Minute

// ErrBadPasskey is every refused passkey sign-in.
var ErrBadPasskey = &payment.Error{Kind: payment.KindUnauthenticated, Message: "The passkey was not accepted"}

// SetRelyingParty makes the deployment a WebAuthn relying party at its
// public URL: the relying party's ID is the URL's host, the only origin
// accepted its scheme and host.
func (svc Service) SetRelyingParty(publicURL string) error {
	u, err := url.Parse(publicURL)
	if err != nil || u.Hostname() == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return fmt.Errorf("passkeys: the public URL %q has no host", publicURL)
	}
	w, err := webauthn.New(&webauthn.Config{RPID: u.Hostname(), RPDisplayName: "paymentsd", RPOrigins: []string{u.Scheme + "://" + u.Host}})
	if err != nil {
		return fmt.Errorf("passkeys: %w", err)
	}
	svc.WebAuthn = w
	return nil
}

// passkeyUser is a user as go-webauthn sees one.
type passkeyUser struct {
	u      payment.User
	handle []byte
	creds  []webauthn.Credential
}

func (p passkeyUser) WebAuthnID() []byte                         { return p.handle }
func (p passkeyUser) WebAuthnName() string                       { return p.u.Email }
func (p passkeyUser) WebAuthnDisplayName() string                { return p.u.Email }
func (p passkeyUser) WebAuthnCredentials() []webauthn.Credential { return p.creds }

func (svc Service) passkeyUser(ctx context.Context, u payment.User) (passkeyUser, []store.StoredPasskey, error) {
	fresh := make([]byte, 32)
	if _, err := rand.Read(fresh); err != nil {
		return passkeyUser{}, nil, err
	}
	handle, err := svc.Store.Identity().WebAuthnHandle(ctx, u.ID, fresh)
	if err != nil {
		return passkeyUser{}, nil, err
	}
	stored, err := svc.Store.Identity().Passkeys(ctx, u.ID)
	if err != nil {
		return passkeyUser{}, nil, err
	}
	pu := passkeyUser{u: u, handle: handle}
	for _, p := range stored {
		var c webauthn.Credential
		if err := json.Unmarshal(p.Credential, &c); err != nil {
			return pu, nil, fmt.Errorf("passkey %s: %w", p.ID, err)
		}
		c.Authenticator.CloneWarning = false // set by this answer's check, never carried over
		pu.creds = append(pu.creds, c)
	}
	return pu, stored, nil
}

func (svc Service) passkeysOn() error {
	if svc.WebAuthn == nil {
		return &payment.Error{Kind: payment.KindUnavailable, Message: "Passkeys are not configured on this deployment (PUBLIC_URL)"}
	}
	return nil
}

func (svc Service) saveChallenge(ctx context.Context, kind, userID string, session *webauthn.SessionData) (string, error) {
	now := svc.Now()
	b, err := json.Marshal(session)
	if err != nil {
		return "", err
	}
	id := payment.NewID(payment.PrefixChallenge, now)
	return id, svc.Store.Identity().CreateChallenge(ctx, id, kind, userID, b, now.Add(ChallengeLifetime))
}

func (svc Service) takeChallenge(ctx context.Context, id, kind, userID string) (webauthn.SessionData, error) {
	var session webauthn.SessionData
	raw, err := svc.Store.Identity().TakeChallenge(ctx, id, kind, userID, svc.Now())
	if errors.Is(err, payment.ErrNotFound) {
		var probs payment.Problems
		probs.Add("challengeId", "is unknown, used or expired: begin again")
		return session, probs.Err()
	} else if err != nil {
		return session, err
	}
	return session, json.Unmarshal(raw, &session)
}

// BeginPasskeyRegistration starts adding a passkey to a signed-in user:
// the options for navigator.credentials.create and the challenge's ID.
// The passkey is discoverable (it signs in without an email typed) and
// verifies its user; the user's passkeys are excluded.
func (svc Service) BeginPasskeyRegistration(ctx context.Context, u payment.User) (string, any, error) {
	if err := svc.passkeysOn(); err != nil {
		return "", nil, err
	}
	pu, _, err := svc.passkeyUser(ctx, u)
	if err != nil {
		return "", nil, err
	}
	creation, session, err := svc.WebAuthn.BeginRegistration(pu,
		webauthn.WithResidentKeyRequirement(protocol.ResidentKeyRequirementRequired),
		webauthn.WithAuthenticatorSelection(protocol.AuthenticatorSelection{ResidentKey: protocol.ResidentKeyRequirementRequired,
			RequireResidentKey: protocol.ResidentKeyRequired(), UserVerification: protocol.VerificationRequired}),
		webauthn.WithExclusions(webauthn.Credentials(pu.creds).CredentialDescriptors()))
	if err != nil {
		return "", nil, err
	}
	id, err := svc.saveChallenge(ctx, "registration", u.ID, session)
	return id, creation.Response, err
}

// FinishPasskeyRegistration verifies the authenticator's answer to a
// registration challenge of the user and records the passkey.
func (svc Service) FinishPasskeyRegistration(ctx context.Context, u payment.User, challengeID, name string, credential []byte) (payment.Passkey, error) {
	if err := svc.passkeysOn(); err != nil {
		return payment.Passkey{}, err
	}
	name = strings.TrimSpace(name)
	if name == "" || utf8.RuneCountInString(name) > 100 {
		var probs payment.Problems
		probs.Add("name", "must be 1 to 100 characters")
		return payment.Passkey{}, probs.Err()
	}
	session, err := svc.takeChallenge(ctx, challengeID, "registration", u.ID)
	if err != nil {
		return payment.Passkey{}, err
	}
	pu, _, err := svc.passkeyUser(ctx, u)
	if err != nil {
		return payment.Passkey{}, err
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(credential)
	if err == nil {
		var cred *webauthn.Credential
		if cred, err = svc.WebAuthn.CreateCredential(pu, session, parsed); err == nil {
			now := svc.Now()
			b, _ := json.Marshal(cred)
			p := store.StoredPasskey{Passkey: payment.Passkey{ID: payment.NewID(payment.PrefixPasskey, now), UserID: u.ID, Name: name, CreatedAt: now},
				Credential: b}
			if err := svc.Store.InTx(ctx, func(ctx context.Context) error {
				if err := svc.Store.Identity().InsertPasskey(ctx, p, cred.ID); err != nil {
					return err
				}
				return svc.accountEvent(ctx, u.ID, "", payment.AccountPasskeyAdded, Client{}, map[string]any{"passkeyId": p.ID, "name": name})
			}); err != nil {
				return payment.Passkey{}, err
			}
			return p.Passkey, nil
		}
	}
	var probs payment.Problems
	probs.Add("credential", "was not accepted: "+webauthnReason(err))
	return payment.Passkey{}, probs.Err()
}

func webauthnReason(err error) string {
	var pe *protocol.Error
	if errors.As(err, &pe) && pe.Details != "" {
		return pe.Details
	}
	return err.Error()
}

// BeginPasskeyLogin starts a sign-in with a discoverable passkey: no
// email is asked; the authenticator offers the user's passkeys.
func (svc Service) BeginPasskeyLogin(ctx context.Context) (string, any, error) {
	if err := svc.passkeysOn(); err != nil {
		return "", nil, err
	}
	assertion, session, err := svc.WebAuthn.BeginDiscoverableLogin(webauthn.WithUserVerification(protocol.VerificationRequired))
	if err != nil {
		return "", nil, err
	}
	id, err := svc.saveChallenge(ctx, "login", "", session)
	return id, assertion.Response, err
}

// ErrClonedPasskey refuses a passkey whose signature counter went
// backwards (or stood still): two copies of its key may exist.
var ErrClonedPasskey = &payment.Error{Kind: payment.KindUnauthenticated, Message: "This passkey was refused: its signature counter " +
	"went backwards, a sign that it may have been copied. Sign in with your password or another passkey, " +
	"then remove this passkey from your account and add a new one"}

// refuseClone records, in the account's security log, a passkey refused
// for a signature counter that went backwards.
func (svc Service) refuseClone(ctx context.Context, userID string, credentialID []byte, c Client) error {
	id := ""
	if stored, err := svc.Store.Identity().Passkeys(ctx, userID); err == nil {
		for _, p := range stored {
			var sc webauthn.Credential
			if json.Unmarshal(p.Credential, &sc) == nil && string(sc.ID) == string(credentialID) {
				id = p.ID
			}
		}
	}
	if err := svc.accountEvent(context.WithoutCancel(ctx), userID, "", payment.AccountPasskeyCloneRefused, c,
		map[string]any{"passkeyId": id}); err != nil {
		return err
	}
	return ErrClonedPasskey
}

// FinishPasskeyLogin verifies the authenticator's answer to a login
// challenge and signs its user in. Every refusal is ErrBadPasskey.
func (svc Service) FinishPasskeyLogin(ctx context.Context, challengeID string, credential []byte, c Client) (SignedIn, error) {
	if err := svc.passkeysOn(); err != nil {
		return SignedIn{}, err
	}
	session, err := svc.takeChallenge(ctx, challengeID, "login", "")
	if err != nil {
		return SignedIn{}, err
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes(credential)
	if err != nil {
		return SignedIn{}, ErrBadPasskey
	}
	found, cred, err := svc.WebAuthn.ValidatePasskeyLogin(func(rawID, handle []byte) (webauthn.User, error) {
		u, err := svc.Store.Identity().UserByWebAuthnHandle(ctx, handle)
		if err != nil {
			return nil, err
		}
		pu, _, err := svc.passkeyUser(ctx, u)
		return pu, err
	}, session, parsed)
	if err != nil {
		return SignedIn{}, ErrBadPasskey
	}
	if cred.Authenticator.CloneWarning {
		return SignedIn{}, svc.refuseClone(ctx, found.(passkeyUser).u.ID, cred.ID, c)
	}
	b, _ := json.Marshal(cred)
	if err := svc.Store.Identity().PasskeyUsed(ctx, cred.ID, b, svc.Now()); err != nil {
		return SignedIn{}, err
	}
	return svc.startSession(ctx, found.(passkeyUser).u, c)
}

// checkPasskeyOf verifies a login challenge's answer by one of u's
// passkeys: a fresh assertion, for a password change.
func (svc Service) checkPasskeyOf(ctx context.Context, u payment.User, challengeID string, credential []byte) error {
	if err := svc.passkeysOn(); err != nil {
		return err
	}
	session, err := svc.takeChallenge(ctx, challengeID, "login", "")
	if err != nil {
		return err
	}
	refused := func() error {
		var probs payment.Problems
		probs.Add("credential", "is not an answer of one of this account's passkeys")
		return probs.Err()
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes(credential)
	if err != nil {
		return refused()
	}
	found, cred, err := svc.WebAuthn.ValidatePasskeyLogin(func(rawID, handle []byte) (webauthn.User, error) {
		owner, err := svc.Store.Identity().UserByWebAuthnHandle(ctx, handle)
		if err != nil {
			return nil, err
		}
		pu, _, err := svc.passkeyUser(ctx, owner)
		return pu, err
	}, session, parsed)
	if err != nil || found.(passkeyUser).u.ID != u.ID {
		return refused()
	}
	if cred.Authenticator.CloneWarning {
		return svc.refuseClone(ctx, u.ID, cred.ID, Client{})
	}
	b, _ := json.Marshal(cred)
	return svc.Store.Identity().PasskeyUsed(ctx, cred.ID, b, svc.Now())
}

// Passkeys lists the user's passkeys.
func (svc Service) Passkeys(ctx context.Context, userID string) ([]payment.Passkey, error) {
	stored, err := svc.Store.Identity().Passkeys(ctx, userID)
	out := make([]payment.Passkey, len(stored))
	for i, p := range stored {
		out[i] = p.Passkey
	}
	return out, err
}

// RenamePasskey renames one of the user's passkeys.
func (svc Service) RenamePasskey(ctx context.Context, userID, id, name string) error {
	if !payment.ValidID(payment.PrefixPasskey, id) {
		return payment.NotFound("Passkey")
	}
	// Another's passkey does not exist, whatever the body says.
	mine, err := svc.Store.Identity().Passkeys(ctx, userID)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(mine, func(p store.StoredPasskey) bool { return p.ID == id }) {
		return payment.NotFound("Passkey")
	}
	name = strings.TrimSpace(name)
	if name == "" || utf8.RuneCountInString(name) > 100 {
		var probs payment.Problems
		probs.Add("name", "must be 1 to 100 characters")
		return probs.Err()
	}
	if err := svc.Store.Identity().RenamePasskey(ctx, userID, id, name); errors.Is(err, payment.ErrNotFound) {
		return payment.NotFound("Passkey")
	} else {
		return err
	}
}

// DeletePasskey deletes one of the user's passkeys.
func (svc Service) DeletePasskey(ctx context.Context, userID, id string) error {
	if !payment.ValidID(payment.PrefixPasskey, id) {
		return payment.NotFound("Passkey")
	}
	err := svc.Store.InTx(ctx, func(ctx context.Context) error {
		if err := svc.Store.Identity().DeletePasskey(ctx, userID, id); err != nil {
			return err
		}
		return svc.accountEvent(ctx, userID, "", payment.AccountPasskeyRemoved, Client{}, map[string]any{"passkeyId": id})
	})
	if errors.Is(err, payment.ErrNotFound) {
		return payment.NotFound("Passkey")
	}
	return err
}
