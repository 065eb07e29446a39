package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/api"
	"github.com/paymentsd/paymentsd/dev/devchain"
	"github.com/paymentsd/paymentsd/internal/sweep"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/store/storetest"
)

// sendAPI is an API over a fresh database, with the dev chain's USDC in
// its catalog, and a project of it.
type sendAPI struct {
	st      *store.Store
	svc     *service.Service
	url     string
	project service.CreatedProject
}

func newSendAPI(t *testing.T, token common.Address) sendAPI {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, storetest.NewDB(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	catalog := payment.Catalog{Assets: []payment.Asset{{ID: "usdc-devnet", Symbol: "USDC", Name: "Dev USD Coin", Decimals: 6, Network: "devnet",
		ChainID: 1337, TokenAddress: token.Hex(), Price: payment.PriceSource{Kind: payment.PriceUSDPegged}}}}
	svc := service.New(service.Deps{Store: st, Catalog: catalog})
	p, err := svc.Checkout().CreateProject(ctx, "Sending shop")
	if err != nil {
		t.Fatal(err)
	}
	a, err := api.New(svc, api.Config{PublicURL: "http://shop.example"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(srv.Close)
	t.Setenv("PAYMENTSD_API_KEY", p.SandboxKey)
	return sendAPI{st: st, svc: svc, url: srv.URL, project: p}
}

// post calls the API with the project's sandbox key.
func (a sendAPI) post(t *testing.T, path, body string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, a.url+"/api/v1/projects/"+a.project.Project.ID+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+a.project.SandboxKey)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// digestOf is the digest a dry run printed.
func digestOf(t *testing.T, out string) string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if d, ok := strings.CutPrefix(line, "Plan digest: "); ok {
			return d
		}
	}
	t.Fatalf("the dry run printed no digest:\n%s", out)
	return ""
}

// `payout send` signs exactly the plan its dry run printed: --execute
// without the digest signs nothing; with the digest of a plan the batch
// no longer makes (a payout canceled since) it signs nothing and says
// why; with the digest of the plan as it is, it pays and reports it.
func TestPayoutSendSignsOnlyThePlanItsDryRunPrinted(t *testing.T) {
	ctx := context.Background()
	chain, err := devchain.Start(ctx, devchain.Config{BlockInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer chain.Close()
	a := newSendAPI(t, chain.Token)
	treasury := chain.Accounts[1]
	keyFile := filepath.Join(t.TempDir(), "treasury.key")
	if err := os.WriteFile(keyFile, []byte(hex.EncodeToString(crypto.FromECDSA(treasury.Key))), 0o600); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	b := payment.PayoutBatch{ID: payment.NewID(payment.PrefixPayoutBatch, now), ProjectID: a.project.Project.ID, Status: payment.BatchApproved,
		FromAddress: treasury.Address.Hex(), ApprovedBy: "usr_owner", ApprovedAt: &now, Count: 2, Version: 1, CreatedAt: now, UpdatedAt: now}
	payees := []common.Address{common.HexToAddress("0xb0b0000000000000000000000000000000000001"), common.HexToAddress("0xb0b0000000000000000000000000000000000002")}
	var payouts []payment.Payout
	for i, to := range payees {
		payouts = append(payouts, payment.Payout{ID: payment.NewID(payment.PrefixPayout, now), BatchID: b.ID, ProjectID: b.ProjectID, Line: i + 1,
			Outgoing: payment.Outgoing{Status: payment.RefundAwaitingSignature, Network: "devnet", ChainID: 1337, AssetDefinitionID: "usdc-devnet",
				Symbol: "USDC", Decimals: 6, TokenAddress: chain.Token.Hex(), AmountBaseUnits: fmt.Sprint(1_000_000 * (i + 1)),
				FromAddress: treasury.Address.Hex(), ToAddress: to.Hex()},
			Version: 1, CreatedAt: now, UpdatedAt: now})
	}
	if err := a.st.MoneyOut().CreatePayoutBatch(ctx, payment.BatchRecord{Batch: b, Payouts: payouts}, nil); err != nil {
		t.Fatal(err)
	}
	send := func(extra ...string) (string, error) {
		var out bytes.Buffer
		args := append([]string{"send", "--api", a.url, "--project", a.project.Project.ID, "--rpc", chain.URL, "--key-file", keyFile,
			"--journal-dir", t.TempDir(), "--wait", "30s"}, extra...)
		err := runPayout(ctx, append(args, b.ID), nil, &out)
		return out.String(), err
	}
	balance := func(who common.Address) *big.Int {
		t.Helper()
		n, err := chain.TokenBalance(ctx, who)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	unpaid := func(when string) {
		t.Helper()
		for _, p := range payees {
			if n := balance(p); n.Sign() != 0 {
				t.Fatalf("%s: %s was paid %s", when, p, n)
			}
		}
	}

	dry, err := send()
	if err != nil || !strings.Contains(dry, "Batch "+b.ID+" on chain 1337: 2 payouts to send.") {
		t.Fatalf("the dry run: %v\n%s", err, dry)
	}
	read := digestOf(t, dry)
	if again, err := send(); err != nil || digestOf(t, again) != read {
		t.Fatalf("a second dry run of the same batch printed another digest: %v\n%s", err, again)
	}
	if out, err := send("--execute"); err == nil || !strings.Contains(err.Error(), "--execute needs --plan") {
		t.Fatalf("--execute without the plan's digest: %v\n%s", err, out)
	}
	unpaid("--execute without a digest")

	// The batch changes between the dry run and the execution: one payout
	// canceled.
	if code := a.post(t, "/payouts/"+payouts[1].ID+"/cancel", ""); code != http.StatusOK {
		t.Fatalf("cancel a payout: %d", code)
	}
	out, err := send("--execute", "--plan", read)
	if err == nil || !strings.Contains(err.Error(), "changed since the plan you read") || strings.Contains(out, "sent in") {
		t.Fatalf("--execute with the digest of a plan the batch no longer makes: %v\n%s", err, out)
	}
	unpaid("the plan changed")

	dry, err = send()
	if err != nil || !strings.Contains(dry, "1 payouts to send") {
		t.Fatalf("the dry run after the cancel: %v\n%s", err, dry)
	}
	now2 := digestOf(t, dry)
	if now2 == read {
		t.Fatal("the digest did not change with the plan")
	}
	out, err = send("--execute", "--plan", now2)
	if err != nil || !strings.Contains(out, "1 sent and reported, 0 not sent") {
		t.Fatalf("--execute with the digest of the plan as it is: %v\n%s", err, out)
	}
	if n := balance(payees[0]); n.Cmp(big.NewInt(1_000_000)) != 0 {
		t.Fatalf("the payee holds %s; want 1000000", n)
	}
	if n := balance(payees[1]); n.Sign() != 0 {
		t.Fatalf("the canceled payout was paid %s", n)
	}
	got, err := a.st.MoneyOut().PayoutByID(ctx, payouts[0].ID)
	if err != nil || got.Status != payment.RefundSent || got.TxHash == "" {
		t.Fatalf("the payout after the execution: %+v, %v; want sent, its hash reported", got.Outgoing, err)
	}
}

// `refund send --execute` fetches the refund again and refuses, before
// it reads a key or signs anything, a refund whose address changed since
// the plan the person read: the digest is of what is paid, and another
// address is another plan. The plan as it is passes the check.
func TestRefundSendRefusesAnAddressChangedSinceTheDryRun(t *testing.T) {
	ctx := context.Background()
	a := newSendAPI(t, common.HexToAddress("0x5FbDB2315678afecb367f032d93F642f64180aa3"))
	now := time.Now().UTC().Truncate(time.Microsecond)
	usd := decimal.RequireFromString("10")
	plan := payment.Plan{ID: payment.NewID(payment.PrefixPlan, now), ProjectID: a.project.Project.ID, Title: "T",
		PricingModel: payment.PricingFixedUSD, AmountUSD: &usd, Status: payment.PlanActive, CreatedAt: now}
	if err := a.st.Checkout().CreatePlan(ctx, plan, nil); err != nil {
		t.Fatal(err)
	}
	deposit := "0x00000000000000000000000000000000000d0001"
	cs := payment.Session{ID: payment.NewID(payment.PrefixSession, now), TokenHash: payment.HashSecret(fmt.Sprint("t", now.UnixNano())),
		ProjectID: plan.ProjectID, PaymentPlanID: plan.ID, Status: payment.SessionCompleted, AmountUSD: usd,
		DepositAddress: deposit, ExpiresAt: now, QuoteExpiresAt: now, CreatedAt: now}
	if err := a.st.Checkout().InsertSession(ctx, cs, nil); err != nil {
		t.Fatal(err)
	}
	if err := a.st.Payments().InsertTransaction(ctx, payment.Transaction{ID: payment.NewID(payment.PrefixTx, now), ProjectID: cs.ProjectID,
		CheckoutSessionID: cs.ID, PaymentPlanID: plan.ID, Status: payment.TxFinalized, Network: "devnet", ChainID: 1337,
		TxHash: fmt.Sprintf("0x%064x", now.UnixNano()), ToAddress: deposit, AssetDefinitionID: "usdc-devnet", Symbol: "USDC", Amount: "10",
		AmountBaseUnits: "10000000", AmountUSD: usd, Version: 1, CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	owner := payment.Principal{ProjectID: cs.ProjectID, UserID: "usr_owner", Role: payment.RoleOwner}
	const first, second = "0x00000000000000000000000000000000000000f1", "0x00000000000000000000000000000000000000f2"
	r, _, err := a.svc.MoneyOut().CreateRefund(ctx, owner, cs.ProjectID, cs.ID, payment.RefundInput{Amount: ptrTo("2"), Address: ptrTo(first)})
	if err != nil {
		t.Fatal(err)
	}
	send := func(extra ...string) error {
		var out bytes.Buffer
		args := append([]string{"send", "--api", a.url, "--project", cs.ProjectID, "--rpc", "http://127.0.0.1:1",
			"--key-file", filepath.Join(t.TempDir(), "no such key"), "--journal", filepath.Join(t.TempDir(), "journal.json")}, extra...)
		return runRefund(ctx, append(args, r.ID), nil, &out)
	}
	if err := send("--execute", "--plan", "00"); err == nil || !strings.Contains(err.Error(), "an owner approves it") {
		t.Fatalf("a refund awaiting approval sent: %v", err)
	}
	if _, err := a.svc.MoneyOut().ApproveRefund(ctx, owner, cs.ProjectID, r.ID, first); err != nil {
		t.Fatal(err)
	}
	fetched, err := sweep.RefundFromAPI(ctx, http.DefaultClient, a.url, a.project.SandboxKey, cs.ProjectID, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	read := refundPlanDigest(fetched) // what the dry run prints

	// Between the dry run and the execution, the address is changed (and
	// approved again).
	if code := a.post(t, "/refunds/"+r.ID+"/address", `{"address":"`+second+`"}`); code != http.StatusOK {
		t.Fatalf("change the address: %d", code)
	}
	if _, err := a.svc.MoneyOut().ApproveRefund(ctx, owner, cs.ProjectID, r.ID, second); err != nil {
		t.Fatal(err)
	}
	err = send("--execute", "--plan", read)
	if err == nil || !strings.Contains(err.Error(), "changed since the plan you read") || !strings.Contains(err.Error(), "nothing was signed") {
		t.Fatalf("--execute with the plan read before the address changed: %v", err)
	}
	if got, err := a.st.MoneyOut().RefundByID(ctx, r.ID); err != nil || got.Status != payment.RefundAwaitingSignature || got.TxHash != "" {
		t.Fatalf("the refund after the refusal: %+v, %v", got.Outgoing, err)
	}
	// The plan as it is now passes the check: the run goes on to the key.
	fetched, err = sweep.RefundFromAPI(ctx, http.DefaultClient, a.url, a.project.SandboxKey, cs.ProjectID, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := send("--execute", "--plan", refundPlanDigest(fetched)); err == nil || strings.Contains(err.Error(), "plan") {
		t.Fatalf("--execute with the plan as it is: %v; want it past the plan's check (and stopped by the missing key file)", err)
	}
}

func ptrTo[T any](v T) *T { return &v }
