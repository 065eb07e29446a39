package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/paymentsd/paymentsd/payment"
)

// FollowOutgoingInput names the refund or payout to look at.
type FollowOutgoingInput struct {
	ID string
	// PastFinality: the finality watch asks for a look at a finalized
	// item whose block may have left the chain.
	PastFinality bool `json:",omitempty"`
}

// FollowOutgoingOutput is where the item stands after the look, and when
// to look again.
type FollowOutgoingOutput struct {
	Status payment.RefundStatus
	TxHash string `json:",omitempty"`
	// Detail says where its transaction stands, for the Temporal UI.
	Detail string `json:",omitempty"`
	// Ended says nothing more is followed: the item is final, or was
	// canceled before its transaction was sent.
	Ended bool
	// Wait is how long until the next look.
	Wait time.Duration
}

// followOutgoing runs FollowOutgoing as a local activity.
func followOutgoing(ctx workflow.Context, in FollowOutgoingInput) (FollowOutgoingOutput, error) {
	var out FollowOutgoingOutput
	err := workflow.ExecuteLocalActivity(ctx, ActivityFollowOutgoing, in).Get(ctx, &out)
	return out, err
}
