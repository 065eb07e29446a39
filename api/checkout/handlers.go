package checkout

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/paymentsd/paymentsd/api/internal/rest"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/payment/views"
	"github.com/paymentsd/paymentsd/service"
)

func (s Handlers) ListAssets(w http.ResponseWriter, r *http.Request) error {
	assets := s.Svc.Assets()
	if assets == nil {
		assets = []payment.Asset{}
	}
	rest.OK(w, r, http.StatusOK, "Assets retrieved", assets)
	return nil
}

func (s Handlers) GetProject(w http.ResponseWriter, r *http.Request) error {
	return rest.Respond(w, r, http.StatusOK, "Project retrieved", views.ProjectOf)(s.Svc.Checkout().GetProject(r.Context(), rest.Principal(r), r.PathValue("projectId")))
}

func (s Handlers) CreatePlan(w http.ResponseWriter, r *http.Request) error {
	in, err := rest.BodyOf(r, s.planInput)
	if err != nil {
		return err
	}
	return rest.Respond(w, r, http.StatusCreated, "Payment plan created", views.PlanOf)(s.Svc.Checkout().CreatePlan(r.Context(), rest.Principal(r), r.PathValue("projectId"), in))
}

func (s Handlers) ListPlans(w http.ResponseWriter, r *http.Request) error {
	q, err := rest.ParseListQuery(r.URL.Query(), rest.PlanStatuses)
	if err != nil {
		return err
	}
	return rest.RespondPage(w, r, "Payment plans retrieved", q, views.PlanOf)(s.Svc.Checkout().ListPlans(r.Context(), rest.Principal(r), r.PathValue("projectId"), q))
}

func (s Handlers) GetPlan(w http.ResponseWriter, r *http.Request) error {
	return rest.Respond(w, r, http.StatusOK, "Payment plan retrieved", views.PlanOf)(s.Svc.Checkout().GetPlan(r.Context(), rest.Principal(r), r.PathValue("projectId"), r.PathValue("planId")))
}

func (s Handlers) UpdatePlan(w http.ResponseWriter, r *http.Request) error {
	in, err := rest.BodyOf(r, s.planInput)
	if err != nil {
		return err
	}
	return rest.Respond(w, r, http.StatusOK, "Payment plan updated", views.PlanOf)(s.Svc.Checkout().UpdatePlan(r.Context(), rest.Principal(r), r.PathValue("projectId"), r.PathValue("planId"), in))
}

func (s Handlers) ArchivePlan(w http.ResponseWriter, r *http.Request) error {
	return rest.Respond(w, r, http.StatusOK, "Payment plan archived", views.PlanOf)(s.Svc.Checkout().ArchivePlan(r.Context(), rest.Principal(r), r.PathValue("projectId"), r.PathValue("planId")))
}

func (s Handlers) CancelSession(w http.ResponseWriter, r *http.Request) error {
	return rest.Respond(w, r, http.StatusOK, "Checkout session canceled", s.SessionJSON)(s.Svc.Checkout().CancelSession(r.Context(), rest.Principal(r), r.PathValue("projectId"), r.PathValue("sessionId")))
}

func (s Handlers) CreateSession(w http.ResponseWriter, r *http.Request) error {
	in, err := rest.BodyOf(r, decodeSessionInput)
	if err != nil {
		return err
	}
	return rest.Respond(w, r, http.StatusCreated, "Checkout session created", s.SessionJSON)(s.Svc.Checkout().CreateSession(r.Context(), rest.CallerKey(r.Context()), in))
}

func (s Handlers) GetSessionByToken(w http.ResponseWriter, r *http.Request) error {
	if s.Shape == views.ShapeSecond && strings.HasPrefix(r.PathValue("sessionToken"), payment.PrefixSession) {
		return s.getSessionByID(w, r)
	}
	v, err := s.Svc.Checkout().SessionByToken(r.Context(), r.PathValue("sessionToken"))
	if err != nil {
		return err
	}
	pub := s.PublicSessionView(v)
	s.ShapeSummaries(pub.Transactions)
	rest.OK(w, r, http.StatusOK, "Checkout session retrieved", pub)
	return nil
}

// getSessionByID is the second shape's GET /api/v1/checkout/sessions/
// {sessionId}: an ID is not a secret, so it takes an API key of the
// session's project and environment, or a member's session token (bearer
// or cookie); to anyone else the session does not exist.
func (s Handlers) getSessionByID(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("sessionToken")
	var v service.SessionView
	var err error
	switch p := rest.CallerKey(r.Context()); {
	case p != nil:
		v, err = s.Svc.Checkout().GetSession(r.Context(), *p, p.ProjectID, id)
	default:
		token := s.BearerSession(r.Header)
		if token == "" {
			token = rest.SessionToken(r)
		}
		if token == "" {
			return &payment.Error{Kind: payment.KindUnauthenticated, Message: "A checkout session is read by its ID with credentials: an API key (X-API-Key) or a session token (Authorization: Bearer svc_st_…)"}
		}
		var in rest.SignedIn
		if in, err = s.SignedInFrom(r.Context(), token, s.ClientIP(r), w.Header()); err == nil {
			v, err = s.Svc.Access().MemberSession(r.Context(), in.User, in.Session, id)
		}
	}
	if err != nil {
		return err
	}
	rest.OK(w, r, http.StatusOK, "Checkout session retrieved", s.SessionJSON(v))
	return nil
}

func (s Handlers) ListSessions(w http.ResponseWriter, r *http.Request) error {
	q, err := rest.ParseSessionQuery(r.URL.Query(), rest.SessionStatuses)
	if err != nil {
		return err
	}
	if rest.WantsCSV(r) {
		return s.exportSessions(w, r, q)
	}
	return rest.RespondPage(w, r, "Checkout sessions retrieved", q, s.SessionJSON)(s.Svc.Checkout().ListSessions(r.Context(), rest.Principal(r), r.PathValue("projectId"), q))
}

// depositAddressView is a used derivation index of the key's environment.
type depositAddressView struct {
	Index int64 `json:"index"`
	// DerivationPath is relative to the deposit key (the account key
	// set with set-deposit-key, usually m/44'/60'/0'), or with
	// chain=bitcoin to the Bitcoin account key (m/84'/0'/0' and the like).
	DerivationPath    string `json:"derivationPath"`
	Address           string `json:"address"`
	CheckoutSessionID string `json:"checkoutSessionId"`
	SessionStatus     string `json:"sessionStatus"`
	CreatedAt         string `json:"createdAt"`
	// GapBefore counts the unused indexes just before this one: a wallet
	// whose gap limit is not above it stops looking before this address.
	GapBefore int64 `json:"gapBefore"`
	// Received sums the address's confirmed and finalized transfers per
	// asset; funded=true lists only addresses where it is not empty.
	Received []receivedView `json:"received"`
	// LateUntil is when transfers to the address stop counting for its
	// session: until then a transfer in (a sweep's gas top-up too) is a
	// payment.
	LateUntil *string `json:"lateUntil"`
	// Outputs are a Bitcoin address's confirmed and finalized payments'
	// outputs (chain=bitcoin only): what a sweep spends.
	Outputs []paidOutputView `json:"outputs,omitempty"`
}

type paidOutputView struct {
	TxID            string `json:"txid"`
	Vout            int64  `json:"vout"`
	AmountBaseUnits string `json:"amountBaseUnits"`
	Status          string `json:"status"`
}

type receivedView struct {
	AssetDefinitionID string `json:"assetDefinitionId"`
	Network           string `json:"network"`
	AmountBaseUnits   string `json:"amountBaseUnits"`
}

func (s Handlers) ListDepositAddresses(w http.ResponseWriter, r *http.Request) error {
	q, err := rest.ParseDepositQuery(r.URL.Query(), rest.SessionStatuses)
	if err != nil {
		return err
	}
	page, err := s.Svc.Checkout().ListDepositAddresses(r.Context(), rest.Principal(r), r.PathValue("projectId"), q)
	if err != nil {
		return err
	}
	rest.OKList(w, r, "Deposit addresses retrieved", rest.MapSlice(page.Items, func(d payment.DepositAddress) depositAddressView {
		return depositAddressView{Index: d.Index, DerivationPath: fmt.Sprintf("0/%d", d.Index), Address: d.Address,
			CheckoutSessionID: d.SessionID, SessionStatus: string(d.Status), CreatedAt: views.Time(d.CreatedAt), GapBefore: d.GapBefore,
			Received: rest.MapSlice(d.Received, func(r payment.Received) receivedView {
				return receivedView{AssetDefinitionID: r.AssetID, Network: r.Network, AmountBaseUnits: r.AmountBaseUnits}
			}), LateUntil: views.OptTime(d.LateUntil),
			Outputs: rest.MapSlice(d.Outputs, func(o payment.PaidOutput) paidOutputView {
				return paidOutputView{TxID: o.TxID, Vout: o.Vout, AmountBaseUnits: o.Sats, Status: string(o.Status)}
			})}
	}), q.ListQuery, page.Total)
	return nil
}

func (s Handlers) GetSession(w http.ResponseWriter, r *http.Request) error {
	return rest.Respond(w, r, http.StatusOK, "Checkout session retrieved", s.SessionJSON)(s.Svc.Checkout().GetSession(r.Context(), rest.Principal(r), r.PathValue("projectId"), r.PathValue("sessionId")))
}

// planInput decodes a plan's body in the API's shape.
func (s Handlers) planInput(body []byte) (payment.PlanInput, error) {
	return decodePlanInput(body, s.Shape)
}
