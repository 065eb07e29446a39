package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/shopspring/decimal"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/dev/devchain"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service"
	"github.com/paymentsd/paymentsd/store"
)

// noWorkflows is a Temporal that holds no workflows: what the
// reconciliation asks of it is answered with none, and anything else it
// was asked would panic.
type noWorkflows struct{ client.Client }

func (noWorkflows) ListWorkflow(context.Context, *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error) {
	return &workflowservice.ListWorkflowExecutionsResponse{}, nil
}

func (noWorkflows) Close() {}

// outgoingFixture records, in a project of st, what a refund and a
// payout finalized look like: a completed session paid 10 USDC with a
// refund of it, and a completed batch with one payout, each from the
// address that sent its transfer.
type outgoingFixture struct {
	st        *store.Store
	projectID string
	token     string
	now       time.Time
}

func (f outgoingFixture) outgoing(from, amount, to, hash string) payment.Outgoing {
	return payment.Outgoing{Status: payment.RefundFinalized, Network: "devnet", ChainID: 1337, AssetDefinitionID: "usdc-devnet",
		Symbol: "USDC", Decimals: 6, TokenAddress: f.token, AmountBaseUnits: amount, FromAddress: from, ToAddress: to, TxHash: hash}
}

func (f outgoingFixture) refund(t *testing.T, from, amount, to, hash string) string {
	t.Helper()
	ctx := context.Background()
	usd := decimal.RequireFromString("10")
	plan := payment.Plan{ID: payment.NewID(payment.PrefixPlan, f.now), ProjectID: f.projectID, Title: "T",
		PricingModel: payment.PricingFixedUSD, AmountUSD: &usd, Status: payment.PlanActive, CreatedAt: f.now}
	if err := f.st.Checkout().CreatePlan(ctx, plan, nil); err != nil {
		t.Fatal(err)
	}
	seq := time.Now().UnixNano()
	cs := payment.Session{ID: payment.NewID(payment.PrefixSession, f.now), TokenHash: payment.HashSecret(fmt.Sprint("t", seq)),
		ProjectID: f.projectID, PaymentPlanID: plan.ID, Status: payment.SessionCompleted, AmountUSD: usd,
		DepositAddress: from, ExpiresAt: f.now, QuoteExpiresAt: f.now, CreatedAt: f.now}
	if err := f.st.Checkout().InsertSession(ctx, cs, nil); err != nil {
		t.Fatal(err)
	}
	paid := payment.Transaction{ID: payment.NewID(payment.PrefixTx, f.now), ProjectID: f.projectID, CheckoutSessionID: cs.ID,
		PaymentPlanID: plan.ID, Status: payment.TxFinalized, Network: "devnet", ChainID: 1337, TxHash: fmt.Sprintf("0x%064x", seq),
		ToAddress: cs.DepositAddress, AssetDefinitionID: "usdc-devnet", Symbol: "USDC", Amount: "10", AmountBaseUnits: "10000000",
		AmountUSD: usd, Version: 1, CreatedAt: f.now, UpdatedAt: f.now}
	if err := f.st.Payments().InsertTransaction(ctx, paid); err != nil {
		t.Fatal(err)
	}
	r, err := f.st.MoneyOut().CreateRefund(ctx, payment.Principal{ProjectID: f.projectID}, cs.ID,
		func(payment.Session, []payment.Transaction, []payment.Refund) (payment.Refund, error) {
			return payment.Refund{ID: payment.NewID(payment.PrefixRefund, f.now), ProjectID: f.projectID, CheckoutSessionID: cs.ID,
				Outgoing: f.outgoing(from, amount, to, hash), AddressSource: payment.AddressFromMerchant, Version: 1, CreatedAt: f.now, UpdatedAt: f.now}, nil
		}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r.ID
}

func (f outgoingFixture) payout(t *testing.T, from, amount, to, hash string) string {
	t.Helper()
	b := payment.PayoutBatch{ID: payment.NewID(payment.PrefixPayoutBatch, f.now), ProjectID: f.projectID, Status: payment.BatchCompleted,
		FromAddress: from, Count: 1, Version: 1, CreatedAt: f.now, UpdatedAt: f.now}
	p := payment.Payout{ID: payment.NewID(payment.PrefixPayout, f.now), BatchID: b.ID, ProjectID: f.projectID, Line: 1,
		Outgoing: f.outgoing(from, amount, to, hash),
		Version:  1, CreatedAt: f.now, UpdatedAt: f.now}
	if err := f.st.MoneyOut().CreatePayoutBatch(context.Background(), payment.BatchRecord{Batch: b, Payouts: []payment.Payout{p}}, nil); err != nil {
		t.Fatal(err)
	}
	return p.ID
}

// `paymentsd admin reconcile` checks money out on the networks the worker
// reads (NETWORKS): a refund and a payout finalized in transactions that
// pay them are found clean, and again on a second run. With the network's
// node down, the network is found unreachable and neither is checked;
// with no network configured, neither is checked and the findings name the
// variable to set.
func TestAdminReconcileChecksMoneyOutOnChain(t *testing.T) {
	ctx := context.Background()
	chain := startChain(t)
	st, url := testStore(t)
	p := createProject(t, service.New(service.Deps{Store: st}), "Reconciled shop")
	paid := func(from devchain.Account, to common.Address, amount int64) string {
		t.Helper()
		h, err := chain.TransferToken(ctx, from, to, big.NewInt(amount))
		if err == nil {
			_, err = chain.Mine(ctx, h)
		}
		if err != nil {
			t.Fatal(err)
		}
		return strings.ToLower(h.Hex())
	}
	customer, payee := common.HexToAddress("0xc0ffee000000000000000000000000000000beef"), common.HexToAddress("0xb0b0000000000000000000000000000000000b0b")
	f := outgoingFixture{st: st, projectID: p.Project.ID, token: chain.Token.Hex(), now: time.Now().UTC().Truncate(time.Microsecond)}
	refundID := f.refund(t, chain.Accounts[0].Address.Hex(), "2000000", customer.Hex(), paid(chain.Accounts[0], customer, 2_000_000))
	payoutID := f.payout(t, chain.Accounts[1].Address.Hex(), "1500000", payee.Hex(), paid(chain.Accounts[1], payee, 1_500_000))

	assets, _ := json.Marshal([]payment.Asset{{ID: "usdc-devnet", Symbol: "USDC", Name: "Dev USD Coin", Decimals: 6, Network: "devnet",
		ChainID: 1337, TokenAddress: chain.Token.Hex(), Price: payment.PriceSource{Kind: payment.PriceUSDPegged}}})
	networks := func(rpcURL string) string {
		b, _ := json.Marshal([]chainwatch.Network{{Key: "devnet", ChainID: 1337, RPCURLs: []string{rpcURL}, Confirmations: 1}})
		return string(b)
	}
	t.Setenv("DATABASE_URL", url)
	t.Setenv("ASSETS", string(assets))
	dial := dialTemporal
	dialTemporal = func(client.Options) (client.Client, error) { return noWorkflows{}, nil }
	defer func() { dialTemporal = dial }()
	reconcile := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := runReconcile(ctx, &out, append([]string{"--project", p.Project.ID}, args...))
		return out.String(), err
	}
	// found runs it for its findings, as JSON; it exits with an error
	// while any is left.
	found := func() map[string]service.Finding {
		t.Helper()
		out, err := reconcile("--json")
		var findings []service.Finding
		if jsonErr := json.Unmarshal([]byte(out), &findings); jsonErr != nil || (err == nil) != (len(findings) == 0) {
			t.Fatalf("reconcile --json: %v, %v\n%s", err, jsonErr, out)
		}
		byObject := map[string]service.Finding{}
		for _, f := range findings {
			byObject[f.ObjectID] = f
		}
		return byObject
	}

	t.Setenv("NETWORKS", networks(chain.URL))
	for _, run := range []string{"first", "second"} {
		if out, err := reconcile(); err != nil || out != "0 findings, 0 repaired, 0 left\n" {
			t.Fatalf("the %s run, with the chain that paid both: %v\n%s", run, err, out)
		}
	}

	// The node down: the network answers nothing.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + l.Addr().String()
	l.Close()
	t.Setenv("NETWORKS", networks(down))
	got := found()
	if f := got["devnet"]; len(got) != 3 || f.Kind != service.FindingNetworkUnreachable || f.Error != "not checked" {
		t.Fatalf("with the network's node down: %+v; want the network unreachable, the refund and the payout not checked", got)
	}
	for id, kind := range map[string]string{refundID: service.FindingRefundNotOnChain, payoutID: service.FindingPayoutNotOnChain} {
		if f := got[id]; f.Kind != kind || f.Error != "not checked" || !strings.Contains(f.Detail, "the network's nodes cannot be read") {
			t.Errorf("with the network's node down, %s: %+v", id, f)
		}
	}

	// No network configured.
	t.Setenv("NETWORKS", "")
	got = found()
	for id, kind := range map[string]string{refundID: service.FindingRefundNotOnChain, payoutID: service.FindingPayoutNotOnChain} {
		if f := got[id]; len(got) != 2 || f.Kind != kind || f.Error != "not checked" ||
			!strings.Contains(f.Detail, "the network is not configured here") || !strings.Contains(f.Detail, "NETWORKS") {
			t.Errorf("with no network configured, %s: %+v", id, got)
		}
	}
}

// `paymentsd admin reconcile` finds a finalized payment whose block a
// reorg deeper than finality took away, even with no worker running
// (finalized-block-gone), and, once it is recorded reversed, the
// reversal no one has settled (payment-reversed) until the merchant
// resolves the session.
func TestAdminReconcileFindsPaymentsReorgedPastFinality(t *testing.T) {
	ctx := context.Background()
	chain := startChain(t)
	st, url := testStore(t)
	p := createProject(t, service.New(service.Deps{Store: st}), "Reorged shop")
	f := outgoingFixture{st: st, projectID: p.Project.ID, token: chain.Token.Hex(), now: time.Now().UTC().Truncate(time.Microsecond)}
	refundID := f.refund(t, chain.Accounts[0].Address.Hex(), "1000000", chain.Accounts[1].Address.Hex(), fmt.Sprintf("0x%064x", 1))
	// The session's payment, finalized in a block of the chain.
	h, err := chain.TransferToken(ctx, chain.Accounts[2], chain.Accounts[3].Address, big.NewInt(10_000_000))
	if err != nil {
		t.Fatal(err)
	}
	receipt, err := chain.Mine(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	var txID, sessionID string
	if err := st.Pool().QueryRow(ctx, `UPDATE transactions SET block_number = $2, block_hash = $3
		WHERE project_id = $1 RETURNING id, checkout_session_id`, p.Project.ID, receipt.BlockNumber.Int64(),
		receipt.BlockHash.Hex()).Scan(&txID, &sessionID); err != nil {
		t.Fatal(err)
	}
	// The refund is not the point here: it is settled as canceled.
	if _, err := st.Pool().Exec(ctx, `UPDATE refunds SET status = 'canceled' WHERE id = $1`, refundID); err != nil {
		t.Fatal(err)
	}

	assets, _ := json.Marshal([]payment.Asset{{ID: "usdc-devnet", Symbol: "USDC", Name: "Dev USD Coin", Decimals: 6, Network: "devnet",
		ChainID: 1337, TokenAddress: chain.Token.Hex(), Price: payment.PriceSource{Kind: payment.PriceUSDPegged}}})
	networks, _ := json.Marshal([]chainwatch.Network{{Key: "devnet", ChainID: 1337, RPCURLs: []string{chain.URL}, Confirmations: 1}})
	t.Setenv("DATABASE_URL", url)
	t.Setenv("ASSETS", string(assets))
	t.Setenv("NETWORKS", string(networks))
	dial := dialTemporal
	dialTemporal = func(client.Options) (client.Client, error) { return noWorkflows{}, nil }
	defer func() { dialTemporal = dial }()
	reconcile := func() (string, error) {
		var out bytes.Buffer
		err := runReconcile(ctx, &out, []string{"--project", p.Project.ID})
		return out.String(), err
	}
	if out, err := reconcile(); err != nil || out != "0 findings, 0 repaired, 0 left\n" {
		t.Fatalf("with the payment's block on the chain: %v\n%s", err, out)
	}

	block, err := chain.Client().HeaderByNumber(ctx, receipt.BlockNumber)
	if err != nil {
		t.Fatal(err)
	}
	if err := chain.Fork(block.ParentHash); err != nil {
		t.Fatal(err)
	}
	chain.Rollback()
	for range 4 {
		chain.Commit()
	}
	out, err := reconcile()
	if err == nil || !regexp.MustCompile(service.FindingFinalizedBlockGone+` +`+txID).MatchString(out) || !strings.Contains(out, "no longer the chain's") {
		t.Fatalf("after a reorg past the payment's finality: %v\n%s", err, out)
	}

	// Recorded reversed (as its workflow does), its session flagged.
	if _, err := st.Pool().Exec(ctx, `UPDATE transactions SET status = 'reversed' WHERE id = $1`, txID); err != nil {
		t.Fatal(err)
	}
	if err := st.Chains().SettleSession(ctx, sessionID, f.now, nil); err != nil {
		t.Fatal(err)
	}
	out, err = reconcile()
	if err == nil || !strings.Contains(out, service.FindingPaymentReversed) || !strings.Contains(out, "reversal_settled") ||
		strings.Contains(out, service.FindingFinalizedBlockGone) {
		t.Fatalf("with the payment reversed and its session flagged: %v\n%s", err, out)
	}
	if err := st.Checkout().UpdateSession(ctx, sessionID, f.now, func(s *payment.Session) []payment.EventType {
		events, _ := s.Resolve(payment.ResolutionReversalSettled, f.now)
		return events
	}, nil); err != nil {
		t.Fatal(err)
	}
	if out, err := reconcile(); err != nil || out != "0 findings, 0 repaired, 0 left\n" {
		t.Fatalf("once the merchant settled the reversal: %v\n%s", err, out)
	}
}
