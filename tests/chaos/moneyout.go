package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/dev/devchain"
)

// How a refund's or payout's transaction is sent (the money-out faults
// choose): reported, paid and never reported (the scan must find it),
// held and replaced at its nonce by a wallet's speed-up, or held until
// the engine calls it stale and then canceled or replaced.
type outMode int

const (
	outReported outMode = iota
	outUnreported
	outSpeedUp
	outStale
)

// moneyOutStats count what the money-out faults did.
type moneyOutStats struct {
	// Second project: made-up hashes reported, and those the API took
	// (200; the item then waits for a transaction never mined).
	MadeUp, MadeUpTaken atomic.Int64
	// Unreported: items paid on chain and never reported.
	Unreported atomic.Int64
	// SpedUp: held transactions replaced at their nonce (ScanFound of
	// them, and of the stale ones replaced, left to the scan).
	SpedUp, ScanFound atomic.Int64
	// Stale: held transactions the engine called stale; then Canceled
	// (refunds) or Replaced; NotStale those the run could not wait for.
	Stale, Canceled, Replaced, NotStale atomic.Int64
}

// outMode draws how the next item is sent: the chosen money-out faults
// take the run's items in turn, so each happens even at small N.
func (r *run) outMode() outMode {
	n := r.outSeq.Add(1)
	switch {
	case r.o.has(FaultStuckTx) && n%4 == 1:
		return outSpeedUp
	case r.o.has(FaultStuckTx) && n%4 == 3:
		return outStale
	case r.o.has(FaultUnreported) && n%4 == 2:
		return outUnreported
	}
	return outReported
}

// outCall is the call that pays amount of token (zero: the native coin)
// to to.
func outCall(to, token common.Address, amount *big.Int) (callTo common.Address, value *big.Int, data []byte) {
	if token != (common.Address{}) {
		return token, nil, usdcABI.PackTransfer(to, amount)
	}
	return to, amount, nil
}

// sendOut pays one refund or payout (table "refunds" or "payouts", its ID
// and its report URL) from acc, which the caller holds, as mode says, and
// returns the transaction that pays it (zero when it was canceled).
func (r *run) sendOut(ctx context.Context, g *rand.Rand, mode outMode, acc devchain.Account, table, id, reportURL string,
	to, token common.Address, amount *big.Int) (common.Hash, error) {
	callTo, value, data := outCall(to, token, amount)
	if mode == outReported || mode == outUnreported {
		r.chainMu.RLock()
		h, err := r.s.chain.Transact(ctx, acc, callTo, value, data)
		r.chainMu.RUnlock()
		if err != nil {
			return h, fmt.Errorf("%s %s: %w", table, id, err)
		}
		if mode == outUnreported {
			r.outStats.Unreported.Add(1)
			return h, nil
		}
		return h, r.reportOut(ctx, reportURL, id, h)
	}
	// Stuck: signed and reported, but held (as a node holds, or drops, a
	// transaction whose fee is too low): it is never mined.
	r.chainMu.RLock()
	held, err := r.s.chain.SignTransact(ctx, acc, callTo, value, data)
	r.chainMu.RUnlock()
	if err != nil {
		return common.Hash{}, fmt.Errorf("%s %s: %w", table, id, err)
	}
	if err := r.reportOut(ctx, reportURL, id, held.Hash()); err != nil {
		// Its nonce must still be used: the account's later transactions
		// wait for it.
		_, _ = r.replace(context.WithoutCancel(ctx), acc, held, callTo, value, data)
		return common.Hash{}, err
	}
	// Whatever happens next, the held nonce is used before acc is
	// released: after the run's end too.
	finish := context.WithoutCancel(ctx)
	if mode == outStale {
		if r.waitStatus(ctx, table, id, "stale", 4*time.Minute) {
			r.outStats.Stale.Add(1)
			if table == "refunds" && g.IntN(2) == 0 {
				// Given up on: canceled, its nonce spent by a transfer to
				// itself (a wallet's cancellation).
				res, err := r.s.api.post(finish, r.s.longAPI+"/api/v1/projects/"+r.s.projectID+"/refunds/"+id+"/cancel", r.s.key, map[string]any{})
				if err == nil && res.Status == http.StatusOK {
					r.outStats.Canceled.Add(1)
					_, err := r.replace(finish, acc, held, acc.Address, new(big.Int), nil)
					return common.Hash{}, err
				}
				r.problem("api", "", "refund %s: canceling it while stale: %v %d %s", id, err, res.Status, res.Raw)
			}
			r.outStats.Replaced.Add(1)
		} else {
			r.outStats.NotStale.Add(1)
		}
	} else {
		_ = sleep(ctx, time.Duration(2+g.IntN(6))*time.Second)
		r.outStats.SpedUp.Add(1)
	}
	// The wallet's speed-up: the same call at the same nonce, at a higher
	// fee; reported, or left for the scan to find from the item's source.
	h, err := r.replace(finish, acc, held, callTo, value, data)
	if err != nil {
		return common.Hash{}, fmt.Errorf("%s %s: replacement: %w", table, id, err)
	}
	if g.IntN(2) == 0 {
		r.outStats.ScanFound.Add(1)
		return h, nil
	}
	return h, r.reportOut(finish, reportURL, id, h)
}

// replace sends a transaction at held's nonce calling callTo, at twice its
// fees.
func (r *run) replace(ctx context.Context, acc devchain.Account, held *types.Transaction, callTo common.Address, value *big.Int,
	data []byte) (common.Hash, error) {
	if value == nil {
		value = new(big.Int)
	}
	gas := held.Gas()
	if callTo == acc.Address {
		gas = 21_000
	}
	tx, err := types.SignNewTx(acc.Key, types.LatestSignerForChainID(r.s.chain.ChainID), &types.DynamicFeeTx{
		ChainID: r.s.chain.ChainID, Nonce: held.Nonce(), Gas: gas, To: &callTo, Value: value, Data: data,
		GasTipCap: new(big.Int).Mul(held.GasTipCap(), big.NewInt(2)), GasFeeCap: new(big.Int).Mul(held.GasFeeCap(), big.NewInt(2)),
	})
	if err != nil {
		return common.Hash{}, err
	}
	r.chainMu.RLock()
	defer r.chainMu.RUnlock()
	return tx.Hash(), r.s.chain.SendSigned(ctx, tx)
}

// reportOut reports h as the transaction of the refund or payout at url.
func (r *run) reportOut(ctx context.Context, url, id string, h common.Hash) error {
	for tries := 0; ; tries++ {
		res, err := r.s.api.post(ctx, url, r.s.key, map[string]any{"txHash": h.Hex()})
		if err == nil && res.Status == http.StatusOK {
			return nil
		}
		if tries == 20 {
			r.problem("api", "", "%s: its transaction %s not taken: %v %d %s", id, h.Hex(), err, res.Status, res.Raw)
			return errReported
		}
		if err := sleep(ctx, time.Second); err != nil {
			return err
		}
	}
}

// waitStatus waits until the item's row has status, at most limit.
func (r *run) waitStatus(ctx context.Context, table, id, status string, limit time.Duration) bool {
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); {
		var got string
		if r.s.db.QueryRow(ctx, `SELECT status FROM `+table+` WHERE id = $1`, id).Scan(&got) == nil && got == status {
			return true
		}
		if sleep(ctx, time.Second) != nil {
			return false
		}
	}
	return false
}

// secondProject is another tenant of the engine: its own API key, its
// own proven treasury, its own plan. It reports made-up hashes.
type secondProject struct {
	projectID, key, planID string
	treasury               devchain.Account
}

// madeUp makes one of the second project's items and reports a random,
// never mined, hash against it: a payout (two in three), or a refund of
// a session it had paid (from its treasury) once that payment is final.
func (r *run) madeUp(ctx context.Context, g *rand.Rand) {
	p := r.s.second
	proj := r.s.longAPI + "/api/v1/projects/" + p.projectID
	made := func(what, url string) {
		var h common.Hash
		for i := range h {
			h[i] = byte(g.IntN(256))
		}
		res, err := r.s.api.post(ctx, url, p.key, map[string]any{"txHash": h.Hex()})
		r.outStats.MadeUp.Add(1)
		if err == nil && res.Status == http.StatusOK {
			r.outStats.MadeUpTaken.Add(1)
		}
		r.logf("second project: made-up hash %s reported for %s: %d", h.Hex(), what, res.Status)
	}
	fresh := func() common.Address {
		var a common.Address
		for i := range a {
			a[i] = byte(g.IntN(256))
		}
		return a
	}
	if g.IntN(3) > 0 {
		n := 1 + g.IntN(2)
		lines := make([]any, n)
		for i := range lines {
			lines[i] = map[string]any{"address": fresh().Hex(), "asset": assetUSDC, "amount": fmt.Sprintf("0.%03d", 1+g.IntN(999)),
				"reference": fmt.Sprintf("second-%d", i)}
		}
		res, err := r.s.api.post(ctx, proj+"/payout-batches", p.key, map[string]any{"fromAddress": p.treasury.Address.Hex(), "payouts": lines})
		if err != nil || res.Status != http.StatusCreated {
			r.problem("api", "", "second project: payout batch refused: %v %d %s", err, res.Status, res.Raw)
			return
		}
		var batch struct {
			ID      string
			Payouts []struct{ ID string }
		}
		if err := json.Unmarshal(res.Data, &batch); err != nil {
			r.problem("harness", "", "second project: payout batch: %v", err)
			return
		}
		if _, err := r.asOwner(ctx, "second project's batch approval", proj+"/payout-batches/"+batch.ID+"/approve", map[string]any{}); err != nil {
			return
		}
		for _, po := range batch.Payouts {
			made("payout "+po.ID, proj+"/payouts/"+po.ID+"/transaction")
		}
		return
	}
	// A refund: a session of its own, paid in full from its treasury.
	cents := 100 + g.IntN(9_900)
	s, err := r.s.api.openSession(ctx, r.s.longAPI, p.planID, fmt.Sprintf("%d.%02d", cents/100, cents%100))
	if err != nil {
		r.problem("api", "", "second project: %v", err)
		return
	}
	due := s.Options[assetUSDC].Due
	r.secondMu.Lock()
	r.chainMu.RLock()
	_, err = r.s.chain.Transact(ctx, p.treasury, r.s.chain.Token, nil, usdcABI.PackTransfer(s.Address, due))
	r.chainMu.RUnlock()
	r.secondMu.Unlock()
	if err != nil {
		r.problem("harness", "", "second project: paying its session: %v", err)
		return
	}
	body := map[string]any{"checkoutSessionId": s.ID, "amount": decimal.NewFromBigInt(due, -devchain.USDCDecimals).String(),
		"address": fresh().Hex(), "reason": "made-up hash"}
	for {
		res, err := r.s.api.post(ctx, proj+"/refunds", p.key, body)
		if err == nil && res.Status == http.StatusCreated {
			var v struct{ ID string }
			_ = json.Unmarshal(res.Data, &v)
			made("refund "+v.ID, proj+"/refunds/"+v.ID+"/transaction")
			return
		}
		if err == nil && res.Status < 500 && !strings.Contains(string(res.Raw), "nothing final") {
			r.problem("api", "", "second project: refund refused: %d %s", res.Status, res.Raw)
			return
		}
		if sleep(ctx, 2*time.Second) != nil {
			return // the run ended before its payment was final: nothing to refund
		}
	}
}
