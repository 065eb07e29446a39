package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/store/storetest"
)

// `paymentsd admin create-project --json` prints one JSON object whose
// keys work: the live key acts in live mode, the sandbox key in sandbox.
func TestAdminCreateProjectJSON(t *testing.T) {
	url := storetest.NewDB(t)
	t.Setenv("DATABASE_URL", url)
	r, w, _ := os.Pipe()
	stdout := os.Stdout
	os.Stdout = w
	err := runAdmin(context.Background(), []string{"create-project", "--name", "Scripted shop", "--json"})
	w.Close()
	os.Stdout = stdout
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(r)
	var got struct{ ProjectID, LiveKey, SandboxKey string }
	if err := json.Unmarshal(out, &got); err != nil || strings.Count(string(out), "\n") != 1 {
		t.Fatalf("output is not one JSON object: %q (%v)", out, err)
	}
	st, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	e := service.New(service.Deps{Store: st})
	for key, live := range map[string]bool{got.LiveKey: true, got.SandboxKey: false} {
		p, err := e.Checkout().Authenticate(context.Background(), key)
		if err != nil || p.ProjectID != got.ProjectID || p.IsLive != live {
			t.Errorf("key %.14s…: %+v %v", key, p, err)
		}
	}
	if !strings.HasPrefix(got.LiveKey, "svc_live_") || !strings.HasPrefix(got.SandboxKey, "svc_test_") {
		t.Errorf("key prefixes: %q %q", got.LiveKey, got.SandboxKey)
	}
	if err := runAdmin(context.Background(), []string{"create-project", "--name", ""}); err == nil {
		t.Error("an empty name must be refused")
	}
}

func TestCheckAssetsNamesTheBadEntry(t *testing.T) {
	if err := checkAssets(defaultAssets); err != nil {
		t.Fatalf("default catalog: %v", err)
	}
	bad := append(defaultAssets[:1:1], defaultAssets[0])
	if err := checkAssets(bad); err == nil || !strings.Contains(err.Error(), "listed twice") {
		t.Errorf("duplicate id: %v", err)
	}
	wrong := defaultAssets[0]
	wrong.ID, wrong.TokenAddress = "usdc-x", "0x123"
	if err := checkAssets([]payment.Asset{wrong}); err == nil || !strings.Contains(err.Error(), `"usdc-x"`) {
		t.Errorf("bad token address: %v", err)
	}
	pegged := defaultAssets[0] // USDC: no aggregator to read anywhere
	pegged.Price.Network = "ethereum"
	if err := checkAssets([]payment.Asset{pegged}); err == nil || !strings.Contains(err.Error(), "priceSource.network") {
		t.Errorf("a feed network for a pegged asset: %v", err)
	}
}

// `paymentsd admin deposit-addresses` prints every used index of the
// environment, in order, for the merchant's wallet: CSV by default, JSON
// lines on request.
func TestAdminDepositAddresses(t *testing.T) {
	ctx := context.Background()
	st := adminStore(t)
	e := service.New(service.Deps{Store: st})
	p := createProject(t, e, "Wallet shop")
	now := time.Now().UTC()
	amount := decimal.RequireFromString("5")
	plan := payment.Plan{ID: payment.NewID(payment.PrefixPlan, now), ProjectID: p.Project.ID, Title: "T", PricingModel: payment.PricingFixedUSD,
		AmountUSD: &amount, Status: payment.PlanActive, CreatedAt: now}
	if err := st.Checkout().CreatePlan(ctx, plan, nil); err != nil {
		t.Fatal(err)
	}
	for i, index := range []int64{0, 2} {
		idx := index
		cs := payment.Session{ID: payment.NewID(payment.PrefixSession, now.Add(time.Duration(i)*time.Millisecond)), TokenHash: payment.HashSecret(fmt.Sprint(i)),
			ProjectID: p.Project.ID, PaymentPlanID: plan.ID, Status: payment.SessionOpen, AmountUSD: amount, ExpiresAt: now.Add(time.Hour),
			QuoteExpiresAt: now.Add(time.Hour), CreatedAt: now, DepositAddress: fmt.Sprintf("0x%040d", index), DepositIndex: &idx}
		if err := st.Checkout().InsertSession(ctx, cs, func(payment.Session, int) ([]byte, error) { return []byte(`{}`), nil }); err != nil {
			t.Fatal(err)
		}
	}
	var out strings.Builder
	if err := runDepositAddresses(ctx, &out, []string{"--project", p.Project.ID, "--env", "sandbox"}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "index,derivation_path,address,") ||
		!strings.HasPrefix(lines[1], "0,0/0,0x0000000000000000000000000000000000000000,cs_") ||
		!strings.HasPrefix(lines[2], "2,0/2,0x0000000000000000000000000000000000000002,cs_") || !strings.HasSuffix(lines[2], ",1") {
		t.Fatalf("csv =\n%s", out.String())
	}
	out.Reset()
	if err := runDepositAddresses(ctx, &out, []string{"--project", p.Project.ID, "--env", "sandbox", "--format", "json"}); err != nil {
		t.Fatal(err)
	}
	var last struct {
		Index     int64
		GapBefore int64
		Address   string
	}
	lines = strings.Split(strings.TrimSpace(out.String()), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || len(lines) != 2 || last.Index != 2 || last.GapBefore != 1 {
		t.Fatalf("json =\n%s (%v)", out.String(), err)
	}
	out.Reset()
	if err := runDepositAddresses(ctx, &out, []string{"--project", p.Project.ID, "--env", "live"}); err != nil || strings.Count(out.String(), "\n") != 1 {
		t.Fatalf("live = %q, %v; want the header only", out.String(), err)
	}
	if err := runDepositAddresses(ctx, &out, []string{"--project", p.Project.ID, "--env", "prod"}); err == nil {
		t.Fatal("an unknown environment must be refused")
	}
	out.Reset()
	if err := runDepositAddresses(ctx, &out, []string{"--project", p.Project.ID, "--chain", "bitcoin"}); err != nil || strings.Count(out.String(), "\n") != 1 {
		t.Fatalf("bitcoin = %q, %v; want the header only: the sessions have EVM addresses alone", out.String(), err)
	}
	if err := runDepositAddresses(ctx, &out, []string{"--project", p.Project.ID, "--chain", "btc"}); err == nil {
		t.Fatal("an unknown chain must be refused")
	}
}

// `paymentsd admin set-deposit-key` is in the project's audit log, made by
// the operator's OS user on this host, the key named by its ends only.
func TestAdminSetDepositKeyIsAudited(t *testing.T) {
	ctx := context.Background()
	st := adminStore(t)
	p := createProject(t, service.New(service.Deps{Store: st}), "Audited shop")
	master, err := hdkeychain.NewMaster(bytes.Repeat([]byte{7}, 32), &chaincfg.MainNetParams)
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := master.Neuter()
	xpub := pub.String()
	if err := runAdmin(ctx, []string{"set-deposit-key", "--project", p.Project.ID, "--env", "live", "--xpub", xpub}); err != nil {
		t.Fatal(err)
	}
	entries, _, err := st.Access().ListAudit(ctx, payment.Principal{ProjectID: p.Project.ID, IsLive: true}, payment.ListQuery{Page: 1, Limit: 10})
	if err != nil || len(entries) != 1 {
		t.Fatalf("audit log = %v, %v; want one entry", entries, err)
	}
	a := entries[0]
	host, _ := os.Hostname()
	if a.Action != payment.AuditDepositKeySet || a.ActorKind != payment.AuditActorAdmin || a.ActorID == "" || a.IP != host ||
		a.TargetID != p.Project.ID || strings.Contains(string(a.Details), xpub) || !strings.Contains(string(a.Details), xpub[:12]) {
		t.Fatalf("entry = %+v (details %s)", a, a.Details)
	}
	// The same account key as the environment's Bitcoin key, for Taproot:
	// one environment's own key, audited the same way.
	if err := runAdmin(ctx, []string{"set-deposit-key", "--project", p.Project.ID, "--env", "live", "--xpub", xpub, "--bitcoin", "--address-type", "p2tr"}); err != nil {
		t.Fatal(err)
	}
	if entries, _, err = st.Access().ListAudit(ctx, payment.Principal{ProjectID: p.Project.ID, IsLive: true}, payment.ListQuery{Page: 1, Limit: 10}); err != nil ||
		len(entries) != 2 || entries[0].Action != payment.AuditBitcoinKeySet || entries[0].ActorKind != payment.AuditActorAdmin ||
		!strings.Contains(string(entries[0].Details), `"p2tr"`) || strings.Contains(string(entries[0].Details), xpub) {
		t.Fatalf("audit log = %+v, %v; want the Bitcoin key's entry first", entries, err)
	}
	if err := runAdmin(ctx, []string{"set-deposit-key", "--project", p.Project.ID, "--env", "sandbox", "--xpub", xpub, "--bitcoin"}); err == nil ||
		!strings.Contains(err.Error(), "mainnet key") {
		t.Fatalf("a mainnet key for the sandbox's Bitcoin: %v; want it refused, saying why", err)
	}
	if err := runAdmin(ctx, []string{"set-deposit-key", "--project", p.Project.ID, "--env", "live", "--xpub", xpub, "--address-type", "p2tr"}); err == nil {
		t.Fatal("--address-type without --bitcoin must be refused")
	}
}

// `paymentsd admin create-user` makes an account whose password, read
// from stdin, signs in, owner of the project named; a short password is
// refused.
func TestAdminCreateUser(t *testing.T) {
	ctx := context.Background()
	st := adminStore(t)
	e := service.New(service.Deps{Store: st})
	p := createProject(t, e, "Owned shop")
	var out bytes.Buffer
	if err := runCreateUser(ctx, strings.NewReader("a long enough password\n"), &out,
		[]string{"--email", "ops@example.com", "--owner-of", p.Project.ID}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "ops@example.com") || strings.Contains(out.String(), "a long enough password") {
		t.Fatalf("output %q", out.String())
	}
	in, err := e.Identity().Login(ctx, "OPS@example.com", "a long enough password", service.Client{})
	if err != nil {
		t.Fatal(err)
	}
	ms, err := e.Checkout().Projects(ctx, in.User.ID)
	if err != nil || len(ms) != 1 || ms[0].ProjectID != p.Project.ID || ms[0].Role != payment.RoleOwner {
		t.Fatalf("memberships %+v, %v; want the owner of %s", ms, err, p.Project.ID)
	}
	if err := runCreateUser(ctx, strings.NewReader("short\n"), &out, []string{"--email", "other@example.com"}); err == nil {
		t.Fatal("a short password was taken")
	}
}
