package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/payment"
)

// operatorEnv is the environment an operator gives `paymentsd admin`: the
// worker's (the stack's database, Temporal server, networks and assets).
func operatorEnv(t *testing.T) []string {
	t.Helper()
	networks, err := json.Marshal([]chainwatch.Network{chains["devnet"].Network})
	if err != nil {
		t.Fatal(err)
	}
	var devnetAssets []payment.Asset
	for _, a := range catalog.Assets {
		if a.Network == "devnet" {
			devnetAssets = append(devnetAssets, a)
		}
	}
	assets, err := json.Marshal(devnetAssets)
	if err != nil {
		t.Fatal(err)
	}
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "DATABASE_URL=" + dbURL,
		"TEMPORAL_ADDRESS=" + stack.Server.Address, "TEMPORAL_NAMESPACE=" + stack.Server.Namespace,
		"NETWORKS=" + string(networks), "ASSETS=" + string(assets)}
}

// `paymentsd admin reconcile` run as the operator runs it (the production
// binary, as a process, with the worker's environment) checks money out on
// the chain: after a refund and a payout finalized it finds nothing, and
// nothing again on a second run. Without the networks it cannot, and says
// so for each, naming the variable to set.
func TestAdminReconcileCommandChecksMoneyOutOnChain(t *testing.T) {
	ts, e := newAPI(t, apiOptions{})
	owner, keys := ownedProject(t, ts.URL, "Reconciled shop")
	ctx := context.Background()
	proj := "/api/v1/projects/" + keys.id
	seq := time.Now().UnixNano()

	// The merchant's treasury, proven: it pays the refund and the payout.
	treasury, _ := newTreasury(t)
	verifyRecipient(t, e, keys.id, treasury.Key)

	// A refund of 2 of 5 USDC, paid from the treasury and reported by hash.
	cs := openSession(t, ts.URL, keys, "5", "usdc-devnet")
	waitTx(t, ts.URL, keys, payToken(t, 1, str(cs["depositAddress"]), units("5000000")), "finalized")
	customer := common.HexToAddress(fmt.Sprintf("0xc0ffee%034x", seq))
	created := post(t, ts.URL, proj+"/refunds", keys.key, map[string]any{"checkoutSessionId": cs["id"], "amount": "2", "address": customer.Hex()})
	mustStatus(t, created, http.StatusCreated)
	refundID := str(created.data()["id"])
	mustStatus(t, owner.call(t, ts.URL, http.MethodPost, proj+"/refunds/"+refundID+"/approve", map[string]any{"address": customer.Hex()}), http.StatusOK)
	sent, err := chain.TransferToken(ctx, treasury, customer, units("2000000"))
	if err != nil {
		t.Fatal(err)
	}
	mustStatus(t, post(t, ts.URL, proj+"/refunds/"+refundID+"/transaction", keys.key, map[string]any{"txHash": sent.Hex()}), http.StatusOK)

	// A payout of 1.5 USDC, approved, sent from the batch's treasury: the
	// scanner spots it.
	payee := common.HexToAddress(fmt.Sprintf("0xb0b%037x", seq))
	batch := post(t, ts.URL, proj+"/payout-batches", keys.key, map[string]any{"fromAddress": treasury.Address.Hex(),
		"payouts": []any{map[string]any{"address": payee.Hex(), "asset": "usdc-devnet", "amount": "1.5"}}})
	mustStatus(t, batch, http.StatusCreated)
	batchID := str(batch.data()["id"])
	mustStatus(t, owner.call(t, ts.URL, http.MethodPost, proj+"/payout-batches/"+batchID+"/approve", nil), http.StatusOK)
	if _, err := chain.TransferToken(ctx, treasury, payee, units("1500000")); err != nil {
		t.Fatal(err)
	}
	waitRefund(t, ts.URL, keys, refundID, "finalized", func(r map[string]any) bool { return r["status"] == "finalized" })
	done := waitBatch(t, ts.URL, keys, batchID, "completed", func(b map[string]any) bool { return b["status"] == "completed" })
	payoutID := str(payoutsOf(done)[0]["id"])
	if payoutsOf(done)[0]["status"] != "finalized" {
		t.Fatalf("the payout: %v", payoutsOf(done)[0])
	}

	bin := merchantMachine{dir: t.TempDir(), t: t}.bin()
	reconcile := func(env []string) (string, error) {
		t.Helper()
		cmd := exec.Command(bin, "admin", "reconcile", "--project", keys.id)
		var stdout, stderr bytes.Buffer
		cmd.Env, cmd.Stdout, cmd.Stderr = env, &stdout, &stderr
		err := cmd.Run()
		if err != nil {
			err = fmt.Errorf("%w\n%s", err, stderr.String())
		}
		return stdout.String(), err
	}
	env := operatorEnv(t)
	for _, run := range []string{"first", "second"} {
		if out, err := reconcile(env); err != nil || out != "0 findings, 0 repaired, 0 left\n" {
			t.Fatalf("the %s run after a refund and a payout finalized: %v\n%s", run, err, out)
		}
	}

	var withoutNetworks []string
	for _, v := range env {
		if !strings.HasPrefix(v, "NETWORKS=") {
			withoutNetworks = append(withoutNetworks, v)
		}
	}
	out, err := reconcile(withoutNetworks)
	if err == nil || !strings.Contains(out, "2 findings, 0 repaired, 2 left") || !strings.Contains(out, refundID) ||
		!strings.Contains(out, payoutID) || strings.Count(out, "the network is not configured here: give this command the worker's NETWORKS") != 2 {
		t.Fatalf("without the networks: %v\n%s", err, out)
	}
}
