package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"connectrpc.com/connect"

	v1 "github.com/paymentsd/paymentsd/api/gen/paymentsd/v1"
	"github.com/paymentsd/paymentsd/api/gen/paymentsd/v1/paymentsdv1connect"
	"github.com/paymentsd/paymentsd/api/internal/rest"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/payment/views"
	"github.com/paymentsd/paymentsd/service"
)

// connectHandlers mounts the Connect services (Connect JSON and binary,
// gRPC and gRPC-Web) on the mux, each with the same bounds on what a call
// may read as the REST routes. A procedure that is not in the operations
// table is a programming error: it has no tier and no scope.
func (s *Server) connectHandlers() {
	for _, proc := range connectProcedures() {
		if _, ok := procedureOperation(proc); !ok {
			panic(proc + " is not in the operations table (api/operations.go)")
		}
	}
	opts := connect.WithHandlerOptions(connect.WithInterceptors(s.connectInterceptor()), s.connectLimits())
	path, h := paymentsdv1connect.NewPaymentsServiceHandler(&paymentsService{s}, opts)
	s.mux.Handle(path, s.boundBody(h))
	path, h = paymentsdv1connect.NewCheckoutServiceHandler(&checkoutService{s}, opts)
	s.mux.Handle(path, s.boundBody(h))
}

// connectProcedures are the procedures of the services connectHandlers
// mounts.
func connectProcedures() []string {
	var out []string
	services := v1.File_paymentsd_v1_payments_proto.Services()
	for i := 0; i < services.Len(); i++ {
		sd := services.Get(i)
		for j := 0; j < sd.Methods().Len(); j++ {
			out = append(out, "/"+string(sd.FullName())+"/"+string(sd.Methods().Get(j).Name()))
		}
	}
	return out
}

// connectInterceptor authenticates the calls whose operation reads a
// credential and applies the rate limits, from the operations table as
// the REST routes do.
func (s *Server) connectInterceptor() connect.UnaryInterceptorFunc {
	return func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			op, ok := procedureOperation(req.Spec().Procedure)
			if !ok {
				return nil, connect.NewError(connect.CodeUnimplemented, errors.New("unknown procedure"))
			}
			header := http.Header{}
			tier, counter := op.tier, "ip:"+s.ClientIP(peerRequest(req))
			if op.access == apiKey || op.access == optionalKey && hasCredentials(req.Header()) {
				p, err := s.authenticateFrom(ctx, req.Header(), s.ClientIP(peerRequest(req)), header)
				if err == nil {
					err = allows(p, op.scope, header)
				}
				if err != nil {
					return nil, withHeaders(connectErr(err), header)
				}
				ctx = context.WithValue(ctx, rest.PrincipalKey, p)
				ctx = payment.WithOrigin(ctx, s.originOf(peerRequest(req), p))
				counter = credentialCounter(p)
				if tier == Strict {
					tier = StrictAPIKey
				}
			}
			if err := s.Take(ctx, header, tier, counter); err != nil {
				return nil, withHeaders(connectErr(err), header)
			}
			res, err := next(ctx, req)
			if err != nil {
				return nil, withHeaders(connectErr(err), header)
			}
			for k, v := range header {
				res.Header()[k] = v
			}
			return res, nil
		}
	}
}

// peerRequest is what ClientIP reads of a Connect call: its peer and
// headers.
func peerRequest(req connect.AnyRequest) *http.Request {
	return &http.Request{RemoteAddr: req.Peer().Addr, Header: req.Header()}
}

func withHeaders(err error, h http.Header) error {
	var ce *connect.Error
	if errors.As(err, &ce) {
		for k, v := range h {
			ce.Meta()[k] = v
		}
	}
	return err
}

// connectErr turns an error into a Connect error. This is the one place
// where error kinds become Connect codes; validation details travel as a
// ValidationError detail.
func connectErr(err error) error {
	var ce *connect.Error
	if errors.As(err, &ce) {
		return ce
	}
	var e *payment.Error
	if !errors.As(err, &e) {
		if service.Unavailable(err) {
			return connectUnavailable("The service is unavailable for a moment; retry after " + rest.RetryAfterUnavailable + " s")
		}
		return connect.NewError(connect.CodeInternal, errors.New("internal server error"))
	}
	if e.Kind == payment.KindUnavailable {
		return connectUnavailable(e.Message)
	}
	code := map[payment.Kind]connect.Code{
		payment.KindValidation:      connect.CodeInvalidArgument,
		payment.KindNotFound:        connect.CodeNotFound,
		payment.KindConflict:        connect.CodeAlreadyExists,
		payment.KindUnauthenticated: connect.CodeUnauthenticated,
		payment.KindForbidden:       connect.CodePermissionDenied,
		payment.KindRateLimited:     connect.CodeResourceExhausted,
		payment.KindUnavailable:     connect.CodeUnavailable,
	}[e.Kind]
	if code == 0 {
		code = connect.CodeInternal
	}
	out := connect.NewError(code, errors.New(e.Message))
	if len(e.Details) > 0 {
		v := &v1.ValidationError{}
		for _, d := range e.Details {
			v.Violations = append(v.Violations, &v1.FieldViolation{Field: d.Field, Message: d.Message})
		}
		if detail, derr := connect.NewErrorDetail(v); derr == nil {
			out.AddDetail(detail)
		}
	}
	return out
}

// listQuery reads a proto ListQuery through the same parser as the REST
// query string, so both transports validate alike.
func listQuery(q *v1.ListQuery, statuses []string) (payment.ListQuery, error) {
	v := url.Values{}
	if q != nil {
		if q.Page != 0 {
			v.Set("page", strconv.Itoa(int(q.Page)))
		}
		if q.Limit != 0 {
			v.Set("limit", strconv.Itoa(int(q.Limit)))
		}
		if q.Status != "" {
			v.Set("status", q.Status)
		}
		if q.From != "" {
			v.Set("from", q.From)
		}
		if q.To != "" {
			v.Set("to", q.To)
		}
		if q.IsLive != nil {
			v.Set("isLive", strconv.FormatBool(*q.IsLive))
		}
	}
	return rest.ParseListQuery(v, statuses)
}

func pbPagination(q payment.ListQuery, total int) *v1.Pagination {
	p := rest.NewPagination(q, total)
	return &v1.Pagination{Page: int32(p.Page), Limit: int32(p.Limit), Total: int32(p.Total), TotalPages: int32(p.TotalPages),
		HasNextPage: p.HasNextPage, HasPreviousPage: p.HasPreviousPage}
}

type paymentsService struct{ s *Server }

func principalOf(ctx context.Context) payment.Principal {
	p, _ := ctx.Value(rest.PrincipalKey).(payment.Principal)
	return p
}

func (h *paymentsService) GetProject(ctx context.Context, req *connect.Request[v1.GetProjectRequest]) (*connect.Response[v1.GetProjectResponse], error) {
	p, err := h.s.Svc.Checkout().GetProject(ctx, principalOf(ctx), req.Msg.ProjectId)
	return procedureAnswer(err, func() *v1.GetProjectResponse { return &v1.GetProjectResponse{Project: pbProject(views.ProjectOf(p))} })
}

func (h *paymentsService) CreatePaymentPlan(ctx context.Context, req *connect.Request[v1.CreatePaymentPlanRequest]) (*connect.Response[v1.CreatePaymentPlanResponse], error) {
	m := req.Msg
	in := payment.PlanInput{Title: m.Title, PricingModel: m.PricingModel, AmountUSD: m.AmountUsd, MinAmountUSD: m.MinAmountUsd,
		MaxAmountUSD: m.MaxAmountUsd, RedirectURL: m.RedirectUrl, ExpiresAt: m.ExpiresAt}
	for _, p := range m.AcceptedAssetPolicies {
		in.AcceptedAssetPolicies = append(in.AcceptedAssetPolicies, payment.PolicyInput{PolicyType: p.PolicyType,
			AssetDefinitionID: p.AssetDefinitionId, EnvironmentScope: p.EnvironmentScope, ChainScope: p.ChainScope, Priority: p.Priority})
	}
	if mi := m.MerchantInfo; mi != nil {
		in.MerchantInfo = &payment.MerchantInfo{Name: mi.Name, Email: mi.Email, Website: mi.Website, LogoURL: mi.LogoUrl}
	}
	plan, err := h.s.Svc.Checkout().CreatePlan(ctx, principalOf(ctx), m.ProjectId, in)
	return procedureAnswer(err, func() *v1.CreatePaymentPlanResponse {
		return &v1.CreatePaymentPlanResponse{PaymentPlan: pbPlan(views.PlanOf(plan))}
	})
}

func (h *paymentsService) ListPaymentPlans(ctx context.Context, req *connect.Request[v1.ListPaymentPlansRequest]) (*connect.Response[v1.ListPaymentPlansResponse], error) {
	q, err := listQuery(req.Msg.Query, rest.PlanStatuses)
	if err != nil {
		return nil, err
	}
	page, err := h.s.Svc.Checkout().ListPlans(ctx, principalOf(ctx), req.Msg.ProjectId, q)
	if err != nil {
		return nil, err
	}
	out := &v1.ListPaymentPlansResponse{Pagination: pbPagination(q, page.Total)}
	for _, p := range page.Items {
		out.PaymentPlans = append(out.PaymentPlans, pbPlan(views.PlanOf(p)))
	}
	return connect.NewResponse(out), nil
}

func (h *paymentsService) GetPaymentPlan(ctx context.Context, req *connect.Request[v1.GetPaymentPlanRequest]) (*connect.Response[v1.GetPaymentPlanResponse], error) {
	plan, err := h.s.Svc.Checkout().GetPlan(ctx, principalOf(ctx), req.Msg.ProjectId, req.Msg.PlanId)
	return procedureAnswer(err, func() *v1.GetPaymentPlanResponse {
		return &v1.GetPaymentPlanResponse{PaymentPlan: pbPlan(views.PlanOf(plan))}
	})
}

func (h *paymentsService) ListTransactions(ctx context.Context, req *connect.Request[v1.ListTransactionsRequest]) (*connect.Response[v1.ListTransactionsResponse], error) {
	q, err := listQuery(req.Msg.Query, rest.TxStatuses)
	if err != nil {
		return nil, err
	}
	page, err := h.s.Svc.Payments().ListTransactions(ctx, principalOf(ctx), req.Msg.ProjectId, q)
	if err != nil {
		return nil, err
	}
	out := &v1.ListTransactionsResponse{Pagination: pbPagination(q, page.Total)}
	for _, t := range page.Items {
		out.Transactions = append(out.Transactions, pbTx(views.TransactionOf(t)))
	}
	return connect.NewResponse(out), nil
}

func (h *paymentsService) GetTransaction(ctx context.Context, req *connect.Request[v1.GetTransactionRequest]) (*connect.Response[v1.GetTransactionResponse], error) {
	t, err := h.s.Svc.Payments().GetTransaction(ctx, principalOf(ctx), req.Msg.ProjectId, req.Msg.TransactionId)
	return procedureAnswer(err, func() *v1.GetTransactionResponse {
		return &v1.GetTransactionResponse{Transaction: pbTx(views.TransactionOf(t))}
	})
}

func (h *paymentsService) ListCheckoutSessions(ctx context.Context, req *connect.Request[v1.ListCheckoutSessionsRequest]) (*connect.Response[v1.ListCheckoutSessionsResponse], error) {
	q, err := listQuery(req.Msg.Query, rest.SessionStatuses)
	if err != nil {
		return nil, err
	}
	page, err := h.s.Svc.Checkout().ListSessions(ctx, principalOf(ctx), req.Msg.ProjectId, q)
	if err != nil {
		return nil, err
	}
	out := &v1.ListCheckoutSessionsResponse{Pagination: pbPagination(q, page.Total)}
	for _, v := range page.Items {
		out.CheckoutSessions = append(out.CheckoutSessions, pbSession(h.s.SessionView(v)))
	}
	return connect.NewResponse(out), nil
}

func (h *paymentsService) GetProjectCheckoutSession(ctx context.Context, req *connect.Request[v1.GetProjectCheckoutSessionRequest]) (*connect.Response[v1.GetProjectCheckoutSessionResponse], error) {
	v, err := h.s.Svc.Checkout().GetSession(ctx, principalOf(ctx), req.Msg.ProjectId, req.Msg.SessionId)
	return procedureAnswer(err, func() *v1.GetProjectCheckoutSessionResponse {
		return &v1.GetProjectCheckoutSessionResponse{CheckoutSession: pbSession(h.s.SessionView(v))}
	})
}

func (h *paymentsService) CreateRefund(ctx context.Context, req *connect.Request[v1.CreateRefundRequest]) (*connect.Response[v1.CreateRefundResponse], error) {
	m := req.Msg
	in := payment.RefundInput{AssetDefinitionID: m.AssetDefinitionId, Amount: m.Amount, AmountUSD: m.AmountUsd, Address: m.Address, Reason: m.Reason}
	if m.CheckoutSessionId == nil {
		in.Problems.Add("checkoutSessionId", "is required")
	}
	refund, token, err := h.s.Svc.MoneyOut().CreateRefund(ctx, principalOf(ctx), m.ProjectId, m.GetCheckoutSessionId(), in)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&v1.CreateRefundResponse{Refund: pbRefund(h.s.moneyOut.CreatedRefund(refund, token))}), nil
}

func (h *paymentsService) ListRefunds(ctx context.Context, req *connect.Request[v1.ListRefundsRequest]) (*connect.Response[v1.ListRefundsResponse], error) {
	q, err := listQuery(req.Msg.Query, rest.RefundStatuses)
	if err != nil {
		return nil, err
	}
	if id := req.Msg.CheckoutSessionId; id != "" && !payment.ValidID(payment.PrefixSession, id) {
		var probs payment.Problems
		probs.Add("checkoutSessionId", "is not a checkout session ID")
		return nil, probs.Err()
	}
	page, err := h.s.Svc.MoneyOut().ListRefunds(ctx, principalOf(ctx), req.Msg.ProjectId, req.Msg.CheckoutSessionId, q)
	if err != nil {
		return nil, err
	}
	out := &v1.ListRefundsResponse{Pagination: pbPagination(q, page.Total)}
	for _, r := range page.Items {
		out.Refunds = append(out.Refunds, pbRefund(views.RefundOf(r)))
	}
	return connect.NewResponse(out), nil
}

func (h *paymentsService) GetRefund(ctx context.Context, req *connect.Request[v1.GetRefundRequest]) (*connect.Response[v1.GetRefundResponse], error) {
	r, err := h.s.Svc.MoneyOut().GetRefund(ctx, principalOf(ctx), req.Msg.ProjectId, req.Msg.RefundId)
	return procedureAnswer(err, func() *v1.GetRefundResponse { return &v1.GetRefundResponse{Refund: pbRefund(views.RefundOf(r))} })
}

func (h *paymentsService) SetRefundAddress(ctx context.Context, req *connect.Request[v1.SetRefundAddressRequest]) (*connect.Response[v1.SetRefundAddressResponse], error) {
	r, err := h.s.Svc.MoneyOut().SetRefundAddress(ctx, principalOf(ctx), req.Msg.ProjectId, req.Msg.RefundId, req.Msg.Address)
	return procedureAnswer(err, func() *v1.SetRefundAddressResponse {
		return &v1.SetRefundAddressResponse{Refund: pbRefund(views.RefundOf(r))}
	})
}

func (h *paymentsService) ReportRefundTransaction(ctx context.Context, req *connect.Request[v1.ReportRefundTransactionRequest]) (*connect.Response[v1.ReportRefundTransactionResponse], error) {
	r, err := h.s.Svc.MoneyOut().ReportRefundSent(ctx, principalOf(ctx), req.Msg.ProjectId, req.Msg.RefundId, req.Msg.TxHash)
	return procedureAnswer(err, func() *v1.ReportRefundTransactionResponse {
		return &v1.ReportRefundTransactionResponse{Refund: pbRefund(views.RefundOf(r))}
	})
}

func (h *paymentsService) CancelRefund(ctx context.Context, req *connect.Request[v1.CancelRefundRequest]) (*connect.Response[v1.CancelRefundResponse], error) {
	r, err := h.s.Svc.MoneyOut().CancelRefund(ctx, principalOf(ctx), req.Msg.ProjectId, req.Msg.RefundId)
	return procedureAnswer(err, func() *v1.CancelRefundResponse { return &v1.CancelRefundResponse{Refund: pbRefund(views.RefundOf(r))} })
}

// CreatePayoutBatch takes the batch's JSON form: each payout is labeled
// payouts[i] as the REST decoder labels it, so that a bad line's problems
// carry the same names. A batch is approved through REST only, by an
// owner freshly signed in: no procedure approves.
func (h *paymentsService) CreatePayoutBatch(ctx context.Context, req *connect.Request[v1.CreatePayoutBatchRequest]) (*connect.Response[v1.CreatePayoutBatchResponse], error) {
	m := req.Msg
	in := payment.PayoutBatchInput{FromAddress: m.FromAddress, Reference: m.Reference}
	for i, l := range m.Payouts {
		in.Lines = append(in.Lines, payment.PayoutLine{Label: fmt.Sprintf("payouts[%d]", i), Address: l.Address,
			AssetDefinitionID: l.Asset, Amount: l.Amount, Reference: l.Reference})
	}
	rec, err := h.s.Svc.MoneyOut().CreatePayoutBatch(ctx, principalOf(ctx), m.ProjectId, in)
	return procedureAnswer(err, func() *v1.CreatePayoutBatchResponse {
		return &v1.CreatePayoutBatchResponse{PayoutBatch: pbBatch(views.BatchDetailOf(rec))}
	})
}

func (h *paymentsService) ListPayoutBatches(ctx context.Context, req *connect.Request[v1.ListPayoutBatchesRequest]) (*connect.Response[v1.ListPayoutBatchesResponse], error) {
	q, err := listQuery(req.Msg.Query, rest.BatchStatuses)
	if err != nil {
		return nil, err
	}
	page, err := h.s.Svc.MoneyOut().ListPayoutBatches(ctx, principalOf(ctx), req.Msg.ProjectId, q)
	if err != nil {
		return nil, err
	}
	out := &v1.ListPayoutBatchesResponse{Pagination: pbPagination(q, page.Total)}
	for _, b := range page.Items {
		out.PayoutBatches = append(out.PayoutBatches, pbBatch(views.BatchOf(b)))
	}
	return connect.NewResponse(out), nil
}

func (h *paymentsService) GetPayoutBatch(ctx context.Context, req *connect.Request[v1.GetPayoutBatchRequest]) (*connect.Response[v1.GetPayoutBatchResponse], error) {
	rec, err := h.s.Svc.MoneyOut().PayoutBatch(ctx, principalOf(ctx), req.Msg.ProjectId, req.Msg.BatchId)
	return procedureAnswer(err, func() *v1.GetPayoutBatchResponse {
		return &v1.GetPayoutBatchResponse{PayoutBatch: pbBatch(views.BatchDetailOf(rec))}
	})
}

func (h *paymentsService) CancelPayoutBatch(ctx context.Context, req *connect.Request[v1.CancelPayoutBatchRequest]) (*connect.Response[v1.CancelPayoutBatchResponse], error) {
	rec, err := h.s.Svc.MoneyOut().CancelPayoutBatch(ctx, principalOf(ctx), req.Msg.ProjectId, req.Msg.BatchId)
	return procedureAnswer(err, func() *v1.CancelPayoutBatchResponse {
		return &v1.CancelPayoutBatchResponse{PayoutBatch: pbBatch(views.BatchDetailOf(rec))}
	})
}

func (h *paymentsService) GetPayout(ctx context.Context, req *connect.Request[v1.GetPayoutRequest]) (*connect.Response[v1.GetPayoutResponse], error) {
	p, err := h.s.Svc.MoneyOut().GetPayout(ctx, principalOf(ctx), req.Msg.ProjectId, req.Msg.PayoutId)
	return procedureAnswer(err, func() *v1.GetPayoutResponse { return &v1.GetPayoutResponse{Payout: pbPayout(views.PayoutOf(p))} })
}

func (h *paymentsService) ReportPayoutTransaction(ctx context.Context, req *connect.Request[v1.ReportPayoutTransactionRequest]) (*connect.Response[v1.ReportPayoutTransactionResponse], error) {
	p, err := h.s.Svc.MoneyOut().ReportPayoutSent(ctx, principalOf(ctx), req.Msg.ProjectId, req.Msg.PayoutId, req.Msg.TxHash)
	return procedureAnswer(err, func() *v1.ReportPayoutTransactionResponse {
		return &v1.ReportPayoutTransactionResponse{Payout: pbPayout(views.PayoutOf(p))}
	})
}

func (h *paymentsService) CancelPayout(ctx context.Context, req *connect.Request[v1.CancelPayoutRequest]) (*connect.Response[v1.CancelPayoutResponse], error) {
	p, err := h.s.Svc.MoneyOut().CancelPayout(ctx, principalOf(ctx), req.Msg.ProjectId, req.Msg.PayoutId)
	return procedureAnswer(err, func() *v1.CancelPayoutResponse { return &v1.CancelPayoutResponse{Payout: pbPayout(views.PayoutOf(p))} })
}

type checkoutService struct{ s *Server }

func (h *checkoutService) CreateCheckoutSession(ctx context.Context, req *connect.Request[v1.CreateCheckoutSessionRequest]) (*connect.Response[v1.CreateCheckoutSessionResponse], error) {
	m := req.Msg
	in := payment.SessionInput{PaymentPlanID: m.PaymentPlanId, Email: m.Email, AmountUSD: m.AmountUsd}
	switch {
	case m.MetadataJson != nil && len(m.Metadata) > 0:
		in.Problems.Add("metadata", "send metadata or metadata_json, not both")
	case m.MetadataJson != nil:
		v, ok := payment.DecodeMetadata(*m.MetadataJson)
		if !ok {
			in.Problems.Add("metadata_json", "must be a JSON object")
		}
		in.Metadata = v
	case len(m.Metadata) > 0:
		md := make(map[string]any, len(m.Metadata))
		for k, v := range m.Metadata {
			md[k] = v
		}
		in.Metadata = md
	}
	v, err := h.s.Svc.Checkout().CreateSession(ctx, rest.CallerKey(ctx), in)
	return procedureAnswer(err, func() *v1.CreateCheckoutSessionResponse {
		return &v1.CreateCheckoutSessionResponse{CheckoutSession: pbSession(h.s.SessionView(v))}
	})
}

func (h *checkoutService) GetCheckoutSession(ctx context.Context, req *connect.Request[v1.GetCheckoutSessionRequest]) (*connect.Response[v1.GetCheckoutSessionResponse], error) {
	v, err := h.s.Svc.Checkout().SessionByToken(ctx, req.Msg.Token)
	return procedureAnswer(err, func() *v1.GetCheckoutSessionResponse {
		return &v1.GetCheckoutSessionResponse{CheckoutSession: pbPublicSession(h.s.PublicSessionView(v))}
	})
}

func (h *checkoutService) ListAssets(ctx context.Context, _ *connect.Request[v1.ListAssetsRequest]) (*connect.Response[v1.ListAssetsResponse], error) {
	out := &v1.ListAssetsResponse{}
	for _, a := range h.s.Svc.Assets() {
		out.Assets = append(out.Assets, &v1.Asset{Id: a.ID, Symbol: a.Symbol, Name: a.Name, Decimals: int32(a.Decimals),
			Network: a.Network, ChainId: a.ChainID, TokenAddress: a.TokenAddress, IsLive: a.IsLive,
			PriceSource: &v1.PriceSource{Kind: a.Price.Kind, Aggregator: a.Price.Aggregator,
				HeartbeatSeconds: a.Price.HeartbeatSeconds, Network: a.Price.Network}})
	}
	return connect.NewResponse(out), nil
}

// procedureAnswer is a procedure's answer: the service's error as it is, or the
// response msg makes of what the service returned.
func procedureAnswer[M any](err error, msg func() *M) (*connect.Response[M], error) {
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(msg()), nil
}
