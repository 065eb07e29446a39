package sentlook_test

import (
	"context"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/paymentsd/paymentsd/activities/sentlook"
	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/dev/devchain"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/store/storetest"
)

// The looks are read from a dev chain that mines only when told (the
// test decides how deep a transaction is) and a real store. Bitcoin's
// reader is exercised against a regtest node in activities'
// bitcoinout_test.go.

// fixture is a dev chain, its network as the engine connects to it (USDC
// and ETH, three confirmations), a store and a project of the store.
type fixture struct {
	dev     *devchain.Chain
	net     *chainwatch.Chain
	store   *store.Store
	project string
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	ctx := context.Background()
	dev, err := devchain.Start(ctx, devchain.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dev.Close() })
	chains, err := chainwatch.Connect(ctx, []chainwatch.Network{{Key: "devnet", ChainID: 1337, Confirmations: 3,
		RPCURLs: []string{dev.URL}}}, payment.Catalog{Assets: []payment.Asset{
		{ID: "usdc-devnet", Symbol: "USDC", Decimals: 6, Network: "devnet", ChainID: 1337, TokenAddress: dev.Token.Hex(),
			Price: payment.PriceSource{Kind: payment.PriceUSDPegged}},
		{ID: "eth-devnet", Symbol: "ETH", Decimals: 18, Network: "devnet", ChainID: 1337,
			Price: payment.PriceSource{Kind: payment.PriceChainlink, Aggregator: dev.PriceFeed.Hex(), HeartbeatSeconds: 3600}},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := storetest.NewStore(t)
	now := time.Now().UTC().Truncate(time.Microsecond)
	pid := payment.NewID(payment.PrefixProject, now)
	if err := st.Checkout().CreateProject(ctx, payment.Project{ID: pid, Name: "Looks", CompleteOn: payment.TxFinalized, CreatedAt: now}, nil); err != nil {
		t.Fatal(err)
	}
	return fixture{dev: dev, net: chains["devnet"], store: st, project: pid}
}

// prove records address as a verified recipient of the project in one
// environment, as its owner's signed challenge would.
func (f fixture) prove(t *testing.T, address common.Address, isLive bool) {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC()
	if _, err := f.store.Checkout().ClaimRecipient(ctx, payment.Recipient{ProjectID: f.project, IsLive: isLive, Address: address.Hex(),
		Challenge: "proof", ChallengeExpiresAt: now.Add(time.Hour), CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.Checkout().VerifyRecipient(ctx, f.project, isLive, address.Hex(), "proof", "eip191", now); err != nil {
		t.Fatal(err)
	}
}

// countFor records transfer logIndex of hash as counting for item id, as
// the store does when that item's transaction is recorded paid by it.
func (f fixture) countFor(t *testing.T, hash common.Hash, logIndex int, id string) {
	t.Helper()
	if _, err := f.store.Pool().Exec(context.Background(), `INSERT INTO outgoing_transfers (chain_id, tx_hash, log_index, item_id)
		VALUES (1337, $1, $2, $3)`, strings.ToLower(hash.Hex()), logIndex, id); err != nil {
		t.Fatal(err)
	}
}

// item is a sandbox refund or payout (by prefix) of the project on devnet.
func (f fixture) item(prefix string) sentlook.Item {
	return sentlook.Item{ID: payment.NewID(prefix, time.Now()), ProjectID: f.project, Outgoing: payment.Outgoing{
		Network: "devnet", ChainID: 1337, AssetDefinitionID: "usdc-devnet", Decimals: 6}}
}

// A transaction sent but not mined, or a hash the chain never saw, is not
// known: were it read as known, a merchant's reported refund would be
// judged (and rejected) on transfers that do not exist yet. Its look
// names no proven address nor taken transfer, though both exist.
func TestATransactionNotMinedIsNotKnown(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	payer := f.dev.Accounts[0]
	f.prove(t, payer.Address, false)
	pending, err := f.dev.TransferToken(ctx, payer, f.dev.Accounts[1].Address, big.NewInt(2_000_000))
	if err != nil {
		t.Fatal(err)
	}
	f.countFor(t, pending, 0, "rf_another")
	for name, hash := range map[string]common.Hash{"pending": pending, "unknown": common.HexToHash("0xabc123")} {
		tx, err := sentlook.Read(ctx, f.store, f.net, hash.Hex())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if tx.Known || tx.State.Mined {
			t.Fatalf("%s: known %v, mined %v", name, tx.Known, tx.State.Mined)
		}
		l, known, err := sentlook.Look(ctx, f.store, f.net, f.item(payment.PrefixRefund), hash.Hex())
		if err != nil || known || l.Mined || len(l.Transfers) != 0 || l.Sources != nil || l.Taken != nil {
			t.Fatalf("%s: look %+v, known %v, %v", name, l, known, err)
		}
	}
}

// A mined transfer is read as the merchant sent it: the token's and the
// native coin's transfers with their amounts in base units, the signer,
// and confirmations counting up towards the network's three as blocks are
// mined. Were any wrong, a paid refund would never complete, or complete
// before its network's depth.
func TestAMinedTransferIsReadWithItsTransfersSenderAndDepth(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	payer, payee := f.dev.Accounts[0], f.dev.Accounts[1].Address
	h, err := f.dev.TransferToken(ctx, payer, payee, big.NewInt(1_500_000))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.dev.Mine(ctx, h); err != nil {
		t.Fatal(err)
	}
	tx, err := sentlook.Read(ctx, f.store, f.net, h.Hex())
	if err != nil {
		t.Fatal(err)
	}
	if !tx.Known || !tx.State.Mined || !tx.State.Succeeded {
		t.Fatalf("mined transfer: known %v, state %+v", tx.Known, tx.State)
	}
	l := tx.For(f.item(payment.PrefixRefund))
	want := []payment.Transfer{{LogIndex: 0, From: payer.Address.Hex(), To: payee.Hex(), AssetID: "usdc-devnet", AmountBaseUnits: "1500000"}}
	if !reflect.DeepEqual(l.Transfers, want) || l.Sender != payer.Address.Hex() {
		t.Fatalf("transfers %+v sender %s, want %+v from %s", l.Transfers, l.Sender, want, payer.Address.Hex())
	}
	if !l.Mined || !l.Succeeded || l.Final || l.Confirmations != 1 || l.Required != 3 {
		t.Fatalf("just mined: %+v", l)
	}
	f.dev.Commit()
	f.dev.Commit()
	tx, err = sentlook.Read(ctx, f.store, f.net, h.Hex())
	if err != nil {
		t.Fatal(err)
	}
	if l := tx.For(f.item(payment.PrefixPayout)); l.Confirmations != 3 || !reflect.DeepEqual(l.Transfers, want) {
		t.Fatalf("two blocks later: %+v", l)
	}

	wei := new(big.Int).Exp(big.NewInt(10), big.NewInt(15), nil)
	native, err := f.dev.TransferNative(ctx, payer, payee, wei)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.dev.Mine(ctx, native); err != nil {
		t.Fatal(err)
	}
	tx, err = sentlook.Read(ctx, f.store, f.net, native.Hex())
	if err != nil {
		t.Fatal(err)
	}
	want = []payment.Transfer{{LogIndex: -1, From: payer.Address.Hex(), To: payee.Hex(), AssetID: "eth-devnet", AmountBaseUnits: wei.String()}}
	if l := tx.For(f.item(payment.PrefixRefund)); !tx.Known || !reflect.DeepEqual(l.Transfers, want) || l.Sender != payer.Address.Hex() {
		t.Fatalf("native transfer: known %v, look %+v", tx.Known, l)
	}
}

// A refund may be paid from any address its project proved in the same
// environment, a payout only from its own source; and a transfer that
// counts for another item already is named taken, except to that item.
// Were Sources wrong, a merchant's refund paid from its proven treasury
// would be rejected (or one paid from a stranger's accepted); were Taken,
// one transfer could pay two items.
func TestLookNamesProvenSourcesForRefundsAndTransfersTaken(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	treasury, other := f.dev.Accounts[0], f.dev.Accounts[2]
	f.prove(t, treasury.Address, false)
	f.prove(t, other.Address, true) // the live environment's: not the sandbox refund's
	h, err := f.dev.TransferToken(ctx, treasury, f.dev.Accounts[1].Address, big.NewInt(700_000))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.dev.Mine(ctx, h); err != nil {
		t.Fatal(err)
	}
	// Stands for the record of another refund this transfer paid.
	f.countFor(t, h, 0, "rf_paidalready")

	refund := f.item(payment.PrefixRefund)
	l, known, err := sentlook.Look(ctx, f.store, f.net, refund, h.Hex())
	if err != nil || !known {
		t.Fatalf("refund: known %v, %v", known, err)
	}
	if want := []string{strings.ToLower(treasury.Address.Hex())}; !reflect.DeepEqual(l.Sources, want) {
		t.Fatalf("refund's sources %v, want %v", l.Sources, want)
	}
	if want := map[int]string{0: "rf_paidalready"}; !reflect.DeepEqual(l.Taken, want) || len(l.Transfers) != 1 {
		t.Fatalf("refund: taken %v, transfers %+v", l.Taken, l.Transfers)
	}

	l, known, err = sentlook.Look(ctx, f.store, f.net, f.item(payment.PrefixPayout), h.Hex())
	if err != nil || !known || l.Sources != nil || !reflect.DeepEqual(l.Taken, map[int]string{0: "rf_paidalready"}) {
		t.Fatalf("payout: sources %v, taken %v, known %v, %v", l.Sources, l.Taken, known, err)
	}

	paid := refund
	paid.ID = "rf_paidalready"
	if l, _, err := sentlook.Look(ctx, f.store, f.net, paid, h.Hex()); err != nil || len(l.Taken) != 0 {
		t.Fatalf("the item the transfer counts for: taken %v, %v", l.Taken, err)
	}
}
