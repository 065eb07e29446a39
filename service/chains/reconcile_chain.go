package chains

import (
	"context"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/internal/keys"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/workflows"
)

// finalizedBlocksGone checks the blocks of the finalized payments within
// each network's reorg window against the chain, as the finality watch
// does, and with Repair hands the payments of a block gone to their
// workflows.
func (svc Service) finalizedBlocksGone(ctx context.Context, o ReconcileOptions, down map[string]error) ([]Finding, error) {
	var out []Finding
	for _, network := range slices.Sorted(maps.Keys(svc.Chains)) {
		if down[network] != nil {
			continue
		}
		ch := svc.Chains[network]
		n, f := ch.Network, ch.Family()
		head, err := f.Head(ctx)
		if err != nil {
			return out, fmt.Errorf("%s: head: %w", network, err)
		}
		from := n.ReorgWindowFrom(head)
		blocks, err := svc.Store.Chains().FinalizedBlocks(ctx, network, int64(from), o.ProjectID)
		if err != nil {
			return out, err
		}
		heights := make([]uint64, 0, len(blocks))
		for _, b := range blocks {
			heights = append(heights, uint64(b.Number))
		}
		canonical, err := f.BlockHashes(ctx, slices.Compact(heights))
		if err != nil {
			return out, fmt.Errorf("%s: block hashes: %w", network, err)
		}
		for _, b := range blocks {
			if payment.SameBlock(canonical[uint64(b.Number)], b.Hash) {
				continue
			}
			txs, items, err := svc.Store.Chains().FinalizedInBlock(ctx, network, b, o.ProjectID)
			if err != nil {
				return out, err
			}
			detail := fmt.Sprintf("finalized in block %d (%s) of %s, no longer the chain's (%s there now)", b.Number, b.Hash, network,
				canonical[uint64(b.Number)])
			for _, t := range txs {
				fd := Finding{Kind: FindingFinalizedBlockGone, ObjectID: t.ID, Detail: t.TxHash + " " + detail}
				if o.Repair {
					fd.Repaired, fd.Error = repaired(workflows.StartPastFinality(ctx, svc.Temporal, t, svc.Now()))
				}
				out = append(out, fd)
			}
			for _, it := range items {
				fd := Finding{Kind: FindingFinalizedBlockGone, ObjectID: it.ID, Detail: detail}
				if o.Repair {
					fd.Repaired, fd.Error = repaired(workflows.StartOutgoingRecheck(ctx, svc.Temporal, it.ID, it.ProjectID, it.IsLive, network))
				}
				out = append(out, fd)
			}
		}
	}
	return out, nil
}

// reversedUnsettled finds what a reorg past finality reversed and no one
// has settled: nothing to repair, the merchant decides.
func (svc Service) reversedUnsettled(ctx context.Context, o ReconcileOptions) ([]Finding, error) {
	txs, items, err := svc.Store.Chains().ReversedUnsettled(ctx, o.ProjectID)
	if err != nil {
		return nil, fmt.Errorf("load reversed payments: %w", err)
	}
	var out []Finding
	for _, t := range txs {
		out = append(out, Finding{Kind: FindingPaymentReversed, ObjectID: t.ID,
			Detail: fmt.Sprintf("%s on %s was finalized, then reversed past finality; its session %s is flagged payment_reversed",
				t.TxHash, t.Network, t.CheckoutSessionID),
			Error: "the merchant settles it with the customer, then resolves the session (reversal_settled)"})
	}
	for _, it := range items {
		out = append(out, Finding{Kind: FindingPaymentReversed, ObjectID: it.ID,
			Detail: "finalized, then reversed past finality: the recipient was not paid",
			Error:  "the merchant cancels it and sends again, unless its transaction is mined again"})
	}
	return out, nil
}

// depositCountersBehind finds deposit keys whose counter is at or below an
// index already used, by a recorded session or on chain (the networks
// down left out), and with Repair moves the counter past it.
func (svc Service) depositCountersBehind(ctx context.Context, o ReconcileOptions, down map[string]error) ([]Finding, error) {
	counters, err := svc.Store.Chains().DepositCounters(ctx, o.ProjectID)
	if err != nil {
		return nil, fmt.Errorf("load deposit counters: %w", err)
	}
	var out []Finding
	for _, c := range counters {
		var why []string
		used := c.MaxUsed
		if used >= c.NextIndex {
			why = append(why, fmt.Sprintf("a recorded session holds index %d", used))
		}
		onChain, err := svc.usedOnChain(ctx, c, max(c.NextIndex, used+1), down)
		if err != nil {
			return out, err
		}
		if onChain > used {
			why = append(why, fmt.Sprintf("the address at index %d is used on chain", onChain))
			used = onChain
		}
		if used < c.NextIndex {
			continue
		}
		env := "sandbox"
		if c.IsLive {
			env = "live"
		}
		f := Finding{Kind: FindingDepositIndexBehind, ObjectID: c.ProjectID,
			Detail: fmt.Sprintf("the %s deposit key's next index is %d, but %s", env, c.NextIndex, strings.Join(why, " and "))}
		if o.Repair {
			if err := svc.Store.Chains().AdvanceDepositIndex(ctx, c.ProjectID, c.IsLive, used+1); err != nil {
				f.Error = err.Error()
			} else {
				f.Repaired = true
				f.Detail += fmt.Sprintf("; moved to %d", used+1)
			}
		}
		out = append(out, f)
	}
	return out, nil
}

// networkAnswerWait bounds how long the reconciliation waits for a
// network's nodes before it finds the network unreachable.
const networkAnswerWait = 15 * time.Second

// networksDown asks every configured network the chain checks read (a
// deposit key's addresses, refunds and payouts: chainwatch.Capabilities
// DepositKey, MoneyOut) for its head: those whose nodes cannot be read
// are found (network-unreachable) and returned with why, for the chain
// checks to leave them out.
func (svc Service) networksDown(ctx context.Context) (map[string]error, []Finding) {
	down := map[string]error{}
	var out []Finding
	for _, network := range slices.Sorted(maps.Keys(svc.Chains)) {
		ch := svc.Chains[network]
		if caps := ch.Family().Capabilities(); !caps.DepositKey && !caps.MoneyOut {
			continue // no chain check reads it
		}
		wait, cancel := context.WithTimeout(ctx, networkAnswerWait)
		_, err := ch.Family().Head(wait)
		cancel()
		if err == nil {
			continue
		}
		down[network] = err
		out = append(out, Finding{Kind: FindingNetworkUnreachable, ObjectID: network,
			Detail: fmt.Sprintf("configured, but its nodes cannot be read (%v): its deposit addresses, refunds and payouts are not checked", err),
			Error:  "not checked"})
	}
	return down, out
}

// usedOnChain reads the addresses of c's key from index from on, on every
// network of c's environment but those down, until depositLookahead in a
// row are unused, and returns the highest index used (-1: none). An
// address is used when it has sent a transaction or holds any of the
// network's assets.
func (svc Service) usedOnChain(ctx context.Context, c store.DepositCounter, from int64, down map[string]error) (int64, error) {
	key, err := keys.ParseKey(c.Xpub)
	if err != nil {
		return -1, err
	}
	highest := int64(-1)
	for i, gap := from, 0; gap < depositLookahead && i < 1<<31; i, gap = i+1, gap+1 {
		addr, err := key.DeriveAddress(uint32(i))
		if err != nil {
			return -1, err
		}
		for _, network := range slices.Sorted(maps.Keys(svc.Chains)) {
			ch := svc.Chains[network]
			if ch.Network.IsLive != c.IsLive || !ch.Family().Capabilities().DepositKey || down[network] != nil {
				continue
			}
			used, err := addressUsed(ctx, ch, addr)
			if err != nil {
				return -1, fmt.Errorf("read %s on %s: %w", addr, network, err)
			}
			if used {
				highest, gap = i, -1
				break
			}
		}
	}
	return highest, nil
}

// addressUsed says whether addr has sent a transaction on ch or holds any
// of its assets.
func addressUsed(ctx context.Context, ch *chainwatch.Chain, addr common.Address) (bool, error) {
	var nonce, balance hexutil.Big
	if err := ch.Client.Call(ctx, &nonce, "eth_getTransactionCount", addr, "latest"); err != nil {
		return false, err
	}
	if err := ch.Client.Call(ctx, &balance, "eth_getBalance", addr, "latest"); err != nil {
		return false, err
	}
	if nonce.ToInt().Sign() > 0 || balance.ToInt().Sign() > 0 {
		return true, nil
	}
	for _, a := range ch.Assets {
		if a.Native() {
			continue
		}
		token := common.HexToAddress(a.TokenAddress)
		// balanceOf(addr)
		data := append(common.FromHex("0x70a08231"), common.LeftPadBytes(addr[:], 32)...)
		out, err := ch.Client.CallContract(ctx, ethereum.CallMsg{To: &token, Data: data}, nil)
		if err != nil {
			return false, err
		}
		if new(big.Int).SetBytes(out).Sign() > 0 {
			return true, nil
		}
	}
	return false, nil
}
