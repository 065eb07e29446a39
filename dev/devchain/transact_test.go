package devchain

import (
	"errors"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/paymentsd/paymentsd/dev/contracts/bindings"
)

// A batch payment through the dev multisend: a transaction signed (its hash
// known) before any node has seen it, then sent; several token transfers
// and internal native payments in one transaction each.
func TestSignedBatchPayments(t *testing.T) {
	t.Parallel()
	c, ctx := startChain(t, Config{Accounts: 1})
	payer := c.Accounts[0]
	ms := bindings.NewDevMultisend()
	usdcABI := bindings.NewDevUSDC()

	addr, h, err := c.Deploy(ctx, payer, common.FromHex(bindings.DevMultisendMetaData.Bin))
	if err != nil {
		t.Fatal(err)
	}
	mustReceipt(t, ctx, c, h)
	h, err = c.Transact(ctx, payer, c.Token, nil, usdcABI.PackApprove(addr, usdc(100)))
	if err != nil {
		t.Fatal(err)
	}
	mustReceipt(t, ctx, c, h)

	a, b := freshAddress(t), freshAddress(t)
	tx, err := c.SignTransact(ctx, payer, addr, nil, ms.PackSendToken(c.Token, []common.Address{a, a, b},
		[]*big.Int{usdc(1), usdc(2), usdc(3)}))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Client().TransactionByHash(ctx, tx.Hash()); !errors.Is(err, ethereum.NotFound) {
		t.Fatalf("a signed transaction is known before it is sent: %v", err)
	}
	if err := c.SendSigned(ctx, tx); err != nil {
		t.Fatal(err)
	}
	r := mustReceipt(t, ctx, c, tx.Hash())
	if len(r.Logs) != 3 {
		t.Fatalf("%d logs, want a Transfer for each payment", len(r.Logs))
	}
	if bal, err := c.TokenBalance(ctx, a); err != nil || bal.Cmp(usdc(3)) != 0 {
		t.Fatalf("a holds %v (%v), want 3 USDC", bal, err)
	}

	wei := big.NewInt(1e15)
	h, err = c.Transact(ctx, payer, addr, new(big.Int).Mul(wei, big.NewInt(3)),
		ms.PackSendNative([]common.Address{a, b, a}, []*big.Int{wei, wei, wei}))
	if err != nil {
		t.Fatal(err)
	}
	r = mustReceipt(t, ctx, c, h)
	var sent int
	for _, l := range r.Logs {
		if _, err := ms.UnpackNativeSentEvent(l); err == nil {
			sent++
		}
	}
	if bal, err := c.Client().BalanceAt(ctx, a, nil); err != nil || bal.Cmp(new(big.Int).Mul(wei, big.NewInt(2))) != 0 || sent != 3 {
		t.Fatalf("a holds %v wei (%v), %d NativeSent logs", bal, err, sent)
	}

	// A batch whose value is not its total reverts, and is refused at
	// estimation.
	if _, err := c.Transact(ctx, payer, addr, wei, ms.PackSendNative([]common.Address{a}, []*big.Int{big.NewInt(1)})); err == nil {
		t.Fatal("a batch with the wrong value was sent")
	}
	if r.Status != types.ReceiptStatusSuccessful {
		t.Fatal("the batch reverted")
	}
}
