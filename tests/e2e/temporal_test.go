package e2e

import (
	"go.temporal.io/api/workflowservice/v1"
)

func listRequest(workflowID string) *workflowservice.ListWorkflowExecutionsRequest {
	return &workflowservice.ListWorkflowExecutionsRequest{Query: "WorkflowId = '" + workflowID + "'"}
}
