package access

import (
	"net/http"

	"github.com/paymentsd/paymentsd/api/internal/rest"
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

func (s Handlers) ListMembers(w http.ResponseWriter, r *http.Request) error {
	ms, err := s.Svc.Access().Members(r.Context(), rest.Principal(r), r.PathValue("projectId"))
	if err != nil {
		return err
	}
	rest.OK(w, r, http.StatusOK, "Members retrieved", rest.MapSlice(ms, func(m payment.Member) memberView {
		return memberView{m.UserID, m.Email, string(m.Role), views.Time(m.CreatedAt)}
	}))
	return nil
}

func (s Handlers) ChangeMemberRole(w http.ResponseWriter, r *http.Request) error {
	in, err := rest.FieldsOf(r, []string{"role"})
	if err != nil {
		return err
	}
	if err := s.Svc.Access().ChangeMember(r.Context(), rest.Principal(r), r.PathValue("projectId"), r.PathValue("userId"), *in["role"]); err != nil {
		return err
	}
	rest.OK(w, r, http.StatusOK, "Role changed", map[string]any{"userId": r.PathValue("userId"), "role": *in["role"]})
	return nil
}

func (s Handlers) RemoveMember(w http.ResponseWriter, r *http.Request) error {
	if err := s.Svc.Access().ChangeMember(r.Context(), rest.Principal(r), r.PathValue("projectId"), r.PathValue("userId"), ""); err != nil {
		return err
	}
	rest.OK(w, r, http.StatusOK, "Member removed", map[string]any{"userId": r.PathValue("userId")})
	return nil
}

func (s Handlers) Invite(w http.ResponseWriter, r *http.Request) error {
	in, err := rest.FieldsOf(r, []string{"email", "role"})
	if err != nil {
		return err
	}
	inv, token, err := s.Svc.Access().Invite(r.Context(), rest.Principal(r), r.PathValue("projectId"), *in["email"], *in["role"])
	if err != nil {
		return err
	}
	rest.OK(w, r, http.StatusCreated, "Invitation made; pass its token to the invitee, it is shown this once", map[string]any{
		"invitation": map[string]any{"id": inv.ID, "email": inv.Email, "role": string(inv.Role), "expiresAt": views.Time(inv.ExpiresAt)},
		"token":      token})
	return nil
}

func (s Handlers) AcceptInvitation(w http.ResponseWriter, r *http.Request) error {
	in, err := rest.FieldsOf(r, []string{"token"})
	if err != nil {
		return err
	}
	inv, err := s.Svc.Access().AcceptInvitation(r.Context(), rest.CurrentUser(r).User, *in["token"])
	if err != nil {
		return err
	}
	rest.OK(w, r, http.StatusOK, "Invitation accepted", map[string]any{"projectId": inv.ProjectID, "role": string(inv.Role)})
	return nil
}

func (s Handlers) UpdateProject(w http.ResponseWriter, r *http.Request) error {
	obj, err := rest.BodyOf(r, rest.ParseObject)
	if err != nil {
		return err
	}
	var probs payment.Problems
	f := rest.NewFields(obj, "", &probs)
	in := service.ProjectInput{Name: f.Str("name"), CompleteOn: f.Str("completeOn"),
		UnderpaymentTolerancePercent: f.Str("underpaymentTolerancePercent"), LatePaymentWindowSeconds: f.Integer("latePaymentWindowSeconds"),
		SessionLifetimeSeconds: f.Integer("sessionLifetimeSeconds")}
	f.Done()
	if err := probs.Err(); err != nil {
		return err
	}
	return rest.Respond(w, r, http.StatusOK, "Project updated", views.ProjectOf)(s.Svc.Checkout().UpdateProject(r.Context(), rest.Principal(r), r.PathValue("projectId"), in))
}

func (s Handlers) SetDepositKey(w http.ResponseWriter, r *http.Request) error {
	in, err := rest.FieldsOf(r, []string{"xpub"})
	if err != nil {
		return err
	}
	p := rest.Principal(r)
	k, err := s.Svc.Checkout().SetDepositKeyAs(r.Context(), p, r.PathValue("projectId"), *in["xpub"])
	if err != nil {
		return err
	}
	rest.OK(w, r, http.StatusOK, "Deposit key set", depositKeyView(p, k))
	return nil
}

// GetDepositKey shows the environment's deposit key: its fingerprint and
// first address (null when none is set), the key itself to an owner
// signed in to the dashboard only (service.DepositKeyInfo), and how many
// addresses it has handed out.
func (s Handlers) GetDepositKey(w http.ResponseWriter, r *http.Request) error {
	p := rest.Principal(r)
	k, err := s.Svc.Checkout().DepositKey(r.Context(), p, r.PathValue("projectId"))
	if err != nil {
		return err
	}
	rest.OK(w, r, http.StatusOK, "Deposit key retrieved", depositKeyView(p, k))
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

func (s Handlers) SetBitcoinKey(w http.ResponseWriter, r *http.Request) error {
	in, err := rest.FieldsOf(r, []string{"xpub"}, "addressType")
	if err != nil {
		return err
	}
	addressType := ""
	if in["addressType"] != nil {
		addressType = *in["addressType"]
	}
	p := rest.Principal(r)
	k, err := s.Svc.Checkout().SetBitcoinKeyAs(r.Context(), p, r.PathValue("projectId"), *in["xpub"], addressType)
	if err != nil {
		return err
	}
	rest.OK(w, r, http.StatusOK, "Bitcoin deposit key set", bitcoinKeyView(p, k))
	return nil
}

// GetBitcoinKey shows the environment's Bitcoin account key as
// GetDepositKey shows the EVM key, with the kind of address it derives.
func (s Handlers) GetBitcoinKey(w http.ResponseWriter, r *http.Request) error {
	p := rest.Principal(r)
	k, err := s.Svc.Checkout().BitcoinKey(r.Context(), p, r.PathValue("projectId"))
	if err != nil {
		return err
	}
	rest.OK(w, r, http.StatusOK, "Bitcoin deposit key retrieved", bitcoinKeyView(p, k))
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

func (s Handlers) ListInvitations(w http.ResponseWriter, r *http.Request) error {
	list, err := s.Svc.Access().Invitations(r.Context(), rest.Principal(r), r.PathValue("projectId"))
	if err != nil {
		return err
	}
	rest.OK(w, r, http.StatusOK, "Pending invitations retrieved", rest.MapSlice(list, func(i payment.Invitation) invitationView {
		return invitationView{ID: i.ID, Email: i.Email, Role: string(i.Role), InvitedBy: i.InvitedBy, InvitedByEmail: i.InvitedByEmail,
			CreatedAt: views.Time(i.CreatedAt), ExpiresAt: views.Time(i.ExpiresAt)}
	}))
	return nil
}

type invitationView struct {
	ID             string `json:"id"`
	Email          string `json:"email"`
	Role           string `json:"role"`
	InvitedBy      string `json:"invitedBy"`
	InvitedByEmail string `json:"invitedByEmail"`
	CreatedAt      string `json:"createdAt"`
	ExpiresAt      string `json:"expiresAt"`
}
