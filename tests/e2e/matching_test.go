package e2e

import (
	"context"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/paymentsd/paymentsd/dev/contracts/bindings"
	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
	"github.com/paymentsd/paymentsd/workflows"
)

var (
	usdcABI      = bindings.NewDevUSDC()
	multisendABI = bindings.NewDevMultisend()
)

func submit(t *testing.T, base string, cs map[string]any, hash common.Hash) response {
	t.Helper()
	return post(t, base, "/api/v1/checkout/sessions/"+str(cs["token"])+"/payments", "", map[string]any{"network": "devnet", "txHash": hash.Hex()})
}

// blocksGoBy waits until the dev chain has mined n blocks past its head
// now.
func blocksGoBy(t *testing.T, n uint64) {
	t.Helper()
	head := func() uint64 {
		h, err := chain.Client().BlockNumber(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	from := head()
	testwait.Until(t, 30*time.Second, func() (bool, string) {
		at := head()
		return at >= from+n, fmt.Sprintf("the chain went from block %d to %d, want %d more", from, at, n)
	})
}

// sessionTransactions returns the transactions a session's public view lists.
func sessionTransactions(t *testing.T, base string, cs map[string]any) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, it := range get(t, base, "/api/v1/checkout/sessions/"+str(cs["token"]), "").data()["transactions"].([]any) {
		out = append(out, it.(map[string]any))
	}
	return out
}

// record returns a transaction as its project reads it (a session's view
// lists summaries).
func record(t *testing.T, base string, p projectKeys, summary map[string]any) map[string]any {
	t.Helper()
	r := get(t, base, "/api/v1/projects/"+p.id+"/transactions/"+str(summary["id"]), p.key)
	mustStatus(t, r, http.StatusOK)
	return r.data()
}

// A wallet on a private RPC reports the hash before any node has seen the
// transaction. The submission is a claim: pending, no transfer yet; once
// the transaction is mined, its transfer to the session makes the claim
// that transfer, and the session completes with one transaction.
func TestHashSubmittedBeforeTheNodeSawItCountsWhenMined(t *testing.T) {
	ts, _, keys := sandboxAPI(t, apiOptions{})
	cs := openSession(t, ts.URL, keys, "6", "usdc-devnet")
	ctx := context.Background()
	signed, err := chain.SignTransact(ctx, chain.Accounts[2], chain.Token, nil,
		usdcABI.PackTransfer(common.HexToAddress(str(cs["depositAddress"])), units("6000000")))
	if err != nil {
		t.Fatal(err)
	}
	r := submit(t, ts.URL, cs, signed.Hash())
	mustStatus(t, r, http.StatusCreated)
	claim := r.data()
	if claim["status"] != "pending" || claim["txHash"] != signed.Hash().Hex() {
		t.Fatalf("claim = %s", r.Raw)
	}
	if rec := record(t, ts.URL, keys, claim); rec["checkoutSessionId"] != cs["id"] || rec["logIndex"] != nil {
		t.Fatalf("claim record = %v", rec)
	}
	// The receipt is checked every block; several go by with no node
	// knowing the hash, and the claim stays pending.
	blocksGoBy(t, 8)
	if txs := sessionTransactions(t, ts.URL, cs); len(txs) != 1 || txs[0]["status"] != "pending" {
		t.Fatalf("before broadcast: %v", txs)
	}
	if err := chain.SendSigned(ctx, signed); err != nil {
		t.Fatal(err)
	}
	done := waitSession(t, ts.URL, str(cs["token"]), "completed", func(s map[string]any) bool { return s["status"] == "completed" })
	txs := sessionTransactions(t, ts.URL, cs)
	if done["amountPaidUsd"] != "6.00" || done["exception"] != nil || len(txs) != 1 {
		t.Fatalf("session = %v", done)
	}
	tx := record(t, ts.URL, keys, txs[0])
	if tx["id"] != claim["id"] || tx["status"] != "finalized" || tx["amountBaseUnits"] != "6000000" || tx["logIndex"] == nil {
		t.Fatalf("the claim did not become the transfer: %v", tx)
	}
	if got := statuses(tx); strings.Join(got, ",") != "pending,confirmed,finalized" {
		t.Fatalf("status history = %v", got)
	}
	recordHistory(t, "checkout-session/"+str(cs["id"]), "checkout_session_claimed")
	recordClosedHistory(t, workflows.TransactionWorkflowID(1337, signed.Hash().Hex()), "transaction_claimed")
	// The same hash again answers the same record.
	again := submit(t, ts.URL, cs, signed.Hash())
	mustStatus(t, again, http.StatusCreated)
	if again.data()["id"] != claim["id"] || again.data()["status"] != "finalized" {
		t.Fatalf("second submission = %s", again.Raw)
	}
}

// Someone posts a payer's hash, seen in the mempool, to their own session.
// The answer shows only their own claim, never the paid session's data;
// the paid session completes; the squatter's claim fails and counts
// nothing.
func TestHashPostedToTheWrongSessionHelpsOnlyItsOwner(t *testing.T) {
	ts, e := newAPI(t, apiOptions{})
	victim := newProject(t, e)
	squatter := newProject(t, e)
	paid := openSession(t, ts.URL, projectKeys{victim.Project.ID, victim.SandboxKey}, "4", "usdc-devnet")
	own := openSession(t, ts.URL, projectKeys{squatter.Project.ID, squatter.SandboxKey}, "4", "usdc-devnet")
	ctx := context.Background()
	signed, err := chain.SignTransact(ctx, chain.Accounts[3], chain.Token, nil,
		usdcABI.PackTransfer(common.HexToAddress(str(paid["depositAddress"])), units("4000000")))
	if err != nil {
		t.Fatal(err)
	}
	r := submit(t, ts.URL, own, signed.Hash())
	mustStatus(t, r, http.StatusCreated)
	raw := strings.ToLower(string(r.Raw))
	for _, secret := range []string{str(paid["id"]), str(paid["depositAddress"]), victim.Project.ID, "4000000"} {
		if strings.Contains(raw, strings.ToLower(secret)) {
			t.Fatalf("the answer shows the paid session's %s: %s", secret, r.Raw)
		}
	}
	if rec := record(t, ts.URL, projectKeys{squatter.Project.ID, squatter.SandboxKey}, r.data()); rec["checkoutSessionId"] != own["id"] || r.data()["status"] != "pending" {
		t.Fatalf("claim = %s, recorded as %v", r.Raw, rec)
	}
	if err := chain.SendSigned(ctx, signed); err != nil {
		t.Fatal(err)
	}
	done := waitSession(t, ts.URL, str(paid["token"]), "completed", func(s map[string]any) bool { return s["status"] == "completed" })
	if done["amountPaidUsd"] != "4.00" {
		t.Fatalf("paid session = %v", done)
	}
	waitSession(t, ts.URL, str(own["token"]), "claim failed", func(s map[string]any) bool {
		txs := s["transactions"].([]any)
		return len(txs) == 1 && txs[0].(map[string]any)["status"] == "failed"
	})
	failed := record(t, ts.URL, projectKeys{squatter.Project.ID, squatter.SandboxKey}, sessionTransactions(t, ts.URL, own)[0])
	if failed["failureReason"] != "pays nothing to this session" || failed["amountBaseUnits"] != "0" {
		t.Fatalf("squatter's claim = %v", failed)
	}
	s := get(t, ts.URL, "/api/v1/checkout/sessions/"+str(own["token"]), "").data()
	if s["amountPaidUsd"] != "0.00" || s["status"] == "completed" {
		t.Fatalf("squatter's session = %v", s)
	}
	// The squatter's project lists its failed claim and nothing of the
	// victim's transfer.
	list := get(t, ts.URL, "/api/v1/projects/"+squatter.Project.ID+"/transactions", squatter.SandboxKey)
	if len(list.list()) != 1 || strings.Contains(strings.ToLower(string(list.Raw)), strings.ToLower(str(paid["id"]))) {
		t.Fatalf("squatter's transactions = %s", list.Raw)
	}
}

// One batch transaction (an exchange payout, a multisend) pays two
// sessions, one of them twice: each session counts what it received, every
// transfer once.
func TestOneTransactionPaysTwoSessionsAndOneOfThemTwice(t *testing.T) {
	ts, _, keys := sandboxAPI(t, apiOptions{})
	first := openSession(t, ts.URL, keys, "3", "usdc-devnet")
	second := openSession(t, ts.URL, keys, "5", "usdc-devnet")
	ctx := context.Background()
	payer := chain.Accounts[4]
	multisend, h, err := chain.Deploy(ctx, chain.Deployer, common.FromHex(bindings.DevMultisendMetaData.Bin))
	if err != nil {
		t.Fatal(err)
	}
	unlimited := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))
	approve, err := chain.Transact(ctx, payer, chain.Token, nil, usdcABI.PackApprove(multisend, unlimited))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []common.Hash{h, approve} {
		if r, err := chain.WaitMined(ctx, h); err != nil || r.Status != 1 {
			t.Fatalf("set-up %s: %v %v", h, r, err)
		}
	}
	a, b := common.HexToAddress(str(first["depositAddress"])), common.HexToAddress(str(second["depositAddress"]))
	batch, err := chain.Transact(ctx, payer, multisend, nil, multisendABI.PackSendToken(chain.Token,
		[]common.Address{a, b, a}, []*big.Int{units("1000000"), units("5000000"), units("2000000")}))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cs    map[string]any
		paid  string
		units []string
	}{{first, "3.00", []string{"1000000", "2000000"}}, {second, "5.00", []string{"5000000"}}} {
		done := waitSession(t, ts.URL, str(c.cs["token"]), "completed", func(s map[string]any) bool { return s["status"] == "completed" })
		txs := sessionTransactions(t, ts.URL, c.cs)
		if done["amountPaidUsd"] != c.paid || done["exception"] != nil || len(txs) != len(c.units) {
			t.Fatalf("session %s = %v", c.cs["id"], done)
		}
		for i, tx := range txs {
			tx = record(t, ts.URL, keys, tx)
			if tx["txHash"] != batch.Hex() || tx["amountBaseUnits"] != c.units[i] || tx["status"] != "finalized" {
				t.Fatalf("session %s transaction %d = %v", c.cs["id"], i, tx)
			}
		}
	}
	recordClosedHistory(t, workflows.TransactionWorkflowID(1337, batch.Hex()), "transaction_two_sessions")
	list := get(t, ts.URL, "/api/v1/projects/"+keys.id+"/transactions", keys.key).list()
	seen := map[float64]bool{}
	for _, it := range list {
		li := it.(map[string]any)["logIndex"].(float64)
		if seen[li] {
			t.Fatalf("log index %v recorded twice: %v", li, list)
		}
		seen[li] = true
	}
	if len(seen) != 3 {
		t.Fatalf("transactions = %v", list)
	}
}

// The payer endpoint is public: a session takes a bounded number of
// distinct hashes (each is followed on-chain until its timeout), and the
// same hash again is no new one.
func TestASessionCapsTheHashesItTakes(t *testing.T) {
	ts, _, keys := sandboxAPI(t, apiOptions{})
	cs := openSession(t, ts.URL, keys, "2", "usdc-devnet")
	var hashes []common.Hash
	t.Cleanup(func() {
		for _, h := range hashes {
			_ = temporal.TerminateWorkflow(context.Background(), workflows.TransactionWorkflowID(1337, h.Hex()), "", "test over")
		}
	})
	for i := range workflows.MaxSubmittedHashes + 1 {
		h := common.BigToHash(big.NewInt(int64(0xc1a1<<16 + i)))
		r := submit(t, ts.URL, cs, h)
		if i == workflows.MaxSubmittedHashes {
			mustStatus(t, r, http.StatusConflict)
			if r.errorCode() != "CONFLICT" || !strings.Contains(string(r.Raw), "at most 20") {
				t.Fatalf("over the cap: %s", r.Raw)
			}
			break
		}
		mustStatus(t, r, http.StatusCreated)
		hashes = append(hashes, h)
	}
	mustStatus(t, submit(t, ts.URL, cs, hashes[3]), http.StatusCreated)
	if txs := sessionTransactions(t, ts.URL, cs); len(txs) != workflows.MaxSubmittedHashes {
		t.Fatalf("%d claims recorded", len(txs))
	}
}
