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
	txStatuses      = statusStrings(payment.TransactionStatuses)
	sessionStatuses = statusStrings(payment.SessionStatuses)
	planStatuses    = statusStrings(payment.PlanStatuses)
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
func decodeErr(w http.ResponseWriter, r *http.Request, err error) error {
	var m errMalformed
	if errors.As(err, &m) {
		fail(w, r, http.StatusBadRequest, "BAD_REQUEST", m.msg, nil)
		return nil
	}
	return err
}

// action wraps the handler of an action route (archive, cancel, rotate,
// test, redeliver): it takes no input, so its body must be empty or an
// empty JSON object; anything else is refused as any body with unknown
// fields is, not ignored.
func action(h func(http.ResponseWriter, *http.Request) error) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		body, _ := io.ReadAll(r.Body)
		if len(bytes.TrimSpace(body)) > 0 {
			obj, err := parseObject(body)
			if err != nil {
				return err
			}
			var probs payment.Problems
			newFields(obj, "", &probs).done()
			if err := probs.Err(); err != nil {
				return err
			}
		}
		return h(w, r)
	}
}

func (s checkoutAPI) listAssets(w http.ResponseWriter, r *http.Request) error {
	assets := s.svc.Assets()
	if assets == nil {
		assets = []payment.Asset{}
	}
	ok(w, r, http.StatusOK, "Assets retrieved", assets)
	return nil
}

func (s checkoutAPI) getProject(w http.ResponseWriter, r *http.Request) error {
	return respond(w, r, http.StatusOK, "Project retrieved", views.ProjectOf)(s.svc.Checkout().GetProject(r.Context(), principal(r), r.PathValue("projectId")))
}

func (s checkoutAPI) createPlan(w http.ResponseWriter, r *http.Request) error {
	in, err := bodyOf(r, s.planInput)
	if err != nil {
		return err
	}
	return respond(w, r, http.StatusCreated, "Payment plan created", views.PlanOf)(s.svc.Checkout().CreatePlan(r.Context(), principal(r), r.PathValue("projectId"), in))
}

func (s checkoutAPI) listPlans(w http.ResponseWriter, r *http.Request) error {
	q, err := parseListQuery(r.URL.Query(), planStatuses)
	if err != nil {
		return err
	}
	return respondPage(w, r, "Payment plans retrieved", q, views.PlanOf)(s.svc.Checkout().ListPlans(r.Context(), principal(r), r.PathValue("projectId"), q))
}

func (s checkoutAPI) getPlan(w http.ResponseWriter, r *http.Request) error {
	return respond(w, r, http.StatusOK, "Payment plan retrieved", views.PlanOf)(s.svc.Checkout().GetPlan(r.Context(), principal(r), r.PathValue("projectId"), r.PathValue("planId")))
}

func (s checkoutAPI) updatePlan(w http.ResponseWriter, r *http.Request) error {
	in, err := bodyOf(r, s.planInput)
	if err != nil {
		return err
	}
	return respond(w, r, http.StatusOK, "Payment plan updated", views.PlanOf)(s.svc.Checkout().UpdatePlan(r.Context(), principal(r), r.PathValue("projectId"), r.PathValue("planId"), in))
}

func (s checkoutAPI) archivePlan(w http.ResponseWriter, r *http.Request) error {
	return respond(w, r, http.StatusOK, "Payment plan archived", views.PlanOf)(s.svc.Checkout().ArchivePlan(r.Context(), principal(r), r.PathValue("projectId"), r.PathValue("planId")))
}

func (s checkoutAPI) cancelSession(w http.ResponseWriter, r *http.Request) error {
	return respond(w, r, http.StatusOK, "Checkout session canceled", s.sessionJSON)(s.svc.Checkout().CancelSession(r.Context(), principal(r), r.PathValue("projectId"), r.PathValue("sessionId")))
}

func (s paymentsAPI) resolveSession(w http.ResponseWriter, r *http.Request) error {
	res, err := bodyOf(r, decodeResolution)
	if err != nil {
		return err
	}
	return respond(w, r, http.StatusOK, "Checkout session's exception resolved", s.sessionJSON)(s.svc.Checkout().ResolveSession(r.Context(), principal(r), r.PathValue("projectId"), r.PathValue("sessionId"), res))
}

func (s paymentsAPI) assignTransaction(w http.ResponseWriter, r *http.Request) error {
	sessionID, err := bodyOf(r, func(body []byte) (string, error) { return decodeString(body, "checkoutSessionId") })
	if err != nil {
		return err
	}
	return respond(w, r, http.StatusOK, "Transaction assigned", s.txJSON)(s.svc.Payments().AssignTransaction(r.Context(), principal(r), r.PathValue("projectId"), r.PathValue("transactionId"), sessionID))
}

func (s paymentsAPI) listTransactions(w http.ResponseWriter, r *http.Request) error {
	q, err := s.transactionQuery(r)
	if err != nil {
		return err
	}
	if wantsCSV(r) {
		return s.exportTransactions(w, r, q)
	}
	return respondPage(w, r, "Transactions retrieved", q, s.txJSON)(s.svc.Payments().ListTransactions(r.Context(), principal(r), r.PathValue("projectId"), q))
}

func (s paymentsAPI) getTransaction(w http.ResponseWriter, r *http.Request) error {
	return respond(w, r, http.StatusOK, "Transaction retrieved", s.txJSON)(s.svc.Payments().GetTransaction(r.Context(), principal(r), r.PathValue("projectId"), r.PathValue("transactionId")))
}

func (s checkoutAPI) createSession(w http.ResponseWriter, r *http.Request) error {
	in, err := bodyOf(r, decodeSessionInput)
	if err != nil {
		return err
	}
	return respond(w, r, http.StatusCreated, "Checkout session created", s.sessionJSON)(s.svc.Checkout().CreateSession(r.Context(), callerKey(r.Context()), in))
}

func (s checkoutAPI) getSessionByToken(w http.ResponseWriter, r *http.Request) error {
	if s.shape == ShapeSecond && strings.HasPrefix(r.PathValue("sessionToken"), payment.PrefixSession) {
		return s.getSessionByID(w, r)
	}
	v, err := s.svc.Checkout().SessionByToken(r.Context(), r.PathValue("sessionToken"))
	if err != nil {
		return err
	}
	pub := s.publicSessionView(v)
	s.shapeSummaries(pub.Transactions)
	ok(w, r, http.StatusOK, "Checkout session retrieved", pub)
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
	switch p := callerKey(r.Context()); {
	case p != nil:
		v, err = s.svc.Checkout().GetSession(r.Context(), *p, p.ProjectID, id)
	default:
		token := s.bearerSession(r.Header)
		if token == "" {
			token = sessionToken(r)
		}
		if token == "" {
			return &payment.Error{Kind: payment.KindUnauthenticated, Message: "A checkout session is read by its ID with credentials: an API key (X-API-Key) or a session token (Authorization: Bearer svc_st_…)"}
		}
		var in signedIn
		if in, err = s.signedInFrom(r.Context(), token, s.clientIP(r), w.Header()); err == nil {
			v, err = s.svc.Access().MemberSession(r.Context(), in.user, in.session, id)
		}
	}
	if err != nil {
		return err
	}
	ok(w, r, http.StatusOK, "Checkout session retrieved", s.sessionJSON(v))
	return nil
}

func (s paymentsAPI) submitPayment(w http.ResponseWriter, r *http.Request) error {
	in, err := bodyOf(r, decodePaymentSubmission)
	if err != nil {
		return err
	}
	t, err := s.svc.Payments().SubmitPayment(r.Context(), r.PathValue("sessionToken"), in.network, in.txHash)
	if err != nil {
		return err
	}
	if t == nil {
		ok(w, r, http.StatusAccepted, "Payment submitted; its transaction will be recorded shortly", map[string]string{"network": in.network, "txHash": in.txHash})
		return nil
	}
	// The payer sees the record as the session's public view lists it.
	sum := views.TransactionSummaryOf(*t)
	sum.Status = s.txStatus(sum.Status)
	ok(w, r, http.StatusCreated, "Payment submitted", sum)
	return nil
}

func (s checkoutAPI) listSessions(w http.ResponseWriter, r *http.Request) error {
	q, err := parseSessionQuery(r.URL.Query(), sessionStatuses)
	if err != nil {
		return err
	}
	if wantsCSV(r) {
		return s.exportSessions(w, r, q)
	}
	return respondPage(w, r, "Checkout sessions retrieved", q, s.sessionJSON)(s.svc.Checkout().ListSessions(r.Context(), principal(r), r.PathValue("projectId"), q))
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

func (s checkoutAPI) listDepositAddresses(w http.ResponseWriter, r *http.Request) error {
	q, err := parseDepositQuery(r.URL.Query(), sessionStatuses)
	if err != nil {
		return err
	}
	page, err := s.svc.Checkout().ListDepositAddresses(r.Context(), principal(r), r.PathValue("projectId"), q)
	if err != nil {
		return err
	}
	okList(w, r, "Deposit addresses retrieved", mapSlice(page.Items, func(d payment.DepositAddress) depositAddressView {
		return depositAddressView{Index: d.Index, DerivationPath: fmt.Sprintf("0/%d", d.Index), Address: d.Address,
			CheckoutSessionID: d.SessionID, SessionStatus: string(d.Status), CreatedAt: views.Time(d.CreatedAt), GapBefore: d.GapBefore,
			Received: mapSlice(d.Received, func(r payment.Received) receivedView {
				return receivedView{AssetDefinitionID: r.AssetID, Network: r.Network, AmountBaseUnits: r.AmountBaseUnits}
			}), LateUntil: views.OptTime(d.LateUntil),
			Outputs: mapSlice(d.Outputs, func(o payment.PaidOutput) paidOutputView {
				return paidOutputView{TxID: o.TxID, Vout: o.Vout, AmountBaseUnits: o.Sats, Status: string(o.Status)}
			})}
	}), q.ListQuery, page.Total)
	return nil
}

func (s accessAPI) listAudit(w http.ResponseWriter, r *http.Request) error {
	q, err := parseListQueryBy(r.URL.Query(), "action", payment.AuditActions)
	if err != nil {
		return err
	}
	return respondPage(w, r, "Audit log retrieved", q, views.AuditEntryOf)(s.svc.Access().ListAudit(r.Context(), principal(r), r.PathValue("projectId"), q))
}

func (s checkoutAPI) getSession(w http.ResponseWriter, r *http.Request) error {
	return respond(w, r, http.StatusOK, "Checkout session retrieved", s.sessionJSON)(s.svc.Checkout().GetSession(r.Context(), principal(r), r.PathValue("projectId"), r.PathValue("sessionId")))
}

func mapSlice[T, U any](in []T, f func(T) U) []U {
	out := make([]U, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}

// sessionView renders a session for the merchant, or for its creator.
func (s *Edge) sessionView(v service.SessionView) views.Session {
	out := views.SessionOf(v.Session, v.Token, s.CheckoutURL, v.Transactions)
	s.shapeSummaries(out.Transactions)
	return out
}

// publicSessionView renders a session for whoever holds its token.
func (s *Edge) publicSessionView(v service.SessionView) views.PublicSession {
	return views.PublicSessionOf(v.Session, v.Token, s.CheckoutURL, v.Transactions, v.Plan)
}

// planInput decodes a plan's body in the API's shape.
func (s checkoutAPI) planInput(body []byte) (payment.PlanInput, error) {
	return decodePlanInput(body, s.shape)
}
