package workflows

import (
	"slices"

	"go.temporal.io/sdk/workflow"
)

// makePendingSessionStartDue runs MakePendingSessionStartDue as a local
// activity: it tells whether the session's workflow's start is still
// pending, and makes it due now.
func makePendingSessionStartDue(ctx workflow.Context, sessionID string) (pending bool, err error) {
	err = workflow.ExecuteLocalActivity(withLocalActivityOptions(ctx), ActivityMakePendingSessionStartDue, sessionID).Get(ctx, &pending)
	return pending, err
}

// makePendingSessionStartsDue runs MakePendingSessionStartsDue as a local
// activity for the sessions of transfers: it tells whether any of their
// workflows' starts is still pending, and makes those due now. No session,
// no activity.
func makePendingSessionStartsDue(ctx workflow.Context, transfers []SessionTransfer) (pending bool, err error) {
	var ids []string
	for _, p := range transfers {
		if p.SessionID != "" && !slices.Contains(ids, p.SessionID) {
			ids = append(ids, p.SessionID)
		}
	}
	if len(ids) == 0 {
		return false, nil
	}
	err = workflow.ExecuteLocalActivity(withLocalActivityOptions(ctx), ActivityMakePendingSessionStartsDue, ids).Get(ctx, &pending)
	return pending, err
}
