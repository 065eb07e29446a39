package reconcile

import (
	"context"
	"math/big"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rpc"
)

// fakeNode serves a tiny hand-made chain over JSON-RPC: just the calls the
// reconciler makes.
type fakeNode struct {
	blocks   []*rpcBlock
	receipts map[common.Hash]*types.Receipt
	native   map[common.Address]*big.Int
	tokens   map[common.Address]*big.Int // balances in the one token
}

func (n *fakeNode) ChainId() hexutil.Uint64     { return 1337 }
func (n *fakeNode) BlockNumber() hexutil.Uint64 { return hexutil.Uint64(len(n.blocks) - 1) }

func (n *fakeNode) GetBlockByNumber(num hexutil.Uint64, full bool) *rpcBlock {
	if int(num) >= len(n.blocks) {
		return nil
	}
	return n.blocks[num]
}

func (n *fakeNode) GetTransactionReceipt(h common.Hash) *types.Receipt { return n.receipts[h] }

func (n *fakeNode) GetBalance(a common.Address, at string) *hexutil.Big {
	if b, ok := n.native[a]; ok {
		return (*hexutil.Big)(b)
	}
	return (*hexutil.Big)(new(big.Int))
}

func (n *fakeNode) Call(args struct {
	To   common.Address `json:"to"`
	Data hexutil.Bytes  `json:"data"`
}, at string) hexutil.Bytes {
	b := new(big.Int)
	if v, ok := n.tokens[common.BytesToAddress(args.Data[4:])]; ok {
		b = v
	}
	return common.LeftPadBytes(b.Bytes(), 32)
}

var (
	token     = common.HexToAddress("0x00000000000000000000000000000000000000aa")
	multisend = common.HexToAddress("0x00000000000000000000000000000000000000bb")
	payer     = common.HexToAddress("0x00000000000000000000000000000000000000cc")
	addrA     = common.HexToAddress("0x000000000000000000000000000000000000000a")
	addrB     = common.HexToAddress("0x000000000000000000000000000000000000000b")
	addrC     = common.HexToAddress("0x000000000000000000000000000000000000000c")
	stranger  = common.HexToAddress("0x00000000000000000000000000000000000000dd")
	expiry    = time.Unix(1_000_000, 0)
)

func hash(b byte) common.Hash { return common.BytesToHash([]byte{b}) }

func transferLog(to common.Address, amount int64, index uint) *types.Log {
	return &types.Log{Address: token, Topics: []common.Hash{transferTopic, common.BytesToHash(payer.Bytes()), common.BytesToHash(to.Bytes())},
		Data: common.LeftPadBytes(big.NewInt(amount).Bytes(), 32), Index: index}
}

// handMadeChain: block 1 pays A 10 wei in full (and a reverted payment of
// 99 wei); block 2 pays B twice in one transaction, 3 + 2 tokens of 5 due,
// and a stranger once; block 3 pays C 7 wei through an internal call.
func handMadeChain() *fakeNode {
	n := &fakeNode{receipts: map[common.Hash]*types.Receipt{}, native: map[common.Address]*big.Int{
		addrA: big.NewInt(10), addrC: big.NewInt(7)}, tokens: map[common.Address]*big.Int{addrB: big.NewInt(5)}}
	block := func(num uint64, txs ...rpcTx) {
		b := &rpcBlock{Number: hexutil.Uint64(num), Hash: hash(byte(100 + num)), Timestamp: hexutil.Uint64(expiry.Unix() - 100 + int64(num)),
			Transactions: txs}
		if num > 0 {
			b.ParentHash = n.blocks[num-1].Hash
		}
		n.blocks = append(n.blocks, b)
	}
	receipt := func(tx common.Hash, status uint64, logs ...*types.Log) {
		// A node sends "logs": [] for a receipt without logs, never null.
		n.receipts[tx] = &types.Receipt{Status: status, BlockHash: n.blocks[len(n.blocks)-1].Hash, Logs: append([]*types.Log{}, logs...)}
	}
	block(0)
	block(1, rpcTx{Hash: hash(1), From: payer, To: &addrA, Value: (*hexutil.Big)(big.NewInt(10))},
		rpcTx{Hash: hash(2), From: payer, To: &addrA, Value: (*hexutil.Big)(big.NewInt(99))})
	receipt(hash(1), 1)
	receipt(hash(2), 0)
	block(2, rpcTx{Hash: hash(3), From: payer, To: &multisend, Value: (*hexutil.Big)(new(big.Int))})
	receipt(hash(3), 1, transferLog(addrB, 3, 0), transferLog(addrB, 2, 1), transferLog(stranger, 4, 2))
	block(3, rpcTx{Hash: hash(4), From: payer, To: &multisend, Value: (*hexutil.Big)(big.NewInt(7))})
	receipt(hash(4), 1, &types.Log{Address: multisend, Topics: []common.Hash{nativeSentTopic, common.BytesToHash(addrC.Bytes())},
		Data: common.LeftPadBytes(big.NewInt(7).Bytes(), 32), Index: 0})
	return n
}

func serve(t *testing.T, n *fakeNode) string {
	t.Helper()
	srv := rpc.NewServer()
	if err := srv.RegisterName("eth", n); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return ts.URL
}

func session(id string, addr common.Address, status, exception string, nativeDue, tokenDue int64) Session {
	return Session{ID: id, Status: status, Exception: exception, DepositAddress: addr, PaidUSD: new(big.Rat),
		Options:   []Option{{AssetID: "eth", Due: big.NewInt(nativeDue)}, {AssetID: "usdc", Token: token, Due: big.NewInt(tokenDue)}},
		ExpiresAt: expiry, LateUntil: expiry.Add(24 * time.Hour), Version: 1}
}

func row(id, session, status, hash string, logIndex int, asset string, amount int64, block common.Hash, history ...string) Tx {
	return Tx{ID: id, SessionID: session, Status: status, ChainID: 1337, TxHash: hash, LogIndex: logIndex, AssetID: asset,
		Amount: big.NewInt(amount), AmountUSD: new(big.Rat), BlockHash: block.Hex(), Version: len(history), History: history}
}

func events(object string, types ...string) []Event {
	var out []Event
	for i, typ := range types {
		status := typ[strings.LastIndex(typ, ".")+1:]
		if status == "created" {
			status = "open"
		}
		out = append(out, Event{ID: object + typ, ObjectID: object, Type: typ, Version: i + 1, DataVersion: i + 1, DataStatus: status})
	}
	return out
}

func TestReadChainFindsEveryTransferToAWatchedAddress(t *testing.T) {
	ch, err := ReadChain(context.Background(), serve(t, handMadeChain()), 0, []common.Address{addrA, addrB, addrC}, []common.Address{token})
	if err != nil {
		t.Fatal(err)
	}
	if ch.ChainID != 1337 || ch.Head != 3 || ch.Blocks != 4 {
		t.Fatalf("chain %d head %d blocks %d", ch.ChainID, ch.Head, ch.Blocks)
	}
	var got []string
	for _, tr := range ch.Transfers {
		got = append(got, tr.Key()+" "+strings.ToUpper(tr.To.Hex()[40:])+" "+tr.Amount.String())
	}
	want := []string{
		strings.ToLower(hash(1).Hex()) + "/-1 0A 10",
		strings.ToLower(hash(3).Hex()) + "/0 0B 3",
		strings.ToLower(hash(3).Hex()) + "/1 0B 2",
		strings.ToLower(hash(4).Hex()) + "/0 0C 7",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("transfers:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !ch.Transfers[3].Internal || ch.Native[addrA].Int64() != 10 || ch.Tokens[token][addrB].Int64() != 5 {
		t.Fatalf("internal %v, balances %v %v", ch.Transfers[3].Internal, ch.Native, ch.Tokens)
	}
}

func TestReconcileFindsWhatTheEngineGotWrong(t *testing.T) {
	ch, err := ReadChain(context.Background(), serve(t, handMadeChain()), 0, []common.Address{addrA, addrB, addrC}, []common.Address{token})
	if err != nil {
		t.Fatal(err)
	}
	rec := &Records{CompleteOn: "finalized", Tolerance: new(big.Rat), PlanVersions: map[string]int{},
		Sessions: []Session{
			session("cs_a", addrA, "completed", "", 10, 10),
			// Only the first of B's two transfers counted; B is shown
			// underpaid (right for what the engine saw, wrong for the chain).
			session("cs_b", addrB, "processing", "underpaid", 50, 5),
			session("cs_c", addrC, "open", "", 7, 7),
		},
		Transactions: []Tx{
			row("tx_1", "cs_a", "finalized", strings.ToLower(hash(1).Hex()), -1, "eth", 10, hash(101), "confirmed", "finalized"),
			row("tx_2", "cs_b", "finalized", strings.ToLower(hash(3).Hex()), 0, "usdc", 3, hash(102), "confirmed", "finalized"),
		},
	}
	rec.Sessions[0].Version, rec.Sessions[1].Version, rec.Sessions[2].Version = 3, 3, 1
	rec.Events = slices.Concat(
		events("cs_a", "checkout.session.created", "checkout.session.processing", "checkout.session.completed"),
		// a gap: version 2 is missing
		[]Event{{ID: "e1", ObjectID: "cs_b", Type: "checkout.session.created", Version: 1, DataVersion: 1, DataStatus: "open"},
			{ID: "e3", ObjectID: "cs_b", Type: "checkout.session.processing", Version: 3, DataVersion: 3, DataStatus: "processing"}},
		events("cs_c", "checkout.session.created"),
		events("tx_1", "transaction.confirmed", "transaction.finalized"),
		events("tx_2", "transaction.confirmed", "transaction.finalized"),
	)
	res := Reconcile(ch, rec, Settings{ChainID: 1337, Now: expiry.Add(-time.Minute), Margin: 5 * time.Second})

	var got []string
	for _, d := range res.Discrepancies {
		got = append(got, d.Kind+" "+d.SessionID)
	}
	slices.Sort(got)
	want := []string{
		"events cs_b", "events cs_b", // 2 events for version 3, and the gap
		KindMissing + " cs_b", // B's second transfer
		KindOutcome + " cs_b", // fully paid, shown underpaid
		KindOutcome + " cs_c", // paid through an internal call, shown open
		KindSum + " cs_b",     // 5 on chain, 3 counted
		KindSum + " cs_c",     // 7 on chain, none counted
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("discrepancies:\n%v\nwant:\n%v", res.Discrepancies, want)
	}
	if res.Transfers != 4 || res.Internal != 1 || res.Expected["completed"] != 3 || res.Actual["processing/underpaid"] != 1 {
		t.Fatalf("counts: %+v", res)
	}
}

func TestReconcileFindsPhantomsStaleBlocksAndUnfinishedRows(t *testing.T) {
	ch, err := ReadChain(context.Background(), serve(t, handMadeChain()), 0, []common.Address{addrA, addrB, addrC}, []common.Address{token})
	if err != nil {
		t.Fatal(err)
	}
	rec := &Records{CompleteOn: "finalized", Tolerance: new(big.Rat), PlanVersions: map[string]int{},
		Sessions: []Session{session("cs_a", addrA, "completed", "overpaid", 5, 5)},
		Transactions: []Tx{
			// A's payment, recorded in a block that left the chain.
			row("tx_1", "cs_a", "finalized", strings.ToLower(hash(1).Hex()), -1, "eth", 10, hash(42), "confirmed", "finalized"),
			// The reverted one, counted.
			row("tx_2", "cs_a", "finalized", strings.ToLower(hash(2).Hex()), -1, "eth", 99, hash(101), "pending", "confirmed", "finalized"),
			// A claim still pending.
			row("tx_3", "cs_a", "pending", strings.ToLower(hash(9).Hex()), -1, "", 0, common.Hash{}, "pending"),
		},
	}
	rec.Sessions[0].Version = 1
	rec.Events = slices.Concat(events("cs_a", "checkout.session.created"),
		events("tx_1", "transaction.confirmed", "transaction.finalized"),
		events("tx_2", "transaction.pending", "transaction.confirmed", "transaction.finalized"),
		events("tx_3", "transaction.pending"))
	res := Reconcile(ch, rec, Settings{ChainID: 1337, Now: expiry, Margin: time.Second})
	var got []string
	for _, d := range res.Discrepancies {
		got = append(got, d.Kind)
	}
	slices.Sort(got)
	// The outcome itself is right: 10 paid of 5 due.
	want := []string{KindEvents, KindNotFinal, KindPhantom, KindStaleBlock, KindSum}
	if !slices.Equal(got, want) {
		t.Fatalf("discrepancies:\n%v\nwant %v", res.Discrepancies, want)
	}
}

func TestExpect(t *testing.T) {
	s := session("cs", addrA, "", "", 100, 100)
	at := func(amount int64, offset time.Duration, tok common.Address) Transfer {
		return Transfer{Amount: big.NewInt(amount), Time: uint64(expiry.Add(offset).Unix()), Token: tok}
	}
	native, usdc := common.Address{}, token
	before, after := expiry.Add(-time.Hour), expiry.Add(time.Hour)
	for _, c := range []struct {
		name string
		paid []Transfer
		now  time.Time
		want []string
	}{
		{"nothing, open", nil, before, []string{"open"}},
		{"nothing, expired", nil, after, []string{"expired"}},
		{"in full", []Transfer{at(100, -time.Minute, native)}, after, []string{"completed"}},
		{"in full across assets", []Transfer{at(40, -time.Minute, native), at(60, -time.Minute, usdc)}, before, []string{"completed"}},
		{"one unit short", []Transfer{at(40, -time.Minute, native), at(59, -time.Minute, usdc)}, before, []string{"processing/underpaid"}},
		{"part, then expired", []Transfer{at(30, -time.Minute, usdc)}, after, []string{"expired/underpaid"}},
		{"over", []Transfer{at(101, -time.Minute, usdc)}, after, []string{"completed/overpaid"}},
		{"late", []Transfer{at(100, time.Minute, usdc)}, after, []string{"expired/paid_late"}},
		{"part, then the rest late", []Transfer{at(50, -time.Minute, usdc), at(50, time.Minute, usdc)}, after, []string{"expired/paid_late"}},
		{"late and over", []Transfer{at(150, time.Minute, usdc)}, after, []string{"expired/overpaid"}},
		{"at the edge of expiry", []Transfer{at(100, time.Second, usdc)}, after, []string{"expired/paid_late", "completed"}},
		{"after the late window", []Transfer{at(100, 25*time.Hour, usdc)}, after.Add(25 * time.Hour), []string{"expired"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			outs, _ := Expect(s, c.paid, c.now, 5*time.Second, new(big.Rat))
			var got []string
			for _, o := range outs {
				got = append(got, o.String())
			}
			slices.Sort(got)
			slices.Sort(c.want)
			if !slices.Equal(got, c.want) {
				t.Fatalf("outcomes %v, want %v", got, c.want)
			}
		})
	}
	// A 2% tolerance completes at 98%.
	outs, _ := Expect(s, []Transfer{at(98, -time.Minute, usdc)}, before, time.Second, big.NewRat(2, 1))
	if len(outs) != 1 || outs[0].Status != "completed" {
		t.Fatalf("with tolerance: %v", outs)
	}
}

// Money out: a refund the chain shows paid must be recorded finalized, one
// recorded final must be paid on the chain, and a refund's address holds
// what its finalized refunds make.
func TestRefundsAgainstTheChain(t *testing.T) {
	to1, to2, to3 := common.HexToAddress("0x00000000000000000000000000000000000000f1"),
		common.HexToAddress("0x00000000000000000000000000000000000000f2"), common.HexToAddress("0x00000000000000000000000000000000000000f3")
	h1, h2 := common.HexToHash("0x01"), common.HexToHash("0x02")
	ch := &Chain{
		Transfers: []Transfer{
			{TxHash: h1, LogIndex: 0, To: to1, Token: token, Amount: big.NewInt(500)},
			{TxHash: h2, LogIndex: 0, To: to2, Token: token, Amount: big.NewInt(700)},
		},
		Native: map[common.Address]*big.Int{},
		Tokens: map[common.Address]map[common.Address]*big.Int{token: {to1: big.NewInt(500), to2: big.NewInt(700)}},
	}
	events := func(id string, statuses ...string) []Event {
		var out []Event
		for i, st := range statuses {
			typ := "refund." + st
			if i == 0 {
				typ = "refund.created"
			}
			out = append(out, Event{ID: id + st, ObjectID: id, Type: typ, Version: i + 1, DataVersion: i + 1, DataStatus: st})
		}
		return out
	}
	rec := &Records{
		Refunds: []Refund{
			{ID: "rf_ok", SessionID: "cs_1", Status: "finalized", To: to1, Token: token, Amount: big.NewInt(500), TxHash: strings.ToLower(h1.Hex()), Version: 3},
			{ID: "rf_lagging", SessionID: "cs_2", Status: "sent", To: to2, Token: token, Amount: big.NewInt(700), TxHash: strings.ToLower(h2.Hex()), Version: 2},
			{ID: "rf_phantom", SessionID: "cs_3", Status: "finalized", To: to3, Token: token, Amount: big.NewInt(900), TxHash: "0x03", Version: 3},
		},
	}
	rec.Events = append(append(events("rf_ok", "awaiting_signature", "sent", "finalized"), events("rf_lagging", "awaiting_signature", "sent")...),
		events("rf_phantom", "awaiting_signature", "sent", "finalized")...)
	res := Reconcile(ch, rec, Settings{ChainID: 1337, Now: time.Now()})
	var got []string
	for _, d := range res.Discrepancies {
		got = append(got, d.Kind+" "+d.SessionID)
	}
	slices.Sort(got)
	// The lagging refund, and its address holding what no finalized
	// refund makes; the phantom, and its address holding none of it.
	want := []string{"refund cs_2", "refund cs_2", "refund cs_3", "refund cs_3"}
	if !slices.Equal(got, want) || res.Refunds != 3 || res.RefundsPaid != 2 {
		t.Fatalf("discrepancies %v (%+v), %d refunds, %d paid; want %v, 3, 2", got, res.Discrepancies, res.Refunds, res.RefundsPaid, want)
	}
}

// Payouts as refunds: paid on chain means finalized, and a batch is
// completed exactly when every payout of it is done; their events carry
// the statuses they name.
func TestPayoutsAgainstTheChain(t *testing.T) {
	to1, to2 := common.HexToAddress("0x00000000000000000000000000000000000000e1"), common.HexToAddress("0x00000000000000000000000000000000000000e2")
	h1 := common.HexToHash("0x11")
	ch := &Chain{
		Transfers: []Transfer{{TxHash: h1, LogIndex: 0, To: to1, Token: token, Amount: big.NewInt(300)}},
		Native:    map[common.Address]*big.Int{},
		Tokens:    map[common.Address]map[common.Address]*big.Int{token: {to1: big.NewInt(300)}},
	}
	rec := &Records{
		Payouts: []Refund{
			{ID: "po_ok", SessionID: "pb_done", Status: "finalized", To: to1, Token: token, Amount: big.NewInt(300), TxHash: strings.ToLower(h1.Hex()), Version: 4},
			{ID: "po_waiting", SessionID: "pb_early", Status: "awaiting_signature", To: to2, Token: token, Amount: big.NewInt(100), Version: 2},
		},
		Batches: map[string]Batch{"pb_done": {Status: "approved", Version: 2}, "pb_early": {Status: "completed", Version: 3}},
		Events: []Event{
			{ID: "e1", ObjectID: "pb_done", Type: "payout_batch.created", Version: 1, DataVersion: 1, DataStatus: "awaiting_approval"},
			{ID: "e2", ObjectID: "pb_done", Type: "payout_batch.approved", Version: 2, DataVersion: 2, DataStatus: "approved"},
			{ID: "e3", ObjectID: "po_ok", Type: "payout.sent", Version: 3, DataVersion: 3, DataStatus: "sent"},
			{ID: "e4", ObjectID: "po_ok", Type: "payout.finalized", Version: 4, DataVersion: 4, DataStatus: "finalized"},
			{ID: "e5", ObjectID: "pb_early", Type: "payout_batch.created", Version: 1, DataVersion: 1, DataStatus: "awaiting_approval"},
			{ID: "e6", ObjectID: "pb_early", Type: "payout_batch.approved", Version: 2, DataVersion: 2, DataStatus: "approved"},
			{ID: "e7", ObjectID: "pb_early", Type: "payout_batch.completed", Version: 3, DataVersion: 3, DataStatus: "completed"},
		},
	}
	res := Reconcile(ch, rec, Settings{ChainID: 1337, Now: time.Now()})
	var got []string
	for _, d := range res.Discrepancies {
		got = append(got, d.Kind+" "+d.SessionID)
	}
	slices.Sort(got)
	// The batch whose payouts are all done but which is not completed, and
	// the one completed with a payout still to sign.
	want := []string{"refund pb_done", "refund pb_early"}
	if !slices.Equal(got, want) || res.Payouts != 2 || res.PayoutsPaid != 1 {
		t.Fatalf("discrepancies %v (%+v), %d payouts, %d paid; want %v, 2, 1", got, res.Discrepancies, res.Payouts, res.PayoutsPaid, want)
	}
}

// Money out is counted like money in: every transfer out of a treasury
// pays exactly one refund or payout; one that pays none, or closes two, is
// a discrepancy, and a payment to a deposit address, a transfer back to a
// treasury or one to the run's contracts is not money out.
func TestEveryOutgoingTransferPaysOneItem(t *testing.T) {
	treasury := common.HexToAddress("0x00000000000000000000000000000000000000aa")
	multisend := common.HexToAddress("0x00000000000000000000000000000000000000ab")
	to1, to2, to3 := common.HexToAddress("0x00000000000000000000000000000000000000d1"),
		common.HexToAddress("0x00000000000000000000000000000000000000d2"), common.HexToAddress("0x00000000000000000000000000000000000000d3")
	h1, h2, h3, h4 := common.HexToHash("0x21"), common.HexToHash("0x22"), common.HexToHash("0x23"), common.HexToHash("0x24")
	out := func(h common.Hash, to common.Address, amount int64) Transfer {
		return Transfer{TxHash: h, LogIndex: 0, From: treasury, To: to, Token: token, Amount: big.NewInt(amount)}
	}
	paid := []Transfer{out(h1, to1, 100), out(h2, to2, 200), out(h3, to3, 300)}
	ch := &Chain{
		Transfers: paid,
		// Besides the three: a payment to a session, a cancellation to
		// itself, value to the multisend.
		Outgoing:   append(slices.Clone(paid), out(h4, addrA, 50), out(h4, treasury, 0), out(h4, multisend, 9)),
		Treasuries: []common.Address{treasury},
		Native:     map[common.Address]*big.Int{},
		Tokens:     map[common.Address]map[common.Address]*big.Int{token: {to1: big.NewInt(100), to2: big.NewInt(200), to3: big.NewInt(300)}},
	}
	hex := func(h common.Hash) string { return strings.ToLower(h.Hex()) }
	rec := &Records{
		Sessions: []Session{{ID: "cs_a", DepositAddress: addrA, Status: "open", PaidUSD: new(big.Rat), ExpiresAt: time.Now().Add(time.Hour), Version: 1}},
		Refunds: []Refund{
			{ID: "rf_1", SessionID: "cs_a", Status: "finalized", To: to1, Token: token, Amount: big.NewInt(100), TxHash: hex(h1), Version: 1},
		},
		Payouts: []Refund{
			// to2's transfer closes two payouts alike; to3's none.
			{ID: "po_2", SessionID: "pb_x", Status: "finalized", To: to2, Token: token, Amount: big.NewInt(100), TxHash: hex(h2), Version: 1},
			{ID: "po_3", SessionID: "pb_x", Status: "finalized", To: to2, Token: token, Amount: big.NewInt(100), TxHash: hex(h2), Version: 1},
		},
	}
	rec.Payouts[0].Amount, rec.Payouts[1].Amount = big.NewInt(200), big.NewInt(200)
	res := Reconcile(ch, rec, Settings{ChainID: 1337, Now: time.Now(), NotMoneyOut: []common.Address{multisend}})
	var got []string
	for _, d := range res.Discrepancies {
		if d.Kind == KindRefund && strings.Contains(d.Detail, "the transfer ") {
			got = append(got, d.Detail)
		}
	}
	if res.Outgoing != 3 || len(got) != 2 || !strings.Contains(got[0], "recorded for 2 items: payout po_2, payout po_3") ||
		!strings.Contains(got[1], h3.Hex()) || !strings.Contains(got[1], "no refund or payout records") {
		t.Fatalf("%d outgoing, discrepancies %q; want 3, the transfer closing two payouts and the one closing none", res.Outgoing, got)
	}
}
