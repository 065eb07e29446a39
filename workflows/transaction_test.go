package workflows_test

import (
	"context"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/paymentsd/paymentsd/activities"
	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/dev/devchain"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/store/storetest"
	"github.com/paymentsd/paymentsd/workflows"
)

// A hash the payer submits that is never mined fails when the network's
// pending timeout (30 minutes of workflow time, skipped here) runs out.
func TestSubmittedHashNeverMinedFailsAtTimeout(t *testing.T) {
	ctx := context.Background()
	st, _, chains, cs, start := transactionFixture(t, 3)

	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.RegisterWorkflow(workflows.Transaction)
	(&activities.Activities{Store: st, Chains: chains}).Register(env)
	var told []payment.TransactionStatus
	ended := false
	// The session's workflow is not part of this test: record what it is told.
	env.OnSignalExternalWorkflow(mock.Anything, workflows.CheckoutSessionWorkflowID(cs.ID), "", workflows.SignalTxStatus, mock.Anything).
		Return(func(_, _, _, _ string, arg any) error {
			if u := arg.(workflows.TxStatus); u.Ended {
				ended = true
			} else {
				told = append(told, u.Status)
			}
			return nil
		})
	env.SetStartTime(start)
	hash := "0x" + "ab12" + "00000000000000000000000000000000000000000000000000000000000f"
	if _, err := st.Payments().RecordClaim(ctx, payment.Claim(cs, "devnet", 1337, hash, "tx_claim", start), nil); err != nil {
		t.Fatal(err)
	}
	env.ExecuteWorkflow(workflows.Transaction, workflows.TransactionInput{Session: cs, Transfer: workflows.SessionTransfer{
		SessionID: cs.ID, Network: "devnet", ChainID: 1337, TxHash: hash, LogIndex: payment.LogIndexClaim, To: cs.DepositAddress, Source: "payer"}})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	tx, err := st.Payments().TransactionByHash(ctx, 1337, hash)
	if err != nil {
		t.Fatal(err)
	}
	if tx.Status != payment.TxFailed || tx.FailureReason != "not mined within 30m0s" || len(tx.StatusHistory) != 2 {
		t.Fatalf("transaction = %s %q %v", tx.Status, tx.FailureReason, tx.StatusHistory)
	}
	if waited := tx.FailedAt.Sub(start); waited < 30*time.Minute || waited > 31*time.Minute {
		t.Fatalf("failed after %v, want the 30 minute timeout", waited)
	}
	if len(told) != 2 || told[0] != payment.TxPending || told[1] != payment.TxFailed || !ended {
		t.Fatalf("session was told %v, and of the end: %v", told, ended)
	}
}

// A transaction whose block a reorg takes away 20 minutes after it was
// seen goes back to pending, and its pending timeout (30 minutes) runs
// from then: it fails 30 minutes after the reorg, not 10.
func TestPendingTimeoutRunsFromTheReorg(t *testing.T) {
	ctx := context.Background()
	st, chain, chains, cs, start := transactionFixture(t, 1000)
	parent, err := chain.Client().HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	hash := payAndMine(t, chain, cs)

	env := transactionEnv(st, chains, cs, start)
	env.RegisterDelayedCallback(func() {
		if err := chain.Fork(parent.Hash()); err != nil {
			t.Error(err)
		}
		chain.Rollback() // the transaction is not mined again
		chain.Commit()
	}, 20*time.Minute)
	env.ExecuteWorkflow(workflows.Transaction, workflows.TransactionInput{Session: cs, Transfer: workflows.SessionTransfer{
		SessionID: cs.ID, Network: "devnet", ChainID: 1337, TxHash: hash.Hex(), LogIndex: -1, To: cs.DepositAddress, Source: "chainwatch"}})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	tx, err := st.Payments().TransactionByHash(ctx, 1337, hash.Hex())
	if err != nil {
		t.Fatal(err)
	}
	h := tx.StatusHistory
	if tx.Status != payment.TxFailed || len(h) != 3 || h[1].Status != payment.TxPending {
		t.Fatalf("transaction = %s %q %v", tx.Status, tx.FailureReason, h)
	}
	if waited := h[2].At.Sub(h[1].At); waited < 30*time.Minute || waited > 31*time.Minute {
		t.Fatalf("failed %v after the reorg sent it back to pending, want the 30 minute timeout", waited)
	}
}

// transactionFixture is a store, a dev chain watched as devnet (15 s
// blocks, a 30 minute pending timeout) and a recorded session paying 25
// USDC there, as of start.
func transactionFixture(t *testing.T, confirmations int) (*store.Store, *devchain.Chain, chainwatch.Chains, payment.Session, time.Time) {
	t.Helper()
	ctx := context.Background()
	st := storetest.NewStore(t)
	chain, err := devchain.Start(ctx, devchain.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { chain.Close() })
	catalog := payment.Catalog{Assets: []payment.Asset{{ID: "usdc-devnet", Symbol: "USDC", Decimals: 6, Network: "devnet",
		ChainID: 1337, TokenAddress: chain.Token.Hex(), Price: payment.PriceSource{Kind: payment.PriceUSDPegged}}}}
	chains, err := chainwatch.Connect(ctx, []chainwatch.Network{{Key: "devnet", ChainID: 1337, RPCURLs: []string{chain.URL},
		BlockTime: chainwatch.Duration(15 * time.Second), Confirmations: confirmations,
		PendingTimeout: chainwatch.Duration(30 * time.Minute)}}, catalog, nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().UTC().Truncate(time.Microsecond)
	cs := fixture(t, st, start)
	cs.DepositAddress = "0x7117F573757ea2B592989CC2dD840A662Db09bC8"
	cs.PaymentOptions = []payment.PaymentOption{{AssetDefinitionID: "usdc-devnet", Symbol: "USDC", Decimals: 6, AmountBaseUnits: "25000000"}}
	if err := st.Checkout().InsertSession(ctx, cs, nil); err != nil {
		t.Fatal(err)
	}
	return st, chain, chains, cs, start
}

// A transaction followed for long (waiting for a thousand confirmations
// of 15 s blocks) continues as new with its state before its history grows
// large, having recorded its transfer once.
func TestATransactionFollowedForLongContinuesAsNew(t *testing.T) {
	ctx := context.Background()
	st, chain, chains, cs, start := transactionFixture(t, 1000)
	hash := payAndMine(t, chain, cs)
	env := transactionEnv(st, chains, cs, start)
	env.ExecuteWorkflow(workflows.Transaction, workflows.TransactionInput{Session: cs, Transfer: workflows.SessionTransfer{
		SessionID: cs.ID, Network: "devnet", ChainID: 1337, TxHash: hash.Hex(), LogIndex: 0, To: cs.DepositAddress, Source: "chainwatch"}})
	if err := env.GetWorkflowError(); !workflow.IsContinueAsNewError(err) {
		t.Fatalf("after 500 looks the workflow ended with %v, want to continue as new", err)
	}
	tx, err := st.Payments().TransactionByHash(ctx, 1337, hash.Hex())
	if err != nil {
		t.Fatal(err)
	}
	if tx.Status != payment.TxConfirmed || tx.Version != 1 {
		t.Fatalf("transaction = %s version %d", tx.Status, tx.Version)
	}
}

// payAndMine pays the session 25 USDC in a block mined at once.
func payAndMine(t *testing.T, chain *devchain.Chain, cs payment.Session) common.Hash {
	t.Helper()
	ctx := context.Background()
	hash, err := chain.TransferToken(ctx, chain.Accounts[0], common.HexToAddress(cs.DepositAddress), big.NewInt(25_000_000))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chain.Mine(ctx, hash); err != nil {
		t.Fatal(err)
	}
	return hash
}

// transactionEnv runs the workflows with the real activities, as of start;
// the session's workflow is not part of it, and takes any signal.
func transactionEnv(st *store.Store, chains chainwatch.Chains, cs payment.Session, start time.Time) *testsuite.TestWorkflowEnvironment {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	workflows.Register(env)
	(&activities.Activities{Store: st, Chains: chains}).Register(env)
	env.OnSignalExternalWorkflow(mock.Anything, workflows.CheckoutSessionWorkflowID(cs.ID), "", workflows.SignalTxStatus, mock.Anything).Return(nil)
	env.SetStartTime(start)
	return env
}
