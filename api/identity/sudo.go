package identity

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/paymentsd/paymentsd/api/internal/rest"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/payment/views"
	"github.com/paymentsd/paymentsd/service"
)

// Reauthenticate takes {password} or a passkey's answer to a sign-in
// challenge {challengeId, credential}; the session counts as freshly
// signed in. Wrong passwords spend the account's budget from this address
// as failed sign-ins do.
func (s Handlers) Reauthenticate(w http.ResponseWriter, r *http.Request) error {
	u := rest.CurrentUser(r)
	obj, err := rest.BodyOf(r, rest.ParseObject)
	if err != nil {
		return err
	}
	var probs payment.Problems
	f := rest.NewFields(obj, "", &probs)
	proof := service.Proof{CurrentPassword: f.Str("password")}
	cid, cred := f.Str("challengeId"), f.Raw("credential")
	f.Done()
	if err := probs.Err(); err != nil {
		return err
	}
	if cid != nil {
		proof.ChallengeID = *cid
	}
	if _, isObj := cred.(map[string]any); isObj {
		proof.Credential, _ = json.Marshal(cred)
	}
	ip := s.ClientIP(r)
	if proof.CurrentPassword != nil {
		if err := s.loginGate(r.Context(), w.Header(), u.User.Email, ip); err != nil {
			return err
		}
	}
	if err := s.Svc.Identity().Reauthenticate(r.Context(), u.User, u.Session, proof); err != nil {
		if proof.CurrentPassword != nil && payment.KindOf(err) == payment.KindValidation {
			s.loginFailed(r.Context(), u.User.Email, ip)
		}
		return err
	}
	until := time.Now().Add(s.ReauthWindow)
	rest.OK(w, r, http.StatusOK, "Identity confirmed; sensitive actions are open to this session for a while",
		map[string]any{"sensitiveActionsUntil": views.Time(until)})
	return nil
}

type accountEventView struct {
	ID         string         `json:"id"`
	OccurredAt string         `json:"occurredAt"`
	Action     string         `json:"action"`
	SessionID  string         `json:"sessionId"`
	IP         string         `json:"ip"`
	UserAgent  string         `json:"userAgent"`
	Details    map[string]any `json:"details"`
}

func (s Handlers) SecurityLog(w http.ResponseWriter, r *http.Request) error {
	list, err := s.Svc.Identity().AccountEvents(r.Context(), rest.CurrentUser(r).User.ID)
	if err != nil {
		return err
	}
	rest.OK(w, r, http.StatusOK, "Security log retrieved", rest.MapSlice(list, func(e payment.AccountEvent) accountEventView {
		d := e.Details
		if d == nil {
			d = map[string]any{}
		}
		return accountEventView{ID: e.ID, OccurredAt: views.Time(e.OccurredAt), Action: e.Action, SessionID: e.SessionID, IP: e.IP,
			UserAgent: e.UserAgent, Details: d}
	}))
	return nil
}

func (s Handlers) RevokeInvitation(w http.ResponseWriter, r *http.Request) error {
	inv, err := s.Svc.Access().RevokeInvitation(r.Context(), rest.Principal(r), r.PathValue("projectId"), r.PathValue("invitationId"))
	if err != nil {
		return err
	}
	rest.OK(w, r, http.StatusOK, "Invitation revoked", map[string]any{"id": inv.ID, "email": inv.Email})
	return nil
}
