package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/ethereum/go-ethereum/common"

	v1 "github.com/paymentsd/paymentsd/api/gen/paymentsd/v1"
	"github.com/paymentsd/paymentsd/api/gen/paymentsd/v1/paymentsdv1connect"
	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
)

// violations are the fields a Connect validation error names, in order.
func violations(t *testing.T, err error) []string {
	t.Helper()
	var ce *connect.Error
	if !errors.As(err, &ce) || ce.Code() != connect.CodeInvalidArgument || len(ce.Details()) != 1 {
		t.Fatalf("not a validation error: %v", err)
	}
	detail, derr := ce.Details()[0].Value()
	v, ok := detail.(*v1.ValidationError)
	if derr != nil || !ok {
		t.Fatalf("the validation detail: %v %v", detail, derr)
	}
	var out []string
	for _, f := range v.Violations {
		out = append(out, f.Field)
	}
	return out
}

// Payout batches through the Connect API, as the Go client calls it: a
// batch with bad lines is refused whole, each named payouts[i].field as
// the REST API names it; a good one is listed, read with its report and
// payouts, canceled; another, approved by its owner through REST (no
// procedure approves), is paid from the treasury and its hash reported
// through Connect, and followed to finalized. Another project's key finds
// none of it.
func TestPayoutBatchesThroughConnect(t *testing.T) {
	ts, e := newAPI(t, apiOptions{})
	owner, keys := ownedProject(t, ts.URL, "Connect payouts shop")
	ctx := context.Background()
	proj := "/api/v1/projects/" + keys.id
	payments := paymentsdv1connect.NewPaymentsServiceClient(http.DefaultClient, ts.URL)
	treasury, _ := newTreasury(t)
	verifyRecipient(t, e, keys.id, treasury.Key)
	from := treasury.Address.Hex()
	alice, bob := common.HexToAddress(fmt.Sprintf("0xa11ce%035x", time.Now().UnixNano())), common.HexToAddress(fmt.Sprintf("0xb0b%037x", time.Now().UnixNano()))

	// Bad lines: the second's amount has more decimals than USDC, the
	// third's address is no address. The REST API names them alike.
	_, err := payments.CreatePayoutBatch(ctx, authed(&v1.CreatePayoutBatchRequest{ProjectId: keys.id, FromAddress: &from,
		Payouts: []*v1.PayoutInput{
			{Address: ptr(alice.Hex()), Asset: ptr("usdc-devnet"), Amount: ptr("1.5")},
			{Address: ptr(bob.Hex()), Asset: ptr("usdc-devnet"), Amount: ptr("1.1234567")},
			{Address: ptr("0x1234"), Asset: ptr("usdc-devnet"), Amount: ptr("1")},
		}}, keys.key))
	got := violations(t, err)
	if want := []string{"payouts[1].amount", "payouts[2].address"}; !slices.Equal(got, want) {
		t.Fatalf("the refused batch names %v; want %v", got, want)
	}
	rest := post(t, ts.URL, proj+"/payout-batches", keys.key, map[string]any{"fromAddress": from, "payouts": []any{
		map[string]any{"address": alice.Hex(), "asset": "usdc-devnet", "amount": "1.5"},
		map[string]any{"address": bob.Hex(), "asset": "usdc-devnet", "amount": "1.1234567"},
		map[string]any{"address": "0x1234", "asset": "usdc-devnet", "amount": "1"},
	}})
	mustStatus(t, rest, http.StatusUnprocessableEntity)
	if !slices.Equal(rest.detailFields(), got) {
		t.Fatalf("REST names %v, Connect %v", rest.detailFields(), got)
	}
	_, err = payments.CreatePayoutBatch(ctx, authed(&v1.CreatePayoutBatchRequest{ProjectId: keys.id, FromAddress: &from,
		Payouts: []*v1.PayoutInput{{Address: ptr(alice.Hex()), Asset: ptr("usdc-devnet")}}}, keys.key))
	if got := violations(t, err); !slices.Equal(got, []string{"payouts[0].amount"}) {
		t.Fatalf("a payout without an amount: %v", got)
	}
	list, err := payments.ListPayoutBatches(ctx, authed(&v1.ListPayoutBatchesRequest{ProjectId: keys.id}, keys.key))
	if err != nil || len(list.Msg.PayoutBatches) != 0 || list.Msg.Pagination.Total != 0 {
		t.Fatalf("refused batches left something: %v %v", list, err)
	}

	// A good batch, waiting for an owner.
	created, err := payments.CreatePayoutBatch(ctx, authed(&v1.CreatePayoutBatchRequest{ProjectId: keys.id, FromAddress: &from,
		Reference: ptr("December"), Payouts: []*v1.PayoutInput{
			{Address: ptr(alice.Hex()), Asset: ptr("usdc-devnet"), Amount: ptr("12.5"), Reference: ptr("inv-1")},
			{Address: ptr(bob.Hex()), Asset: ptr("eth-devnet"), Amount: ptr("0.01"), Reference: ptr("inv-2")},
		}}, keys.key))
	if err != nil {
		t.Fatal(err)
	}
	batch := created.Msg.PayoutBatch
	if batch.Status != "awaiting_approval" || batch.PayoutCount != 2 || batch.Reference != "December" || batch.ApprovedBy != nil ||
		!strings.EqualFold(batch.FromAddress, from) || len(batch.Payouts) != 2 || batch.Report.GetStatuses()["awaiting_approval"] != 2 ||
		len(batch.Report.GetTotals()) != 2 || batch.Report.Totals[0].ToSign != "12.5" || batch.Report.Totals[1].Requested != "0.01" {
		t.Fatalf("the batch created: %v", batch)
	}
	for i, p := range batch.Payouts {
		if p.Status != "awaiting_approval" || p.Transfer != nil || p.Line != int32(i+1) || p.BatchId != batch.Id {
			t.Fatalf("a payout before approval: %v", p)
		}
	}
	if p := batch.Payouts[0]; p.Amount != "12.5" || p.AmountBaseUnits != "12500000" || p.Symbol != "USDC" || p.Reference != "inv-1" ||
		p.GetTokenAddress() == "" || !strings.EqualFold(p.ToAddress, alice.Hex()) {
		t.Fatalf("the first payout: %v", p)
	}

	list, err = payments.ListPayoutBatches(ctx, authed(&v1.ListPayoutBatchesRequest{ProjectId: keys.id,
		Query: &v1.ListQuery{Status: "awaiting_approval"}}, keys.key))
	if err != nil || len(list.Msg.PayoutBatches) != 1 || list.Msg.Pagination.Total != 1 {
		t.Fatalf("the batches awaiting approval: %v %v", list, err)
	}
	if b := list.Msg.PayoutBatches[0]; b.Id != batch.Id || b.PayoutCount != 2 || b.Report != nil || len(b.Payouts) != 0 {
		t.Fatalf("a listed batch (no report, no payouts): %v", b)
	}
	_, err = payments.ListPayoutBatches(ctx, authed(&v1.ListPayoutBatchesRequest{ProjectId: keys.id, Query: &v1.ListQuery{Status: "paid"}}, keys.key))
	if got := violations(t, err); !slices.Equal(got, []string{"status"}) {
		t.Fatalf("an unknown status: %v", got)
	}

	read, err := payments.GetPayoutBatch(ctx, authed(&v1.GetPayoutBatchRequest{ProjectId: keys.id, BatchId: batch.Id}, keys.key))
	if err != nil {
		t.Fatal(err)
	}
	viaREST := get(t, ts.URL, proj+"/payout-batches/"+batch.Id, keys.key)
	mustStatus(t, viaREST, http.StatusOK)
	d, b := viaREST.data(), read.Msg.PayoutBatch
	first := payoutsOf(d)[0]
	if d["id"] != b.Id || d["status"] != b.Status || d["createdAt"] != b.CreatedAt || d["createdBy"] != b.CreatedBy ||
		d["fromAddress"] != b.FromAddress || len(b.Payouts) != 2 || first["id"] != b.Payouts[0].Id || first["toAddress"] != b.Payouts[0].ToAddress ||
		d["report"].(map[string]any)["totals"].([]any)[0].(map[string]any)["toSign"] != b.Report.Totals[0].ToSign {
		t.Fatalf("REST %s\nConnect %v", viaREST.Raw, b)
	}
	payout, err := payments.GetPayout(ctx, authed(&v1.GetPayoutRequest{ProjectId: keys.id, PayoutId: b.Payouts[1].Id}, keys.key))
	if p := payout.Msg.GetPayout(); err != nil || p.Id != b.Payouts[1].Id || p.Symbol != "ETH" || p.Amount != "0.01" || p.TokenAddress != nil || p.Line != 2 {
		t.Fatalf("the second payout: %v %v", payout, err)
	}
	hash := "0x" + strings.Repeat("ab", 32)
	_, err = payments.ReportPayoutTransaction(ctx, authed(&v1.ReportPayoutTransactionRequest{ProjectId: keys.id, PayoutId: b.Payouts[0].Id, TxHash: hash}, keys.key))
	if connect.CodeOf(err) != connect.CodeAlreadyExists || !strings.Contains(err.Error(), "not approved") {
		t.Fatalf("a transaction reported before approval: %v", err)
	}

	// Another project's key finds none of it, nor creates in the project.
	_, other := ownedProject(t, ts.URL, "Another payouts shop")
	for name, call := range map[string]func() error{
		"CreatePayoutBatch": func() error {
			_, err := payments.CreatePayoutBatch(ctx, authed(&v1.CreatePayoutBatchRequest{ProjectId: keys.id, FromAddress: &from,
				Payouts: []*v1.PayoutInput{{Address: ptr(alice.Hex()), Asset: ptr("usdc-devnet"), Amount: ptr("1")}}}, other.key))
			return err
		},
		"ListPayoutBatches": func() error {
			_, err := payments.ListPayoutBatches(ctx, authed(&v1.ListPayoutBatchesRequest{ProjectId: keys.id}, other.key))
			return err
		},
		"GetPayoutBatch": func() error {
			_, err := payments.GetPayoutBatch(ctx, authed(&v1.GetPayoutBatchRequest{ProjectId: keys.id, BatchId: batch.Id}, other.key))
			return err
		},
		"GetPayoutBatch in its own project": func() error {
			_, err := payments.GetPayoutBatch(ctx, authed(&v1.GetPayoutBatchRequest{ProjectId: other.id, BatchId: batch.Id}, other.key))
			return err
		},
		"CancelPayoutBatch": func() error {
			_, err := payments.CancelPayoutBatch(ctx, authed(&v1.CancelPayoutBatchRequest{ProjectId: keys.id, BatchId: batch.Id}, other.key))
			return err
		},
		"GetPayout": func() error {
			_, err := payments.GetPayout(ctx, authed(&v1.GetPayoutRequest{ProjectId: keys.id, PayoutId: b.Payouts[0].Id}, other.key))
			return err
		},
		"ReportPayoutTransaction": func() error {
			_, err := payments.ReportPayoutTransaction(ctx, authed(&v1.ReportPayoutTransactionRequest{ProjectId: keys.id,
				PayoutId: b.Payouts[0].Id, TxHash: hash}, other.key))
			return err
		},
	} {
		if err := call(); connect.CodeOf(err) != connect.CodeNotFound {
			t.Errorf("%s with another project's key: %v; want not found", name, err)
		}
	}
	if still, err := payments.GetPayoutBatch(ctx, authed(&v1.GetPayoutBatchRequest{ProjectId: keys.id, BatchId: batch.Id}, keys.key)); err != nil ||
		still.Msg.PayoutBatch.Status != "awaiting_approval" || still.Msg.PayoutBatch.Payouts[0].TxHash != nil {
		t.Fatalf("the batch after another project's calls: %v %v", still, err)
	}
	if n := len(get(t, ts.URL, proj+"/payout-batches", keys.key).list()); n != 1 {
		t.Fatalf("the project has %d batches after another project's create; want 1", n)
	}

	// Canceled: the batch and every payout.
	canceled, err := payments.CancelPayoutBatch(ctx, authed(&v1.CancelPayoutBatchRequest{ProjectId: keys.id, BatchId: batch.Id}, keys.key))
	if err != nil {
		t.Fatal(err)
	}
	if c := canceled.Msg.PayoutBatch; c.Status != "canceled" || c.Report.GetStatuses()["canceled"] != 2 || c.Report.Totals[0].NotPaid != "12.5" ||
		c.Payouts[0].Status != "canceled" || c.Payouts[1].Status != "canceled" {
		t.Fatalf("the canceled batch: %v", c)
	}
	payout, err = payments.GetPayout(ctx, authed(&v1.GetPayoutRequest{ProjectId: keys.id, PayoutId: b.Payouts[0].Id}, keys.key))
	if err != nil || payout.Msg.Payout.Status != "canceled" {
		t.Fatalf("a payout of the canceled batch: %v %v", payout, err)
	}
	_, err = payments.CancelPayoutBatch(ctx, authed(&v1.CancelPayoutBatchRequest{ProjectId: keys.id, BatchId: batch.Id}, keys.key))
	if connect.CodeOf(err) != connect.CodeAlreadyExists {
		t.Fatalf("a second cancel: %v", err)
	}

	// Another batch, approved by the owner through REST, paid from the
	// treasury and its hash reported through Connect.
	created, err = payments.CreatePayoutBatch(ctx, authed(&v1.CreatePayoutBatchRequest{ProjectId: keys.id, FromAddress: &from,
		Payouts: []*v1.PayoutInput{{Address: ptr(alice.Hex()), Asset: ptr("usdc-devnet"), Amount: ptr("2")}}}, keys.key))
	if err != nil {
		t.Fatal(err)
	}
	paid := created.Msg.PayoutBatch
	mustStatus(t, owner.call(t, ts.URL, http.MethodPost, proj+"/payout-batches/"+paid.Id+"/approve", nil), http.StatusOK)
	payout, err = payments.GetPayout(ctx, authed(&v1.GetPayoutRequest{ProjectId: keys.id, PayoutId: paid.Payouts[0].Id}, keys.key))
	if p := payout.Msg.GetPayout(); err != nil || p.Status != "awaiting_signature" || p.Transfer == nil || p.Transfer.ChainId != 1337 ||
		!strings.EqualFold(p.Transfer.From, from) || !strings.HasPrefix(p.Transfer.Data, "0xa9059cbb") {
		t.Fatalf("the approved payout: %v %v", payout, err)
	}
	_, err = payments.ReportPayoutTransaction(ctx, authed(&v1.ReportPayoutTransactionRequest{ProjectId: keys.id, PayoutId: paid.Payouts[0].Id, TxHash: "0x12"}, keys.key))
	if got := violations(t, err); !slices.Equal(got, []string{"txHash"}) {
		t.Fatalf("a malformed hash: %v", got)
	}
	sent, err := chain.TransferToken(ctx, treasury, alice, units("2000000"))
	if err != nil {
		t.Fatal(err)
	}
	reported, err := payments.ReportPayoutTransaction(ctx, authed(&v1.ReportPayoutTransactionRequest{ProjectId: keys.id,
		PayoutId: paid.Payouts[0].Id, TxHash: sent.Hex()}, keys.key))
	if err != nil || !strings.EqualFold(reported.Msg.Payout.GetTxHash(), sent.Hex()) {
		t.Fatalf("the reported payout: %v %v", reported, err)
	}
	testwait.Until(t, 60*time.Second, func() (bool, string) {
		p, err := payments.GetPayout(ctx, authed(&v1.GetPayoutRequest{ProjectId: keys.id, PayoutId: paid.Payouts[0].Id}, keys.key))
		return err == nil && p.Msg.Payout.Status == "finalized", fmt.Sprintf("the payout never became finalized: %v %v", p, err)
	})
	done, err := payments.GetPayoutBatch(ctx, authed(&v1.GetPayoutBatchRequest{ProjectId: keys.id, BatchId: paid.Id}, keys.key))
	if b := done.Msg.GetPayoutBatch(); err != nil || b.GetApprovedBy() == "" || b.ApprovedAt == nil || b.Report.Totals[0].Paid != "2" {
		t.Fatalf("the paid batch: %v %v", done, err)
	}
	testwait.Until(t, 30*time.Second, func() (bool, string) {
		b, err := payments.GetPayoutBatch(ctx, authed(&v1.GetPayoutBatchRequest{ProjectId: keys.id, BatchId: paid.Id}, keys.key))
		return err == nil && b.Msg.PayoutBatch.Status == "completed", fmt.Sprintf("the batch never became completed: %v %v", b, err)
	})
}
