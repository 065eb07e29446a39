package payments

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service/internal/core"
	"github.com/paymentsd/paymentsd/workflows"
)

// SubmitPayment registers a transaction hash the payer's wallet sent to a
// session's deposit address, mined or not: the session's workflow records
// it as a claim, pending until the transaction is mined and its transfers
// decide (see payment.MatchTransfers). It returns the session's record of
// that transaction, and never another session's: a hash that pays another
// session helps that session and fails this claim. nil means it was not
// recorded within the request's patience; it will be.
func (svc Service) SubmitPayment(ctx context.Context, token, network, txHash string) (*payment.Transaction, error) {
	v, err := svc.checkout().SessionByToken(ctx, token)
	if err != nil {
		return nil, err
	}
	s := v.Session
	var probs payment.Problems
	networks := []string{}
	for _, o := range s.PaymentOptions {
		if !slices.Contains(networks, o.Network) {
			networks = append(networks, o.Network)
		}
	}
	if !slices.Contains(networks, network) {
		probs.Add("network", "must be one of the session's networks: "+strings.Join(networks, ", "))
	}
	if !payment.ValidTxHash(txHash) {
		probs.Add("txHash", payment.TxHashProblem)
	}
	if err := probs.Err(); err != nil {
		return nil, err
	}
	c, ok := svc.Chains[network]
	if !ok {
		return nil, &payment.Error{Kind: payment.KindUnavailable, Message: "network " + network + " is not watched by this deployment"}
	}
	if err := svc.checkout().SessionWorkflow(ctx, s.ID); err != nil {
		return nil, err
	}
	in := workflows.SubmitInput{Network: network, ChainID: c.Network.ChainID, TxHash: strings.ToLower(txHash)}
	ctx, cancel := context.WithTimeout(ctx, submitPatience)
	defer cancel()
	var t payment.Transaction
	err = svc.Update(ctx, "submit payment", "network", workflows.SubmitPaymentUpdateOptions(s.ID, in), &t)
	switch {
	case errors.Is(err, core.ErrWorkflowEnded):
		return nil, payment.Conflict("The checkout session no longer takes payments")
	case errors.Is(err, context.DeadlineExceeded):
		// The workflow has it and has not recorded it yet: the answer
		// says the submission was accepted.
		return nil, nil
	case err != nil:
		return nil, err
	}
	return &t, nil
}

// submitPatience is how long a payer's submission waits for its record.
const submitPatience = 10 * time.Second

// ResumeTransaction starts again the workflow of an on-chain transaction
// the engine has records of, when it is not running (it failed, or was
// terminated): the new run brings the records in line with the chain and
// tells their sessions, so an operator resumes a stuck payment without
// editing the database. A running workflow is left as it is. It returns the
// workflow's ID.
func (svc Service) ResumeTransaction(ctx context.Context, chainID int64, txHash string) (string, error) {
	if !payment.ValidTxHash(txHash) {
		var probs payment.Problems
		probs.Add("txHash", payment.TxHashProblem)
		return "", probs.Err()
	}
	records, err := svc.Store.Payments().TransactionRecords(ctx, chainID, txHash)
	if err != nil {
		return "", err
	}
	if len(records) == 0 {
		return "", payment.NotFound(fmt.Sprintf("Transaction %s on chain %d", txHash, chainID))
	}
	r := records[0]
	// A transfer to a shared recipient that matched no session has none:
	// its workflow follows it for the project.
	s := payment.Session{ProjectID: r.ProjectID, IsLive: r.IsLive}
	if r.CheckoutSessionID != "" {
		if s, err = svc.Store.Checkout().SessionByID(ctx, r.CheckoutSessionID); err != nil {
			return "", err
		}
	}
	p := workflows.SessionTransfer{SessionID: s.ID, Network: r.Network, ChainID: chainID, TxHash: r.TxHash, LogIndex: r.LogIndex,
		To: r.ToAddress, Source: "operator"}
	run, err := svc.Temporal.ExecuteWorkflow(ctx, workflows.TransactionStartOptions(s, p), workflows.WorkflowTransaction,
		workflows.TransactionInput{Transfer: p, Session: s})
	if err != nil {
		return "", fmt.Errorf("start transaction workflow: %w", err)
	}
	return run.GetID(), nil
}
