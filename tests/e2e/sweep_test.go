package e2e

import (
	"context"
	"crypto/ecdsa"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
)

// A merchant sweeps with `paymentsd sweep` on their own machine: the
// funded deposit addresses come from the API, the plan is printed and
// nothing moves until --execute; then the USDC of a paid session leaves by
// an EIP-3009 authorisation the relayer pays for, the ETH of another pays
// its own gas, an open session's address is left alone, and a second run
// finds nothing to move. The engine's records are unchanged by it.
func TestSweepMovesPaidSessionsFundsToOneAddress(t *testing.T) {
	ts, _, keys := sandboxAPI(t, apiOptions{})
	ctx := context.Background()

	paidUSDC := openSession(t, ts.URL, keys, "5", "usdc-devnet")
	payToken(t, 2, str(paidUSDC["depositAddress"]), units("5000000"))
	paidETH := openSession(t, ts.URL, keys, "30", "eth-devnet")
	if _, err := chain.TransferNative(ctx, chain.Accounts[1], common.HexToAddress(str(paidETH["depositAddress"])), units("10000000000000000")); err != nil {
		t.Fatal(err)
	}
	open := openSession(t, ts.URL, keys, "20", "usdc-devnet")
	payToken(t, 2, str(open["depositAddress"]), units("15000000"))
	for _, cs := range []map[string]any{paidUSDC, paidETH} {
		waitSession(t, ts.URL, str(cs["token"]), "completed", func(s map[string]any) bool { return s["status"] == "completed" })
	}
	waitSession(t, ts.URL, str(open["token"]), "underpaid", func(s map[string]any) bool { return s["amountPaidUsd"] == "15.00" })

	listed := get(t, ts.URL, "/api/v1/projects/"+keys.id+"/deposit-addresses?funded=true", keys.key)
	mustStatus(t, listed, 200)
	if n := len(listed.list()); n != 3 {
		t.Fatalf("funded addresses listed: %d; want the three paid ones: %s", n, listed.Raw)
	}
	first, _ := listed.list()[0].(map[string]any)
	if r := first["received"].([]any)[0].(map[string]any); r["assetDefinitionId"] != "usdc-devnet" || r["amountBaseUnits"] != "5000000" {
		t.Fatalf("the first address received %v; want 5 USDC", r)
	}
	if first["lateUntil"] == nil || first["sessionStatus"] != "completed" {
		t.Fatalf("the first address: %v; want its session completed and its late-payment window's end", first)
	}
	txsBefore := get(t, ts.URL, "/api/v1/projects/"+keys.id+"/transactions", keys.key).list()

	m := newMerchantMachine(t, keys.id)
	dir, xprv, keyFile, relayerFile, relayer, bin := m.dir, m.xprv, m.keyFile, m.relayerFile, m.relayer, m.bin()
	dest := common.HexToAddress("0x5eeD00000000000000000000000000000000c0de")
	sweep := func(extra ...string) string {
		t.Helper()
		args := append([]string{"sweep", "--api", ts.URL, "--project", keys.id, "--network", "devnet", "--rpc", chain.URL,
			"--to", dest.Hex(), "--key-file", keyFile, "--relayer-key-file", relayerFile}, extra...)
		out := m.run(bin, keys.key, args...)
		if strings.Contains(out, xprv) || strings.Contains(out, hex.EncodeToString(crypto.FromECDSA(relayer))) {
			t.Fatalf("the sweep printed a private key:\n%s", out)
		}
		return out
	}

	plan := sweep()
	for _, want := range []string{"3 funded deposit addresses listed", "5 USDC", "authorization", "native",
		"Left at index 2", "still takes payments", "Dry run: nothing was signed or sent"} {
		if !strings.Contains(plan, want) {
			t.Fatalf("the dry run's plan lacks %q:\n%s", want, plan)
		}
	}
	if b, err := chain.TokenBalance(ctx, dest); err != nil || b.Sign() != 0 {
		t.Fatalf("the dry run moved %v: %v", b, err)
	}

	done := sweep("--execute")
	if !strings.Contains(done, "Moved 5 USDC to "+dest.Hex()) || !strings.Contains(done, "Moved 0.0099") {
		t.Fatalf("the sweep's report:\n%s", done)
	}
	if b, _ := chain.TokenBalance(ctx, dest); b.Cmp(units("5000000")) != 0 {
		t.Fatalf("destination holds %s USDC base units; want 5000000", b)
	}
	if b, _ := chain.TokenBalance(ctx, common.HexToAddress(str(open["depositAddress"]))); b.Cmp(units("15000000")) != 0 {
		t.Fatalf("the open session's address holds %s; the sweep must leave it", b)
	}
	eth, err := chain.Client().BalanceAt(ctx, dest, nil)
	if err != nil || eth.Cmp(units("9900000000000000")) <= 0 || eth.Cmp(units("10000000000000000")) >= 0 {
		t.Fatalf("destination holds %v wei; want the 0.01 ETH paid less its gas: %v", eth, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "sweep-"+keys.id+"-devnet.journal.json")); err != nil {
		t.Fatalf("no journal of the signed transactions: %v", err)
	}

	if again := sweep("--execute"); !strings.Contains(again, "Nothing to move.") {
		t.Fatalf("a second sweep:\n%s", again)
	}
	after := get(t, ts.URL, "/api/v1/projects/"+keys.id+"/transactions", keys.key).list()
	if len(after) != len(txsBefore) {
		t.Fatalf("the engine recorded the sweep's transfers: %d transactions, %d before", len(after), len(txsBefore))
	}
}

// merchantMachine is what a merchant's own machine holds to sign, in dir:
// the deposit key's xprv in a file, and a relayer account funded with 1
// ETH, its key in a file.
type merchantMachine struct {
	dir, xprv, keyFile, relayerFile string
	relayer                         *ecdsa.PrivateKey
	t                               *testing.T
}

func newMerchantMachine(t *testing.T, projectID string) merchantMachine {
	t.Helper()
	ctx := context.Background()
	m := merchantMachine{dir: t.TempDir(), t: t}
	m.xprv, _ = walletOf(t, projectID, false)
	m.keyFile = filepath.Join(m.dir, "deposit.xprv")
	if err := os.WriteFile(m.keyFile, []byte(m.xprv+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var err error
	if m.relayer, err = crypto.GenerateKey(); err != nil {
		t.Fatal(err)
	}
	relayer := crypto.PubkeyToAddress(m.relayer.PublicKey)
	if _, err := chain.TransferNative(ctx, chain.Accounts[3], relayer, units("1000000000000000000")); err != nil {
		t.Fatal(err)
	}
	m.relayerFile = filepath.Join(m.dir, "relayer.key")
	if err := os.WriteFile(m.relayerFile, []byte(hex.EncodeToString(crypto.FromECDSA(m.relayer))), 0o600); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 30*time.Second, func() (bool, string) {
		b, err := chain.Client().BalanceAt(ctx, relayer, nil)
		return err == nil && b.Sign() > 0, fmt.Sprintf("the relayer is not funded: %v %v", b, err)
	})
	return m
}

// bin builds paymentsd into the machine's folder.
// run runs the built paymentsd (bin) in the machine's folder with the
// project's API key, failing the test if it fails; it returns the output.
func (m merchantMachine) run(bin, apiKey string, args ...string) string {
	m.t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = m.dir
	cmd.Env = append(os.Environ(), "PAYMENTSD_API_KEY="+apiKey)
	out, err := cmd.CombinedOutput()
	if err != nil {
		m.t.Fatalf("paymentsd %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (m merchantMachine) bin() string {
	m.t.Helper()
	bin := filepath.Join(m.dir, "paymentsd")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/paymentsd").CombinedOutput(); err != nil {
		m.t.Fatalf("build paymentsd: %v\n%s", err, out)
	}
	return bin
}
