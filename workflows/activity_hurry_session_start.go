package workflows

import (
	"slices"

	"go.temporal.io/sdk/workflow"
)

// hurrySessionStart runs HurrySessionStart as a local activity: it tells
// whether the session's workflow's start is still pending, and makes it
// due now.
func hurrySessionStart(ctx workflow.Context, sessionID string) (pending bool, err error) {
	err = workflow.ExecuteLocalActivity(withLocalActivityOptions(ctx), ActivityHurrySessionStart, sessionID).Get(ctx, &pending)
	return pending, err
}

// hurrySessionStarts runs HurrySessionStarts as a local activity for the
// sessions of transfers: it tells whether any of their workflows' starts
// is still pending, and makes those due now. No session, no activity.
func hurrySessionStarts(ctx workflow.Context, transfers []SessionTransfer) (pending bool, err error) {
	var ids []string
	for _, p := range transfers {
		if p.SessionID != "" && !slices.Contains(ids, p.SessionID) {
			ids = append(ids, p.SessionID)
		}
	}
	if len(ids) == 0 {
		return false, nil
	}
	err = workflow.ExecuteLocalActivity(withLocalActivityOptions(ctx), ActivityHurrySessionStarts, ids).Get(ctx, &pending)
	return pending, err
}
