package e2e

import (
	"context"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/dev/contracts/bindings"
	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
	"github.com/paymentsd/paymentsd/workflows"
)

// A transfer to the deposit address of a session that has ended (expired,
// past its late-payment window, its workflow closed) is recorded for the
// merchant as unexpected, and counts for no session.
func TestATransferToAnEndedSessionIsRecordedUnexpected(t *testing.T) {
	ts, _, keys := sandboxAPI(t, apiOptions{lifetime: 2 * time.Second})
	shortLateWindow(t, keys.id)
	cs := openSession(t, ts.URL, keys, "5", "usdc-devnet")
	waitWorkflowEnded(t, str(cs["id"]))

	hash := payToken(t, 2, str(cs["depositAddress"]), units("5000000"))
	tx := waitTx(t, ts.URL, keys, hash, "finalized")
	if tx["unexpected"] != true || tx["checkoutSessionId"] != cs["id"] || tx["amountBaseUnits"] != "5000000" {
		t.Fatalf("the transfer to the ended session's address = %v", tx)
	}
	s := get(t, ts.URL, "/api/v1/checkout/sessions/"+str(cs["token"]), "").data()
	if s["status"] != "expired" || s["amountPaidUsd"] != "0.00" || s["exception"] != nil {
		t.Fatalf("the ended session counted it: %v", s)
	}
}

// An operator's rescan of blocks already scanned finds their transfers
// again and hands them to their sessions, which count each once: running
// it twice changes nothing.
func TestARescanRunTwiceCountsEachTransferOnce(t *testing.T) {
	ts, e, keys := sandboxAPI(t, apiOptions{})
	cs := openSession(t, ts.URL, keys, "6", "usdc-devnet")
	hash := payToken(t, 3, str(cs["depositAddress"]), units("6000000"))
	tx := waitTx(t, ts.URL, keys, hash, "finalized")
	waitSession(t, ts.URL, str(cs["token"]), "completed", func(s map[string]any) bool { return s["status"] == "completed" })
	block := uint64(tx["blockNumber"].(float64))

	ctx := context.Background()
	for run := 1; run <= 2; run++ {
		res, err := e.Chains().Rescan(ctx, "devnet", block-1, block+1)
		if err != nil {
			t.Fatalf("rescan %d: %v", run, err)
		}
		if res.Transfers < 1 {
			t.Fatalf("rescan %d found %d transfers in blocks %d to %d", run, res.Transfers, block-1, block+1)
		}
	}
	recordClosedHistory(t, workflows.RescanStartOptions(workflows.RescanInput{Network: "devnet", From: block - 1, To: block + 1}).ID, "rescan")
	// The session's workflow has taken the rescans' reports: it has no task
	// left to run, so a second count would show now.
	testwait.Until(t, 30*time.Second, func() (bool, string) {
		d, err := temporal.DescribeWorkflowExecution(ctx, workflows.CheckoutSessionWorkflowID(str(cs["id"])), "")
		if err != nil {
			t.Fatal(err)
		}
		return d.GetPendingWorkflowTask() == nil, fmt.Sprintf("the session's workflow has a task pending: %v", d.GetPendingWorkflowTask())
	})
	txs := sessionTransactions(t, ts.URL, cs)
	s := get(t, ts.URL, "/api/v1/checkout/sessions/"+str(cs["token"]), "").data()
	if len(txs) != 1 || s["status"] != "completed" || s["amountPaidUsd"] != "6.00" || s["exception"] != nil {
		t.Fatalf("after two rescans: session %v, transactions %v", s, txs)
	}

	if _, err := e.Chains().Rescan(ctx, "devnet", block+1, block); err == nil {
		t.Fatal("a rescan from after to: no error")
	}
	if _, err := e.Chains().Rescan(ctx, "devnet", block, block+1_000_000); err == nil {
		t.Fatal("a rescan past the head: no error")
	}
}

// Native coin paid by a contract wallet's internal call (a minimal
// forwarder, as a Safe or a smart account pays) is found through the dev
// chain's call traces and completes the session; the option does not ask
// for a wallet account, since such payments are seen.
func TestAContractWalletsNativePaymentIsDetected(t *testing.T) {
	ts, _, keys := sandboxAPI(t, apiOptions{})
	cs := openSession(t, ts.URL, keys, "3", "eth-devnet")
	opt := cs["paymentOptions"].([]any)[0].(map[string]any)
	if opt["walletAccountOnly"] != nil {
		t.Fatalf("a network read with traces asks for a wallet account: %v", opt)
	}
	amount, ok := new(big.Int).SetString(str(opt["amountBaseUnits"]), 10)
	if !ok {
		t.Fatalf("option %v", opt)
	}
	ctx := context.Background()
	payer := chain.Accounts[len(chain.Accounts)-1]
	wallet, h, err := chain.Deploy(ctx, payer, common.FromHex(bindings.DevForwarderMetaData.Bin))
	if err != nil {
		t.Fatal(err)
	}
	waitReceipt(t, h)
	h, err = chain.Transact(ctx, payer, wallet, amount, bindings.NewDevForwarder().PackForward(common.HexToAddress(str(cs["depositAddress"]))))
	if err != nil {
		t.Fatal(err)
	}
	waitReceipt(t, h)
	done := waitSession(t, ts.URL, str(cs["token"]), "completed", func(s map[string]any) bool { return s["status"] == "completed" })
	txs := sessionTransactions(t, ts.URL, cs)
	if done["exception"] != nil || len(txs) != 1 || txs[0]["amount"] != opt["amount"] || txs[0]["txHash"] != strings.ToLower(h.Hex()) {
		t.Fatalf("session %v, transactions %v", done, txs)
	}
}

// waitReceipt waits until a transaction is mined.
func waitReceipt(t *testing.T, h common.Hash) {
	t.Helper()
	testwait.Until(t, 30*time.Second, func() (bool, string) {
		r, err := chain.Client().TransactionReceipt(context.Background(), h)
		if err == nil && r.Status != 1 {
			t.Fatalf("%s reverted", h)
		}
		return err == nil, fmt.Sprintf("%s not mined: %v", h, err)
	})
}

// On a network whose nodes serve no call traces, the native option says
// only a wallet account's payment is seen, and the hosted page says so.
func TestANetworkWithoutTracesAsksForAWalletAccount(t *testing.T) {
	devnet := *stack.Chains["devnet"]
	devnet.Network.TraceInternalTransfers = false
	ts, _, keys := sandboxAPI(t, apiOptions{chains: chainwatch.Chains{"devnet": &devnet}})
	cs := openSession(t, ts.URL, keys, "3", "eth-devnet", "usdc-devnet")
	for _, o := range cs["paymentOptions"].([]any) {
		o := o.(map[string]any)
		if want := o["assetDefinitionId"] == "eth-devnet"; (o["walletAccountOnly"] == true) != want {
			t.Errorf("option %v: walletAccountOnly should be %v", o, want)
		}
	}
	r, err := http.Get(ts.URL + "/checkout/" + str(cs["token"]))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	page, _ := io.ReadAll(r.Body)
	if !strings.Contains(string(page), `id="wallet-account"`) || !strings.Contains(string(page), "o.walletAccountOnly") {
		t.Fatal("the hosted page has no wallet-account notice")
	}
}
