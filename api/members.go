package api

import (
	"net/http"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/payment/views"
	"github.com/paymentsd/paymentsd/service"
)

type memberView struct {
	UserID    string `json:"userId"`
	Email     string `json:"email"`
	Role      string `json:"role"`
	CreatedAt string `json:"createdAt"`
}

func (s accessAPI) listMembers(w http.ResponseWriter, r *http.Request) error {
	ms, err := s.svc.Access().Members(r.Context(), principal(r), r.PathValue("projectId"))
	if err != nil {
		return err
	}
	ok(w, r, http.StatusOK, "Members retrieved", mapSlice(ms, func(m payment.Member) memberView {
		return memberView{m.UserID, m.Email, string(m.Role), views.Time(m.CreatedAt)}
	}))
	return nil
}

// bodyFields decodes a JSON object body with the string fields named;
// required ones must be present.
func bodyFields(body []byte, required []string, optional ...string) (map[string]*string, error) {
	obj, err := parseObject(body)
	if err != nil {
		return nil, err
	}
	var probs payment.Problems
	f := newFields(obj, "", &probs)
	out := map[string]*string{}
	for _, k := range append(append([]string{}, required...), optional...) {
		out[k] = f.str(k)
	}
	f.done()
	for _, k := range required {
		if out[k] == nil {
			probs.Add(k, "is required")
		}
	}
	return out, probs.Err()
}

func (s accessAPI) changeMemberRole(w http.ResponseWriter, r *http.Request) error {
	in, err := fieldsOf(r, []string{"role"})
	if err != nil {
		return err
	}
	if err := s.svc.Access().ChangeMember(r.Context(), principal(r), r.PathValue("projectId"), r.PathValue("userId"), *in["role"]); err != nil {
		return err
	}
	ok(w, r, http.StatusOK, "Role changed", map[string]any{"userId": r.PathValue("userId"), "role": *in["role"]})
	return nil
}

func (s accessAPI) removeMember(w http.ResponseWriter, r *http.Request) error {
	if err := s.svc.Access().ChangeMember(r.Context(), principal(r), r.PathValue("projectId"), r.PathValue("userId"), ""); err != nil {
		return err
	}
	ok(w, r, http.StatusOK, "Member removed", map[string]any{"userId": r.PathValue("userId")})
	return nil
}

func (s accessAPI) invite(w http.ResponseWriter, r *http.Request) error {
	in, err := fieldsOf(r, []string{"email", "role"})
	if err != nil {
		return err
	}
	inv, token, err := s.svc.Access().Invite(r.Context(), principal(r), r.PathValue("projectId"), *in["email"], *in["role"])
	if err != nil {
		return err
	}
	ok(w, r, http.StatusCreated, "Invitation made; pass its token to the invitee, it is shown this once", map[string]any{
		"invitation": map[string]any{"id": inv.ID, "email": inv.Email, "role": string(inv.Role), "expiresAt": views.Time(inv.ExpiresAt)},
		"token":      token})
	return nil
}

func (s accessAPI) acceptInvitation(w http.ResponseWriter, r *http.Request) error {
	in, err := fieldsOf(r, []string{"token"})
	if err != nil {
		return err
	}
	inv, err := s.svc.Access().AcceptInvitation(r.Context(), currentUser(r).user, *in["token"])
	if err != nil {
		return err
	}
	ok(w, r, http.StatusOK, "Invitation accepted", map[string]any{"projectId": inv.ProjectID, "role": string(inv.Role)})
	return nil
}

func (s accessAPI) updateProject(w http.ResponseWriter, r *http.Request) error {
	obj, err := bodyOf(r, parseObject)
	if err != nil {
		return err
	}
	var probs payment.Problems
	f := newFields(obj, "", &probs)
	in := service.ProjectInput{Name: f.str("name"), CompleteOn: f.str("completeOn"),
		UnderpaymentTolerancePercent: f.str("underpaymentTolerancePercent"), LatePaymentWindowSeconds: f.integer("latePaymentWindowSeconds"),
		SessionLifetimeSeconds: f.integer("sessionLifetimeSeconds")}
	f.done()
	if err := probs.Err(); err != nil {
		return err
	}
	return respond(w, r, http.StatusOK, "Project updated", views.ProjectOf)(s.svc.Checkout().UpdateProject(r.Context(), principal(r), r.PathValue("projectId"), in))
}

func (s accessAPI) setDepositKey(w http.ResponseWriter, r *http.Request) error {
	in, err := fieldsOf(r, []string{"xpub"})
	if err != nil {
		return err
	}
	p := principal(r)
	k, err := s.svc.Checkout().SetDepositKeyAs(r.Context(), p, r.PathValue("projectId"), *in["xpub"])
	if err != nil {
		return err
	}
	ok(w, r, http.StatusOK, "Deposit key set", depositKeyView(p, k))
	return nil
}

// getDepositKey shows the environment's deposit key: its fingerprint and
// first address (null when none is set), the key itself to an owner
// signed in to the dashboard only (service.DepositKeyInfo), and how many
// addresses it has handed out.
func (s accessAPI) getDepositKey(w http.ResponseWriter, r *http.Request) error {
	p := principal(r)
	k, err := s.svc.Checkout().DepositKey(r.Context(), p, r.PathValue("projectId"))
	if err != nil {
		return err
	}
	ok(w, r, http.StatusOK, "Deposit key retrieved", depositKeyView(p, k))
	return nil
}

// depositKeyView is the deposit key's JSON: a field the principal may
// not read, or of no key, is null.
func depositKeyView(p payment.Principal, k service.DepositKeyInfo) map[string]any {
	env := "sandbox"
	if p.IsLive {
		env = "live"
	}
	orNull := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	return map[string]any{"environment": env, "xpub": orNull(k.Xpub), "fingerprint": orNull(k.Fingerprint),
		"firstAddress": orNull(k.FirstAddress), "addressesIssued": k.Issued}
}

func (s accessAPI) setBitcoinKey(w http.ResponseWriter, r *http.Request) error {
	in, err := fieldsOf(r, []string{"xpub"}, "addressType")
	if err != nil {
		return err
	}
	addressType := ""
	if in["addressType"] != nil {
		addressType = *in["addressType"]
	}
	p := principal(r)
	k, err := s.svc.Checkout().SetBitcoinKeyAs(r.Context(), p, r.PathValue("projectId"), *in["xpub"], addressType)
	if err != nil {
		return err
	}
	ok(w, r, http.StatusOK, "Bitcoin deposit key set", bitcoinKeyView(p, k))
	return nil
}

// getBitcoinKey shows the environment's Bitcoin account key as
// getDepositKey shows the EVM key, with the kind of address it derives.
func (s accessAPI) getBitcoinKey(w http.ResponseWriter, r *http.Request) error {
	p := principal(r)
	k, err := s.svc.Checkout().BitcoinKey(r.Context(), p, r.PathValue("projectId"))
	if err != nil {
		return err
	}
	ok(w, r, http.StatusOK, "Bitcoin deposit key retrieved", bitcoinKeyView(p, k))
	return nil
}

func bitcoinKeyView(p payment.Principal, k service.BitcoinKeyInfo) map[string]any {
	v := depositKeyView(p, k.DepositKeyInfo)
	v["addressType"] = nil
	if k.AddressType != "" {
		v["addressType"] = string(k.AddressType)
	}
	return v
}

func (s accessAPI) listInvitations(w http.ResponseWriter, r *http.Request) error {
	list, err := s.svc.Access().Invitations(r.Context(), principal(r), r.PathValue("projectId"))
	if err != nil {
		return err
	}
	ok(w, r, http.StatusOK, "Pending invitations retrieved", mapSlice(list, func(i payment.Invitation) invitationView {
		return invitationView{ID: i.ID, Email: i.Email, Role: string(i.Role), InvitedBy: i.InvitedBy, InvitedByEmail: i.InvitedByEmail,
			CreatedAt: views.Time(i.CreatedAt), ExpiresAt: views.Time(i.ExpiresAt)}
	}))
	return nil
}
