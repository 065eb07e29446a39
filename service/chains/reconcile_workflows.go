package chains

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/payment/views"
	"github.com/paymentsd/paymentsd/service/checkout"
	"github.com/paymentsd/paymentsd/workflows"
)

// workflowState is "running", "missing", or the status of the latest run
// of a workflow ID.
func (svc Service) workflowState(ctx context.Context, workflowID string) (string, error) {
	d, err := svc.Temporal.DescribeWorkflowExecution(ctx, workflowID, "")
	var missing *serviceerror.NotFound
	switch {
	case errors.As(err, &missing):
		return "missing", nil
	case err != nil:
		return "", fmt.Errorf("describe %s: %w", workflowID, err)
	}
	st := d.GetWorkflowExecutionInfo().GetStatus()
	if st == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return "running", nil
	}
	return statusName(st), nil
}

// eachWorkflow calls fn with every workflow execution the visibility
// query finds, scoped to o's project, page after page.
func (svc Service) eachWorkflow(ctx context.Context, query string, o ReconcileOptions, fn func(*workflowpb.WorkflowExecutionInfo) error) error {
	if o.ProjectID != "" {
		query += fmt.Sprintf(" AND %s = '%s'", workflows.ProjectID.GetName(), strings.ReplaceAll(o.ProjectID, "'", ""))
	}
	var token []byte
	for {
		page, err := svc.Temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query, NextPageToken: token})
		if err != nil {
			return fmt.Errorf("list workflows (%s): %w", query, err)
		}
		for _, e := range page.GetExecutions() {
			if err := fn(e); err != nil {
				return err
			}
		}
		if token = page.GetNextPageToken(); len(token) == 0 {
			return nil
		}
	}
}

// statusName is a workflow status as the findings say it: running,
// completed, terminated…
func statusName(st enumspb.WorkflowExecutionStatus) string {
	return strings.ToLower(strings.TrimPrefix(st.String(), "WORKFLOW_EXECUTION_STATUS_"))
}

// workflowsWithoutRecord finds session workflows, running or completed,
// whose session the records lack, and records each again from its
// workflow's input and state.
func (svc Service) workflowsWithoutRecord(ctx context.Context, o ReconcileOptions) ([]Finding, error) {
	// A completed workflow within Temporal's retention knows its session's
	// end as well as a running one knows its state.
	query := fmt.Sprintf("WorkflowType = '%s' AND (ExecutionStatus = 'Running' OR ExecutionStatus = 'Completed')", workflows.WorkflowCheckoutSession)
	var out []Finding
	err := svc.eachWorkflow(ctx, query, o, func(e *workflowpb.WorkflowExecutionInfo) error {
		wfID := e.GetExecution().GetWorkflowId()
		sessionID := strings.TrimPrefix(wfID, workflows.CheckoutSessionWorkflowID(""))
		if _, err := svc.Store.Checkout().SessionByID(ctx, sessionID); !errors.Is(err, payment.ErrNotFound) {
			return err
		}
		f := Finding{Kind: FindingWorkflowWithoutRecord, ObjectID: sessionID,
			Detail: "its workflow " + wfID + " is " + statusName(e.GetStatus()) + "; the records lack the session"}
		if o.Repair {
			if note, err := svc.recordFromWorkflow(ctx, wfID, e.GetExecution().GetRunId()); err != nil {
				f.Error = err.Error()
			} else {
				f.Repaired = true
				f.Detail += note
			}
		}
		out = append(out, f)
		return nil
	})
	return out, err
}

// transactionsWithoutRecord finds transaction workflows whose transaction
// the records lack and, with Repair, runs each again from its input: it
// reads the chain, records the transaction as it stands and tells its
// session, which counts a transfer once however often it is told.
func (svc Service) transactionsWithoutRecord(ctx context.Context, o ReconcileOptions) ([]Finding, error) {
	var out []Finding
	seen := map[string]bool{}
	err := svc.eachWorkflow(ctx, fmt.Sprintf("WorkflowType = '%s'", workflows.WorkflowTransaction), o, func(e *workflowpb.WorkflowExecutionInfo) error {
		ex := e.GetExecution()
		if seen[ex.GetWorkflowId()] {
			return nil // an earlier run of the same transaction
		}
		seen[ex.GetWorkflowId()] = true
		// The workflow ID names the transaction: most are recorded, and
		// their histories need not be read.
		if chainID, hash, ok := parseTransactionWorkflowID(ex.GetWorkflowId()); ok {
			if records, err := svc.Store.Payments().TransactionRecords(ctx, chainID, hash); err != nil || len(records) > 0 {
				return err
			}
		}
		var in workflows.TransactionInput
		err := svc.workflowInput(ctx, ex.GetWorkflowId(), ex.GetRunId(), &in)
		var deleted *serviceerror.NotFound
		if errors.As(err, &deleted) {
			return nil // deleted since it was listed
		} else if err != nil {
			return err
		}
		if records, err := svc.Store.Payments().TransactionRecords(ctx, in.Transfer.ChainID, in.Transfer.TxHash); err != nil || len(records) > 0 {
			return err
		}
		f := Finding{Kind: FindingTransactionWithoutRecord, ObjectID: in.Transfer.TxHash,
			Detail: fmt.Sprintf("its workflow %s is %s; the records lack the transaction of session %s", ex.GetWorkflowId(), statusName(e.GetStatus()), in.Session.ID)}
		switch {
		case !o.Repair:
		case e.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
			f.Error = "not repaired: its workflow runs and records the transaction at its next step"
		default:
			// A transfer to a shared recipient that matched no session
			// has no session to look for.
			if _, err := svc.Store.Checkout().SessionByID(ctx, in.Session.ID); err != nil && in.Session.ID != "" {
				f.Error = "not repaired: its session " + in.Session.ID + " is not in the records either: " + err.Error()
			} else if _, err := svc.Temporal.ExecuteWorkflow(ctx, workflows.TransactionStartOptions(in.Session, in.Transfer),
				workflows.WorkflowTransaction, in); err != nil {
				f.Error = err.Error()
			} else {
				f.Repaired = true
			}
		}
		out = append(out, f)
		return nil
	})
	return out, err
}

// parseTransactionWorkflowID reads the chain ID and hash out of a
// transaction workflow's ID (workflows.TransactionWorkflowID).
func parseTransactionWorkflowID(id string) (int64, string, bool) {
	parts := strings.Split(id, "/")
	if len(parts) != 3 || parts[0] != "transaction" || !payment.ValidTxHash(parts[2]) {
		return 0, "", false
	}
	chainID, err := strconv.ParseInt(parts[1], 10, 64)
	return chainID, parts[2], err == nil
}

// workflowInput decodes a workflow's input from the first event of its
// history into in.
func (svc Service) workflowInput(ctx context.Context, workflowID, runID string, in any) error {
	it := svc.Temporal.GetWorkflowHistory(ctx, workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	if !it.HasNext() {
		return fmt.Errorf("%s has no history", workflowID)
	}
	first, err := it.Next()
	if err != nil {
		return err
	}
	if err := converter.GetDefaultDataConverter().FromPayloads(first.GetWorkflowExecutionStartedEventAttributes().GetInput(), in); err != nil {
		return fmt.Errorf("decode %s's input: %w", workflowID, err)
	}
	return nil
}

// recordFromWorkflow records a session again from its workflow: the
// session as it was opened (the workflow's input), with its created event,
// then its state as the workflow knows it now (status, amount paid,
// exception, resolution), with the events of that change. A plan the
// records lost too is recorded again as a stand-in (standInPlan); the note
// says so.
func (svc Service) recordFromWorkflow(ctx context.Context, workflowID, runID string) (note string, err error) {
	var in workflows.CheckoutSessionInput
	if err := svc.workflowInput(ctx, workflowID, runID, &in); err != nil {
		return "", err
	}
	switch _, err := svc.Store.Checkout().PlanByID(ctx, in.Session.PaymentPlanID); {
	case errors.Is(err, payment.ErrNotFound):
		if err := svc.Store.Checkout().CreatePlan(ctx, standInPlan(in.Session, svc.Now()), checkout.RenderPlan); err != nil {
			return "", fmt.Errorf("record its plan %s again: %w", in.Session.PaymentPlanID, err)
		}
		note = "; its plan " + in.Session.PaymentPlanID + ", lost too, recorded again as an archived stand-in"
	case err != nil:
		return "", err
	}
	if err := svc.Store.Checkout().InsertSession(ctx, in.Session, views.SessionEvent); err != nil {
		return "", err
	}
	v, err := svc.Temporal.QueryWorkflow(ctx, workflowID, runID, workflows.QuerySessionState)
	if err != nil {
		return "", fmt.Errorf("query %s: %w", workflowID, err)
	}
	var st workflows.SessionState
	if err := v.Get(&st); err != nil {
		return "", err
	}
	paid, err := decimal.NewFromString(st.PaidUSD)
	if err != nil {
		return "", fmt.Errorf("%s's amount paid %q: %w", workflowID, st.PaidUSD, err)
	}
	return note, svc.Store.Checkout().UpdateSession(ctx, in.Session.ID, svc.Now(), func(s *payment.Session) []payment.EventType {
		s.Resolution = st.Resolution
		return s.Progress(payment.SessionProgress{Status: st.Status, PaidUSD: paid, Exception: st.Exception, CompletedAt: st.CompletedAt})
	}, views.SessionEvent)
}

// standInPlan is the plan of a session recorded again from its workflow
// when the records lost the plan as well: under its ID, archived (no new
// session opens on it), at the session's amount, accepting the session's
// assets, its title saying where it came from. What else the plan held
// (its title, redirect URL, merchant info, other assets) was lost with
// the backup; the merchant can read it from their own copy.
func standInPlan(s payment.Session, now time.Time) payment.Plan {
	amount := s.AmountUSD
	policies := []payment.Policy{}
	for _, o := range s.PaymentOptions {
		policies = append(policies, payment.Policy{PolicyType: payment.PolicyAssetDefinition, AssetDefinitionID: o.AssetDefinitionID,
			EnvironmentScope: payment.ScopeAll, ChainScope: []string{}})
	}
	return payment.Plan{ID: s.PaymentPlanID, ProjectID: s.ProjectID, IsLive: s.IsLive,
		Title: "Recorded again from checkout session " + s.ID + " after a restore", PricingModel: payment.PricingFixedUSD,
		AmountUSD: &amount, AcceptedAssetPolicies: policies, Status: payment.PlanArchived, CreatedAt: s.CreatedAt, UpdatedAt: now}
}
