package e2e

import (
	"context"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/paymentsd/paymentsd/dev/contracts/bindings"
	"github.com/paymentsd/paymentsd/dev/devchain"
	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
	"github.com/paymentsd/paymentsd/service"
	"github.com/paymentsd/paymentsd/tests/stacktest"
)

// newTreasury makes a fresh account funded with 1 ETH and 20 USDC, the
// merchant's treasury that pays a batch, and writes its key to a file
// only its owner reads.
func newTreasury(t *testing.T) (devchain.Account, string) {
	t.Helper()
	ctx := context.Background()
	acct := stacktest.NewAccount(t)
	if _, err := chain.TransferNative(ctx, chain.Accounts[3], acct.Address, units("1000000000000000000")); err != nil {
		t.Fatal(err)
	}
	payToken(t, 3, acct.Address.Hex(), units("20000000"))
	testwait.Until(t, 30*time.Second, func() (bool, string) {
		eth, err1 := chain.Client().BalanceAt(ctx, acct.Address, nil)
		usdc, err2 := chain.TokenBalance(ctx, acct.Address)
		return err1 == nil && err2 == nil && eth.Sign() > 0 && usdc.Sign() > 0, fmt.Sprintf("the treasury is not funded: %v %v", eth, usdc)
	})
	file := filepath.Join(t.TempDir(), "treasury.key")
	if err := os.WriteFile(file, []byte(hex.EncodeToString(crypto.FromECDSA(acct.Key))+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return acct, file
}

func waitBatch(t *testing.T, base string, p projectKeys, id, what string, ok func(map[string]any) bool) map[string]any {
	t.Helper()
	return waitData(t, base, "/api/v1/projects/"+p.id+"/payout-batches/"+id, p.key, "the batch never became "+what, ok)
}

func payoutsOf(b map[string]any) []map[string]any {
	var out []map[string]any
	for _, p := range b["payouts"].([]any) {
		out = append(out, p.(map[string]any))
	}
	return out
}

func uploadCSV(t *testing.T, base, path, key, csv string) response {
	t.Helper()
	return do(t, base, request{method: http.MethodPost, path: path, key: key, body: csv, headers: map[string]string{"Content-Type": "text/csv"}})
}

// A payout batch uploaded as CSV: a bad line refuses the whole file, every
// problem named by its line; a good one waits for an owner, who approves
// it after confirming their password (an API key cannot); the merchant
// signs it offline with `paymentsd payout send`, one transaction a payout
// from the treasury's key, and the engine follows each to finalized and
// completes the batch with its report. A second run pays nothing twice;
// the reconciliation finds the records and the chain agree.
func TestAPayoutBatchIsApprovedSignedOfflineAndFollowed(t *testing.T) {
	ts, e := newAPI(t, apiOptions{})
	owner, keys := ownedProject(t, ts.URL, "Payouts shop")
	ctx := context.Background()
	proj := "/api/v1/projects/" + keys.id
	treasury, keyFile := newTreasury(t)
	verifyRecipient(t, e, keys.id, treasury.Key) // a batch pays from a proven address
	alice, bob := common.HexToAddress(fmt.Sprintf("0xa11ce%035x", time.Now().UnixNano())), common.HexToAddress(fmt.Sprintf("0xb0b%037x", time.Now().UnixNano()))

	upload := proj + "/payout-batches?fromAddress=" + treasury.Address.Hex() + "&reference=November"
	bad := uploadCSV(t, ts.URL, upload, keys.key, "address,asset,amount,reference\n"+
		alice.Hex()+",usdc-devnet,12.5,inv-1\n"+
		"0x1234,usdc-devnet,1,inv-2\n"+
		bob.Hex()+",usdc-base,1,inv-3\n")
	mustStatus(t, bad, http.StatusUnprocessableEntity)
	for _, want := range []string{`"line 3.address"`, `"line 4.asset"`} {
		if !strings.Contains(string(bad.Raw), want) {
			t.Errorf("the refused file does not name %s: %s", want, bad.Raw)
		}
	}
	if list := get(t, ts.URL, proj+"/payout-batches", keys.key); len(list.list()) != 0 {
		t.Fatalf("a refused file left a batch: %s", list.Raw)
	}

	created := uploadCSV(t, ts.URL, upload, keys.key, "address,asset,amount,reference\n"+
		alice.Hex()+",usdc-devnet,12.5,inv-1\n"+
		bob.Hex()+",eth-devnet,0.01,inv-2\n")
	mustStatus(t, created, http.StatusCreated)
	batch := created.data()
	id := str(batch["id"])
	if batch["status"] != "awaiting_approval" || batch["payoutCount"] != float64(2) || batch["reference"] != "November" {
		t.Fatalf("the batch created: %s", created.Raw)
	}
	for _, p := range payoutsOf(batch) {
		if p["status"] != "awaiting_approval" || p["transfer"] != nil {
			t.Fatalf("a payout before approval: %v", p)
		}
	}

	// Approval: never an API key; an owner whose sign-in is old confirms
	// their password first.
	approve := proj + "/payout-batches/" + id + "/approve"
	mustStatus(t, post(t, ts.URL, approve, keys.key, nil), http.StatusForbidden)
	ageSignIn(t, owner)
	stale := owner.call(t, ts.URL, http.MethodPost, approve, nil)
	mustStatus(t, stale, http.StatusForbidden)
	if !strings.Contains(string(stale.Raw), "REAUTHENTICATION_REQUIRED") {
		t.Fatalf("an approval with an old sign-in: %s", stale.Raw)
	}
	mustStatus(t, owner.call(t, ts.URL, http.MethodPost, "/api/v1/auth/reauthenticate", map[string]any{"password": owner.password}), http.StatusOK)
	approved := owner.call(t, ts.URL, http.MethodPost, approve, nil)
	mustStatus(t, approved, http.StatusOK)
	payouts := payoutsOf(approved.data())
	if approved.data()["status"] != "approved" || len(payouts) != 2 || payouts[0]["status"] != "awaiting_signature" ||
		!strings.HasPrefix(str(payouts[0]["transfer"].(map[string]any)["data"]), "0xa9059cbb") {
		t.Fatalf("the approved batch: %s", approved.Raw)
	}

	// The merchant's machine: a dry run, then the transfers.
	m := merchantMachine{dir: t.TempDir(), t: t}
	bin := m.bin()
	send := func(extra ...string) string {
		t.Helper()
		args := append([]string{"payout", "send", "--api", ts.URL, "--project", keys.id, "--rpc", chain.URL, "--key-file", keyFile}, extra...)
		return m.run(bin, keys.key, append(args, id)...)
	}
	plan := send()
	if !strings.Contains(plan, "12.5 USDC from") || !strings.Contains(plan, "Dry run") {
		t.Fatalf("the dry run:\n%s", plan)
	}
	if b, _ := chain.TokenBalance(ctx, alice); b.Sign() != 0 {
		t.Fatalf("the dry run paid %s", b)
	}
	if out := send("--execute", "--plan", planDigestOf(t, plan)); !strings.Contains(out, "2 sent and reported, 0 not sent") {
		t.Fatalf("payout send --execute:\n%s", out)
	}
	done := waitBatch(t, ts.URL, keys, id, "completed", func(b map[string]any) bool { return b["status"] == "completed" })
	report := done["report"].(map[string]any)
	if report["statuses"].(map[string]any)["finalized"] != float64(2) {
		t.Fatalf("the completed batch's report: %v", report)
	}
	for _, total := range report["totals"].([]any) {
		tt := total.(map[string]any)
		if tt["paid"] != tt["requested"] || tt["notPaid"] != "0" || tt["inFlight"] != "0" {
			t.Errorf("a total of the completed batch: %v", tt)
		}
	}
	if b, _ := chain.TokenBalance(ctx, alice); b.Cmp(units("12500000")) != 0 {
		t.Fatalf("alice holds %s USDC base units; want 12500000", b)
	}
	if b, _ := chain.Client().BalanceAt(ctx, bob, nil); b.Cmp(units("10000000000000000")) != 0 {
		t.Fatalf("bob holds %s wei; want 0.01 ETH", b)
	}
	if got := eventTypes(t, id); !slices.Equal(got, []string{"payout_batch.created", "payout_batch.approved", "payout_batch.completed"}) {
		t.Fatalf("the batch's events: %v", got)
	}
	first := payoutsOf(done)[0]
	if got := eventTypes(t, str(first["id"])); len(got) < 2 || got[0] != "payout.sent" || got[len(got)-1] != "payout.finalized" {
		t.Fatalf("a payout's events: %v", got)
	}
	if again := send("--execute"); !strings.Contains(again, "is completed: nothing to send") {
		t.Fatalf("a second run:\n%s", again)
	}
	if b, _ := chain.TokenBalance(ctx, alice); b.Cmp(units("12500000")) != 0 {
		t.Fatalf("a second run paid again: alice holds %s", b)
	}

	// The batch's report as CSV, a line per payout with its transaction.
	res, rows := csvExport(t, ts.URL, proj+"/payout-batches/"+id, keys.key)
	if res.StatusCode != http.StatusOK || len(rows) != 3 || column(rows, 1, "reference") != "inv-1" || column(rows, 1, "amount") != "12.5" ||
		column(rows, 1, "status") != "finalized" || column(rows, 1, "tx_hash") != str(first["txHash"]) || column(rows, 2, "asset") != "ETH" {
		t.Fatalf("the batch's CSV: %v", rows)
	}

	// A payout sent from the treasury without its hash reported is seen by
	// the scanner and followed all the same.
	second := post(t, ts.URL, proj+"/payout-batches", keys.key, map[string]any{"fromAddress": treasury.Address.Hex(),
		"payouts": []any{map[string]any{"address": alice.Hex(), "asset": "usdc-devnet", "amount": "1"}}})
	mustStatus(t, second, http.StatusCreated)
	secondID := str(second.data()["id"])
	mustStatus(t, owner.call(t, ts.URL, http.MethodPost, proj+"/payout-batches/"+secondID+"/approve", nil), http.StatusOK)
	hash, err := chain.TransferToken(ctx, treasury, alice, units("1000000"))
	if err != nil {
		t.Fatal(err)
	}
	spotted := waitBatch(t, ts.URL, keys, secondID, "completed", func(b map[string]any) bool { return b["status"] == "completed" })
	if p := payoutsOf(spotted)[0]; p["status"] != "finalized" || !strings.EqualFold(str(p["txHash"]), hash.Hex()) {
		t.Fatalf("the unreported payout: %v", p)
	}

	// The reconciliation: the records agree with the chain; a payout whose
	// recorded transaction is not on chain is found.
	reconcile := func() []service.Finding { return findings(t, e, keys.id, "payout-") }
	if found := reconcile(); len(found) != 0 {
		t.Fatalf("the reconciliation of payouts that agree with the chain: %+v", found)
	}
	if _, err := st.Pool().Exec(ctx, `UPDATE payouts SET tx_hash = $2 WHERE id = $1`, first["id"], "0x"+strings.Repeat("ee", 32)); err != nil {
		t.Fatal(err)
	}
	if found := reconcile(); len(found) != 1 || found[0].Kind != service.FindingPayoutNotOnChain || found[0].ObjectID != str(first["id"]) {
		t.Fatalf("the reconciliation of a tampered payout: %+v", found)
	}
}

// A batch paid through a multisend contract: one transaction per asset
// (after an allowance for the token), each payout reported with it and
// followed to finalized from its own transfer in it; the native coin's by
// the contract's internal calls, which the node's traces show.
func TestAPayoutBatchIsPaidThroughAMultisend(t *testing.T) {
	ts, e := newAPI(t, apiOptions{})
	owner, keys := ownedProject(t, ts.URL, "Multisend shop")
	ctx := context.Background()
	proj := "/api/v1/projects/" + keys.id
	treasury, keyFile := newTreasury(t)
	verifyRecipient(t, e, keys.id, treasury.Key) // a batch pays from a proven address
	contract, deployed, err := chain.Deploy(ctx, chain.Deployer, common.FromHex(bindings.DevMultisendMetaData.Bin))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chain.WaitMined(ctx, deployed); err != nil {
		t.Fatal(err)
	}
	seq := time.Now().UnixNano()
	payees := []common.Address{common.HexToAddress(fmt.Sprintf("0xc1%038x", seq)), common.HexToAddress(fmt.Sprintf("0xc2%038x", seq)),
		common.HexToAddress(fmt.Sprintf("0xc3%038x", seq))}
	created := post(t, ts.URL, proj+"/payout-batches", keys.key, map[string]any{"fromAddress": treasury.Address.Hex(), "payouts": []any{
		map[string]any{"address": payees[0].Hex(), "asset": "usdc-devnet", "amount": "1.25"},
		map[string]any{"address": payees[1].Hex(), "asset": "usdc-devnet", "amount": "2"},
		map[string]any{"address": payees[2].Hex(), "asset": "eth-devnet", "amount": "0.02"},
	}})
	mustStatus(t, created, http.StatusCreated)
	id := str(created.data()["id"])
	mustStatus(t, owner.call(t, ts.URL, http.MethodPost, proj+"/payout-batches/"+id+"/approve", nil), http.StatusOK)

	m := merchantMachine{dir: t.TempDir(), t: t}
	bin := m.bin()
	send := func(extra ...string) string {
		t.Helper()
		args := append([]string{"payout", "send", "--api", ts.URL, "--project", keys.id, "--rpc", chain.URL, "--key-file", keyFile,
			"--multisend", contract.Hex()}, extra...)
		return m.run(bin, keys.key, append(args, id)...)
	}
	plan := send()
	if !strings.Contains(plan, "Multisend of 2 payouts, 3.25 USDC") || !strings.Contains(plan, "Multisend of 1 payouts, 0.02 ETH") {
		t.Fatalf("the dry run:\n%s", plan)
	}
	if out := send("--execute", "--plan", planDigestOf(t, plan)); !strings.Contains(out, "3 sent and reported, 0 not sent") {
		t.Fatalf("payout send --multisend --execute:\n%s", out)
	}
	done := waitBatch(t, ts.URL, keys, id, "completed", func(b map[string]any) bool { return b["status"] == "completed" })
	payouts := payoutsOf(done)
	for _, p := range payouts {
		if p["status"] != "finalized" {
			t.Fatalf("a payout of the multisend: %v", p)
		}
	}
	if payouts[0]["txHash"] != payouts[1]["txHash"] || payouts[0]["txHash"] == payouts[2]["txHash"] {
		t.Fatalf("the USDC payouts share one transaction, the ETH one has its own: %v %v %v", payouts[0]["txHash"], payouts[1]["txHash"], payouts[2]["txHash"])
	}
	for i, want := range []string{"1250000", "2000000"} {
		if b, _ := chain.TokenBalance(ctx, payees[i]); b.Cmp(units(want)) != 0 {
			t.Errorf("payee %d holds %s USDC base units; want %s", i, b, want)
		}
	}
	if b, _ := chain.Client().BalanceAt(ctx, payees[2], nil); b.Cmp(units("20000000000000000")) != 0 {
		t.Errorf("the ETH payee holds %s wei; want 0.02 ETH", b)
	}
	if again := send("--execute"); !strings.Contains(again, "is completed: nothing to send") {
		t.Fatalf("a second run:\n%s", again)
	}
}
