package api

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/payment/views"
	"github.com/paymentsd/paymentsd/service"
)

var (
	TxStatuses      = statusStrings(payment.TransactionStatuses)
	SessionStatuses = statusStrings(payment.SessionStatuses)
	PlanStatuses    = statusStrings(payment.PlanStatuses)
)

func statusStrings[S ~string](list []S) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = string(s)
	}
	return out
}

// decodeErr answers a body that is not JSON at all with a 400 itself and
// returns any other error; failErr answers the same 400 for such an error
// a handler returns, which respond's handlers do.
func DecodeErr(w http.ResponseWriter, r *http.Request, err error) error {
	var m Malformed
	if errors.As(err, &m) {
		Fail(w, r, http.StatusBadRequest, "BAD_REQUEST", m.Msg, nil)
		return nil
	}
	return err
}

// action wraps the handler of an action route (archive, cancel, rotate,
// test, redeliver): it takes no input, so its body must be empty or an
// empty JSON object; anything else is refused as any body with unknown
// fields is, not ignored.
func Action(h func(http.ResponseWriter, *http.Request) error) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		body, _ := io.ReadAll(r.Body)
		if len(bytes.TrimSpace(body)) > 0 {
			obj, err := ParseObject(body)
			if err != nil {
				return err
			}
			var probs payment.Problems
			NewFields(obj, "", &probs).Done()
			if err := probs.Err(); err != nil {
				return err
			}
		}
		return h(w, r)
	}
}

func (s checkoutAPI) ListAssets(w http.ResponseWriter, r *http.Request) error {
	assets := s.Svc.Assets()
	if assets == nil {
		assets = []payment.Asset{}
	}
	OK(w, r, http.StatusOK, "Assets retrieved", assets)
	return nil
}

func (s checkoutAPI) GetProject(w http.ResponseWriter, r *http.Request) error {
	return Respond(w, r, http.StatusOK, "Project retrieved", views.ProjectOf)(s.Svc.Checkout().GetProject(r.Context(), Principal(r), r.PathValue("projectId")))
}

func (s checkoutAPI) CreatePlan(w http.ResponseWriter, r *http.Request) error {
	in, err := BodyOf(r, s.planInput)
	if err != nil {
		return err
	}
	return Respond(w, r, http.StatusCreated, "Payment plan created", views.PlanOf)(s.Svc.Checkout().CreatePlan(r.Context(), Principal(r), r.PathValue("projectId"), in))
}

func (s checkoutAPI) ListPlans(w http.ResponseWriter, r *http.Request) error {
	q, err := ParseListQuery(r.URL.Query(), PlanStatuses)
	if err != nil {
		return err
	}
	return RespondPage(w, r, "Payment plans retrieved", q, views.PlanOf)(s.Svc.Checkout().ListPlans(r.Context(), Principal(r), r.PathValue("projectId"), q))
}

func (s checkoutAPI) GetPlan(w http.ResponseWriter, r *http.Request) error {
	return Respond(w, r, http.StatusOK, "Payment plan retrieved", views.PlanOf)(s.Svc.Checkout().GetPlan(r.Context(), Principal(r), r.PathValue("projectId"), r.PathValue("planId")))
}

func (s checkoutAPI) UpdatePlan(w http.ResponseWriter, r *http.Request) error {
	in, err := BodyOf(r, s.planInput)
	if err != nil {
		return err
	}
	return Respond(w, r, http.StatusOK, "Payment plan updated", views.PlanOf)(s.Svc.Checkout().UpdatePlan(r.Context(), Principal(r), r.PathValue("projectId"), r.PathValue("planId"), in))
}

func (s checkoutAPI) ArchivePlan(w http.ResponseWriter, r *http.Request) error {
	return Respond(w, r, http.StatusOK, "Payment plan archived", views.PlanOf)(s.Svc.Checkout().ArchivePlan(r.Context(), Principal(r), r.PathValue("projectId"), r.PathValue("planId")))
}

func (s checkoutAPI) CancelSession(w http.ResponseWriter, r *http.Request) error {
	return Respond(w, r, http.StatusOK, "Checkout session canceled", s.SessionJSON)(s.Svc.Checkout().CancelSession(r.Context(), Principal(r), r.PathValue("projectId"), r.PathValue("sessionId")))
}

func (s paymentsAPI) ResolveSession(w http.ResponseWriter, r *http.Request) error {
	res, err := BodyOf(r, decodeResolution)
	if err != nil {
		return err
	}
	return Respond(w, r, http.StatusOK, "Checkout session's exception resolved", s.SessionJSON)(s.Svc.Checkout().ResolveSession(r.Context(), Principal(r), r.PathValue("projectId"), r.PathValue("sessionId"), res))
}

func (s paymentsAPI) AssignTransaction(w http.ResponseWriter, r *http.Request) error {
	sessionID, err := BodyOf(r, func(body []byte) (string, error) { return DecodeString(body, "checkoutSessionId") })
	if err != nil {
		return err
	}
	return Respond(w, r, http.StatusOK, "Transaction assigned", s.TxJSON)(s.Svc.Payments().AssignTransaction(r.Context(), Principal(r), r.PathValue("projectId"), r.PathValue("transactionId"), sessionID))
}

func (s paymentsAPI) ListTransactions(w http.ResponseWriter, r *http.Request) error {
	q, err := s.TransactionQuery(r)
	if err != nil {
		return err
	}
	if WantsCSV(r) {
		return s.exportTransactions(w, r, q)
	}
	return RespondPage(w, r, "Transactions retrieved", q, s.TxJSON)(s.Svc.Payments().ListTransactions(r.Context(), Principal(r), r.PathValue("projectId"), q))
}

func (s paymentsAPI) GetTransaction(w http.ResponseWriter, r *http.Request) error {
	return Respond(w, r, http.StatusOK, "Transaction retrieved", s.TxJSON)(s.Svc.Payments().GetTransaction(r.Context(), Principal(r), r.PathValue("projectId"), r.PathValue("transactionId")))
}

func (s checkoutAPI) CreateSession(w http.ResponseWriter, r *http.Request) error {
	in, err := BodyOf(r, decodeSessionInput)
	if err != nil {
		return err
	}
	return Respond(w, r, http.StatusCreated, "Checkout session created", s.SessionJSON)(s.Svc.Checkout().CreateSession(r.Context(), CallerKey(r.Context()), in))
}

func (s checkoutAPI) GetSessionByToken(w http.ResponseWriter, r *http.Request) error {
	if s.Shape == ShapeSecond && strings.HasPrefix(r.PathValue("sessionToken"), payment.PrefixSession) {
		return s.getSessionByID(w, r)
	}
	v, err := s.Svc.Checkout().SessionByToken(r.Context(), r.PathValue("sessionToken"))
	if err != nil {
		return err
	}
	pub := s.PublicSessionView(v)
	s.ShapeSummaries(pub.Transactions)
	OK(w, r, http.StatusOK, "Checkout session retrieved", pub)
	return nil
}

// getSessionByID is the second shape's GET /api/v1/checkout/sessions/
// {sessionId}: an ID is not a secret, so it takes an API key of the
// session's project and environment, or a member's session token (bearer
// or cookie); to anyone else the session does not exist.
func (s checkoutAPI) getSessionByID(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("sessionToken")
	var v service.SessionView
	var err error
	switch p := CallerKey(r.Context()); {
	case p != nil:
		v, err = s.Svc.Checkout().GetSession(r.Context(), *p, p.ProjectID, id)
	default:
		token := s.BearerSession(r.Header)
		if token == "" {
			token = SessionToken(r)
		}
		if token == "" {
			return &payment.Error{Kind: payment.KindUnauthenticated, Message: "A checkout session is read by its ID with credentials: an API key (X-API-Key) or a session token (Authorization: Bearer svc_st_…)"}
		}
		var in SignedIn
		if in, err = s.SignedInFrom(r.Context(), token, s.ClientIP(r), w.Header()); err == nil {
			v, err = s.Svc.Access().MemberSession(r.Context(), in.User, in.Session, id)
		}
	}
	if err != nil {
		return err
	}
	OK(w, r, http.StatusOK, "Checkout session retrieved", s.SessionJSON(v))
	return nil
}

func (s paymentsAPI) SubmitPayment(w http.ResponseWriter, r *http.Request) error {
	in, err := BodyOf(r, decodePaymentSubmission)
	if err != nil {
		return err
	}
	t, err := s.Svc.Payments().SubmitPayment(r.Context(), r.PathValue("sessionToken"), in.network, in.txHash)
	if err != nil {
		return err
	}
	if t == nil {
		OK(w, r, http.StatusAccepted, "Payment submitted; its transaction will be recorded shortly", map[string]string{"network": in.network, "txHash": in.txHash})
		return nil
	}
	// The payer sees the record as the session's public view lists it.
	sum := views.TransactionSummaryOf(*t)
	sum.Status = s.TxStatus(sum.Status)
	OK(w, r, http.StatusCreated, "Payment submitted", sum)
	return nil
}

func (s checkoutAPI) ListSessions(w http.ResponseWriter, r *http.Request) error {
	q, err := ParseSessionQuery(r.URL.Query(), SessionStatuses)
	if err != nil {
		return err
	}
	if WantsCSV(r) {
		return s.exportSessions(w, r, q)
	}
	return RespondPage(w, r, "Checkout sessions retrieved", q, s.SessionJSON)(s.Svc.Checkout().ListSessions(r.Context(), Principal(r), r.PathValue("projectId"), q))
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

func (s checkoutAPI) ListDepositAddresses(w http.ResponseWriter, r *http.Request) error {
	q, err := ParseDepositQuery(r.URL.Query(), SessionStatuses)
	if err != nil {
		return err
	}
	page, err := s.Svc.Checkout().ListDepositAddresses(r.Context(), Principal(r), r.PathValue("projectId"), q)
	if err != nil {
		return err
	}
	OKList(w, r, "Deposit addresses retrieved", MapSlice(page.Items, func(d payment.DepositAddress) depositAddressView {
		return depositAddressView{Index: d.Index, DerivationPath: fmt.Sprintf("0/%d", d.Index), Address: d.Address,
			CheckoutSessionID: d.SessionID, SessionStatus: string(d.Status), CreatedAt: views.Time(d.CreatedAt), GapBefore: d.GapBefore,
			Received: MapSlice(d.Received, func(r payment.Received) receivedView {
				return receivedView{AssetDefinitionID: r.AssetID, Network: r.Network, AmountBaseUnits: r.AmountBaseUnits}
			}), LateUntil: views.OptTime(d.LateUntil),
			Outputs: MapSlice(d.Outputs, func(o payment.PaidOutput) paidOutputView {
				return paidOutputView{TxID: o.TxID, Vout: o.Vout, AmountBaseUnits: o.Sats, Status: string(o.Status)}
			})}
	}), q.ListQuery, page.Total)
	return nil
}

func (s accessAPI) ListAudit(w http.ResponseWriter, r *http.Request) error {
	q, err := ParseListQueryBy(r.URL.Query(), "action", payment.AuditActions)
	if err != nil {
		return err
	}
	return RespondPage(w, r, "Audit log retrieved", q, views.AuditEntryOf)(s.Svc.Access().ListAudit(r.Context(), Principal(r), r.PathValue("projectId"), q))
}

func (s checkoutAPI) GetSession(w http.ResponseWriter, r *http.Request) error {
	return Respond(w, r, http.StatusOK, "Checkout session retrieved", s.SessionJSON)(s.Svc.Checkout().GetSession(r.Context(), Principal(r), r.PathValue("projectId"), r.PathValue("sessionId")))
}

func MapSlice[T, U any](in []T, f func(T) U) []U {
	out := make([]U, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}

// sessionView renders a session for the merchant, or for its creator.
func (s *Edge) SessionView(v service.SessionView) views.Session {
	out := views.SessionOf(v.Session, v.Token, s.CheckoutURL, v.Transactions)
	s.ShapeSummaries(out.Transactions)
	return out
}

// publicSessionView renders a session for whoever holds its token.
func (s *Edge) PublicSessionView(v service.SessionView) views.PublicSession {
	return views.PublicSessionOf(v.Session, v.Token, s.CheckoutURL, v.Transactions, v.Plan)
}

// planInput decodes a plan's body in the API's shape.
func (s checkoutAPI) planInput(body []byte) (payment.PlanInput, error) {
	return decodePlanInput(body, s.Shape)
}
