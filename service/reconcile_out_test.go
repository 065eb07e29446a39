package service_test

import (
	"context"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/dev/contracts/bindings"
	"github.com/paymentsd/paymentsd/dev/devchain"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service"
	"github.com/paymentsd/paymentsd/store/storetest"
)

// noWorkflows is a Temporal that holds no workflows: what the
// reconciliation asks of it is answered with none, and anything else it
// was asked would panic.
type noWorkflows struct{ client.Client }

func (noWorkflows) ListWorkflow(context.Context, *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error) {
	return &workflowservice.ListWorkflowExecutionsResponse{}, nil
}

// chainEnv is env over the dev chain: its USDC in the catalog, its network
// connected, Temporal holding no workflows.
func chainEnv(t *testing.T) (env, *devchain.Chain) {
	t.Helper()
	ctx := context.Background()
	chain, err := devchain.Start(ctx, devchain.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = chain.Close() })
	cat := payment.Catalog{Assets: []payment.Asset{{ID: "usdc-devnet", Symbol: "USDC", Decimals: 6, Network: "devnet", ChainID: 1337,
		TokenAddress: chain.Token.Hex(), Price: payment.PriceSource{Kind: payment.PriceUSDPegged}}}}
	chains, err := chainwatch.Connect(ctx, []chainwatch.Network{{Key: "devnet", ChainID: 1337, RPCURLs: []string{chain.URL}, Confirmations: 1}}, cat, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := storetest.NewStore(t)
	c := newClock()
	return env{svc: service.New(service.Deps{Store: st, Catalog: cat, Chains: chains, Temporal: noWorkflows{}, Now: c.Now}),
		store: st, clock: c}, chain
}

// mined sends a transaction with send and mines it.
func mined(t *testing.T, chain *devchain.Chain, send func() (common.Hash, error)) string {
	t.Helper()
	h, err := send()
	if err == nil {
		_, err = chain.Mine(context.Background(), h)
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.ToLower(h.Hex())
}

// proven makes a dev account an address m's project has proven it
// controls: a source of its payouts and refunds.
func (e env) proven(t *testing.T, m member, a devchain.Account) string {
	t.Helper()
	ctx := context.Background()
	w := wallet{key: a.Key, address: a.Address.Hex()}
	claim, err := e.svc.Checkout().ClaimRecipient(ctx, m.principal, m.principal.ProjectID, w.address, "pay.example.test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Checkout().VerifyRecipient(ctx, m.principal, m.principal.ProjectID, w.address, w.sign(t, claim.Challenge)); err != nil {
		t.Fatal(err)
	}
	return w.address
}

// recordedPaid records a refund or a payout (by its table) finalized in
// hash, as a record restored or made before the engine counted each
// transfer once would say (no transfer recorded for it).
func (e env) recordedPaid(t *testing.T, table, id, hash string) {
	t.Helper()
	if _, err := e.store.Pool().Exec(context.Background(), `UPDATE `+table+` SET status = 'finalized', tx_hash = $2 WHERE id = $1`,
		id, hash); err != nil {
		t.Fatal(err)
	}
}

// refundPaid records a refund of amount USDC to to from a paid session of
// m's project, finalized in hash.
func (e env) refundPaid(t *testing.T, m member, amount, to, hash string) payment.Refund {
	t.Helper()
	cs := e.paidSession(t, m, transfer{"10", payment.TxFinalized})
	r, _, err := e.svc.MoneyOut().CreateRefund(context.Background(), m.principal, m.principal.ProjectID, cs.ID,
		payment.RefundInput{Amount: ptr(amount), Address: ptr(to)})
	if err != nil {
		t.Fatal(err)
	}
	e.recordedPaid(t, "refunds", r.ID, hash)
	return r
}

// payoutPaid records an approved batch of m's project paying amount USDC
// from from to to, its payout finalized in hash.
func (e env) payoutPaid(t *testing.T, m member, from, amount, to, hash string) payment.Payout {
	t.Helper()
	ctx := context.Background()
	in := payment.PayoutBatchInput{FromAddress: ptr(from), Lines: []payment.PayoutLine{payoutLine("line 2", to, amount, "")}}
	rec, err := e.svc.MoneyOut().CreatePayoutBatch(ctx, m.principal, m.principal.ProjectID, in)
	if err != nil {
		t.Fatal(err)
	}
	if rec, err = e.svc.MoneyOut().ApprovePayoutBatch(ctx, m.principal, m.principal.ProjectID, rec.Batch.ID); err != nil {
		t.Fatal(err)
	}
	e.recordedPaid(t, "payouts", rec.Payouts[0].ID, hash)
	return rec.Payouts[0]
}

// reconciled is what a reconciliation of projectID ("": every project)
// finds, by kind and object.
func reconciled(t *testing.T, e env, projectID string) []service.Finding {
	t.Helper()
	found, err := e.svc.Chains().Reconcile(context.Background(), service.ReconcileOptions{ProjectID: projectID})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// objectsOf lists the objects of the findings of kind, sorted.
func objectsOf(found []service.Finding, kind string) []string {
	var out []string
	for _, f := range found {
		if f.Kind == kind {
			out = append(out, f.ObjectID)
		}
	}
	slices.Sort(out)
	return out
}

// One on-chain transfer recorded as paying two items of money out, of two
// projects, is found on each (on the scoped project's only, scoped). A
// multisend's transaction paying two payouts of the same amount to the
// same address, each by its own log, is not found; two recorded as paid
// by the same log of it are; and a third item recorded as paid by its two
// transfers is found, with the two others.
func TestReconcileFindsAnOutgoingTransferReused(t *testing.T) {
	e, chain := chainEnv(t)
	ctx := context.Background()
	shop, other := e.owner(t, "Shop"), e.owner(t, "Other shop")
	shopTreasury, otherTreasury := e.proven(t, shop, chain.Accounts[1]), e.proven(t, other, chain.Accounts[2])
	customer := common.HexToAddress("0xc0ffee000000000000000000000000000000beef")
	usdc := func(n int64) *big.Int { return big.NewInt(n * 1_000_000) }

	// One transfer of 2 USDC from the shop's treasury, recorded as the
	// shop's refund and as the other project's payout (its batch's
	// address edited to the shop's treasury, as a restored or edited
	// record could say: the engine refuses both since).
	one := mined(t, chain, func() (common.Hash, error) { return chain.TransferToken(ctx, chain.Accounts[1], customer, usdc(2)) })
	refund := e.refundPaid(t, shop, "2", customer.Hex(), one)
	payout := e.payoutPaid(t, other, otherTreasury, "2", customer.Hex(), one)
	if _, err := e.store.Pool().Exec(ctx, `UPDATE payouts SET from_address = $2 WHERE id = $1`, payout.ID, shopTreasury); err != nil {
		t.Fatal(err)
	}
	found := reconciled(t, e, "")
	if got, want := objectsOf(found, service.FindingOutgoingTransferReused), slices.Sorted(slices.Values([]string{refund.ID, payout.ID})); !slices.Equal(got, want) {
		t.Fatalf("one transfer recorded twice: %+v; want a finding on %v", found, want)
	}
	for _, f := range found {
		if f.Kind == service.FindingOutgoingTransferReused && (!strings.Contains(f.Detail, "its one transfer of 2 USDC") ||
			!strings.Contains(f.Detail, "(log ") || !strings.Contains(f.Detail, refund.ID) || !strings.Contains(f.Detail, payout.ID)) {
			t.Errorf("the finding does not name the transfer and both items: %+v", f)
		}
	}
	if len(found) != 2 {
		t.Fatalf("findings besides the reused transfer: %+v", found)
	}
	if got := objectsOf(reconciled(t, e, other.principal.ProjectID), service.FindingOutgoingTransferReused); !slices.Equal(got, []string{payout.ID}) {
		t.Fatalf("scoped to the payout's project: %v; want its payout only", got)
	}

	// A multisend from the other project's treasury: two transfers of 1
	// USDC to one address in one transaction, each paying a payout (of two
	// batches: a batch refuses two equal lines).
	payer := chain.Accounts[2]
	multisend, deployed, err := chain.Deploy(ctx, payer, common.FromHex(bindings.DevMultisendMetaData.Bin))
	if err != nil {
		t.Fatal(err)
	}
	mined(t, chain, func() (common.Hash, error) { return deployed, nil })
	mined(t, chain, func() (common.Hash, error) {
		return chain.Transact(ctx, payer, chain.Token, nil, bindings.NewDevUSDC().PackApprove(multisend, usdc(100)))
	})
	bob := common.HexToAddress("0xb0b0000000000000000000000000000000000b0b")
	batch := mined(t, chain, func() (common.Hash, error) {
		return chain.Transact(ctx, payer, multisend, nil, bindings.NewDevMultisend().PackSendToken(chain.Token,
			[]common.Address{bob, bob}, []*big.Int{usdc(1), usdc(1)}))
	})
	e.clock.Advance(time.Second)
	both := []payment.Payout{e.payoutPaid(t, other, otherTreasury, "1", bob.Hex(), batch), e.payoutPaid(t, other, otherTreasury, "1", bob.Hex(), batch)}
	if found := reconciled(t, e, other.principal.ProjectID); len(found) != 1 || found[0].ObjectID != payout.ID {
		t.Fatalf("a multisend's two transfers paying two payouts: %+v; want only the first transfer's finding", found)
	}
	// The transfer each is paid by, once recorded, is the one compared.
	pin := func(id string, log int) {
		t.Helper()
		if _, err := e.store.Pool().Exec(ctx, `UPDATE payouts SET log_index = $2 WHERE id = $1`, id, log); err != nil {
			t.Fatal(err)
		}
	}
	pin(both[0].ID, 0)
	pin(both[1].ID, 0)
	if got, want := objectsOf(reconciled(t, e, other.principal.ProjectID), service.FindingOutgoingTransferReused),
		slices.Sorted(slices.Values([]string{payout.ID, both[0].ID, both[1].ID})); !slices.Equal(got, want) {
		t.Fatalf("two payouts recorded as paid by one log of a multisend: %v; want %v", got, want)
	}
	pin(both[1].ID, 1)
	if found := reconciled(t, e, other.principal.ProjectID); len(found) != 1 || found[0].ObjectID != payout.ID {
		t.Fatalf("a multisend's two payouts recorded paid by its two logs: %+v", found)
	}

	// A third payout recorded as paid by the multisend's two transfers.
	e.clock.Advance(time.Second)
	third := e.payoutPaid(t, other, otherTreasury, "1", bob.Hex(), batch)
	found = reconciled(t, e, "")
	want := slices.Sorted(slices.Values([]string{refund.ID, payout.ID, both[0].ID, both[1].ID, third.ID}))
	if got := objectsOf(found, service.FindingOutgoingTransferReused); !slices.Equal(got, want) || len(found) != len(want) {
		t.Fatalf("three payouts recorded as paid by two transfers: %+v; want a finding on %v", found, want)
	}
	for _, f := range found {
		if f.ObjectID == third.ID && (!strings.Contains(f.Detail, "its 2 transfers of 1 USDC") || !strings.Contains(f.Detail, "(log 0, log 1)")) {
			t.Errorf("the finding does not say the transaction holds two such transfers: %+v", f)
		}
	}
}
