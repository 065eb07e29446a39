package workflows_test

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/paymentsd/paymentsd/workflows"
)

// The dispatcher starts the workflow of each delivery its dispatch could
// not make at once, under the delivery's own ID, and marks the events
// dispatched only after: a crash in between loses no delivery.
func TestTheDispatcherStartsDeliveriesBeforeItMarksTheirEvents(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(workflows.WebhookDispatcher, workflow.RegisterOptions{Name: workflows.WorkflowWebhookDispatcher})
	env.RegisterWorkflowWithOptions(workflows.WebhookDelivery, workflow.RegisterOptions{Name: workflows.WorkflowWebhookDelivery})
	env.RegisterActivityWithOptions(func(context.Context) (workflows.DispatchOutput, error) { return workflows.DispatchOutput{}, nil },
		activity.RegisterOptions{Name: workflows.ActivityDispatchEvents})
	env.RegisterActivityWithOptions(func(context.Context, workflows.MarkInput) error { return nil },
		activity.RegisterOptions{Name: workflows.ActivityMarkDispatched})

	retry := workflows.DeliveryStart{Input: workflows.DeliveryInput{DeliveryID: "whd_1", EventID: "evt_1", EndpointID: "we_1",
		FirstAttempt: 2, Retried: 1}, ProjectID: "proj_1"}
	env.OnActivity(workflows.ActivityDispatchEvents, mock.Anything).
		Return(workflows.DispatchOutput{Events: []string{"evt_1"}, Retries: []workflows.DeliveryStart{retry}}, nil).Once()
	env.OnActivity(workflows.ActivityDispatchEvents, mock.Anything).Return(workflows.DispatchOutput{}, nil)
	var order []string
	env.OnWorkflow(workflows.WorkflowWebhookDelivery, mock.Anything, retry.Input).Return(nil).Run(func(args mock.Arguments) {
		id := workflow.GetInfo(args.Get(0).(workflow.Context)).WorkflowExecution.ID
		order = append(order, "start "+id)
	})
	env.OnActivity(workflows.ActivityMarkDispatched, mock.Anything, workflows.MarkInput{Events: []string{"evt_1"}}).
		Return(nil).Run(func(mock.Arguments) { order = append(order, "mark evt_1") }).Once()

	env.ExecuteWorkflow(workflows.WorkflowWebhookDispatcher)
	if err := env.GetWorkflowError(); !workflow.IsContinueAsNewError(err) {
		t.Fatalf("dispatcher ended with %v, want to continue as new", err)
	}
	want := []string{"start " + workflows.WebhookDeliveryWorkflowID("evt_1", "we_1"), "mark evt_1"}
	if !slices.Equal(order, want) {
		t.Fatalf("order = %v, want %v", order, want)
	}
	env.AssertExpectations(t)
}
