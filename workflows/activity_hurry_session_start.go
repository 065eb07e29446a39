package workflows

import (
	"go.temporal.io/sdk/workflow"
)

// hurrySessionStart runs HurrySessionStart as a local activity: it tells
// whether the session's workflow's start is still pending, and makes it
// due now.
func hurrySessionStart(ctx workflow.Context, sessionID string) (pending bool, err error) {
	err = workflow.ExecuteLocalActivity(withLocalActivityOptions(ctx), ActivityHurrySessionStart, sessionID).Get(ctx, &pending)
	return pending, err
}
