package core

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/workflows"
)

// ErrWorkflowEnded is an update sent to a workflow that has ended: it
// changes nothing, and the caller decides what the records alone may still
// do.
var ErrWorkflowEnded = errors.New("the workflow has ended")

// Update sends a change to a running workflow and waits for its answer,
// decoded into result unless that is nil. What can go wrong is sorted the
// one way every caller needs:
//   - the workflow has ended: ErrWorkflowEnded;
//   - the workflow refused the change by its rules: the merchant's error,
//     invalid input on field for workflows.ErrorInvalid, else a conflict
//     with the workflow's message;
//   - the engine failed (the database refused the change's audit entry,
//     Temporal did not answer, ctx ended): an error wrapped with what, which
//     the API answers as its own failure. The change was not made, or is
//     still being made when ctx ended (errors.Is context.DeadlineExceeded).
func (c *Core) Update(ctx context.Context, what, field string, opts client.UpdateWorkflowOptions, result any) error {
	h, err := c.Temporal.UpdateWorkflow(ctx, opts)
	if err == nil {
		err = h.Get(ctx, result)
	}
	var gone *serviceerror.NotFound
	var app *temporal.ApplicationError
	var late *client.WorkflowUpdateServiceTimeoutOrCanceledError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &gone):
		return ErrWorkflowEnded
	case errors.As(err, &late):
		// No worker took the update in time (one restarting, a Temporal
		// outage): the caller may try again, and every update is safe to
		// repeat.
		return &payment.Error{Kind: payment.KindUnavailable,
			Message: "The payment engine did not answer in time; the request may still take effect. Try again shortly"}
	case errors.As(err, &app) && app.Type() == workflows.ErrorAuditRefused:
		return fmt.Errorf("%s: %w", what, err)
	case errors.As(err, &app) && app.Type() == workflows.ErrorInvalid:
		var probs payment.Problems
		probs.Add(field, app.Message())
		return probs.Err()
	case errors.As(err, &app):
		return payment.Conflict(app.Message())
	default:
		return fmt.Errorf("%s: %w", what, err)
	}
}
