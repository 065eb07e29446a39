package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/api"
	"github.com/paymentsd/paymentsd/dev/devchain"
)

// sentRefund is a refund the run made, and the transfer that pays it.
type sentRefund struct {
	ID        string
	SessionID string
	To        common.Address
	Token     common.Address // zero for the native coin
	Amount    *big.Int
	Hash      common.Hash
}

// refund refunds part or all of what s received (once the payment is
// final, which the API says by refusing before) to a fresh address, pays
// it from a payer account (the merchant's treasury, proven) and reports
// the hash.
func (r *run) refund(ctx context.Context, sc *scenario, s *session, g *rand.Rand, paid *big.Int, payment common.Hash) error {
	amount := paid
	if g.IntN(2) == 0 {
		amount = part(g, paid, 10, 90)
	}
	var to common.Address
	for i := range to {
		to[i] = byte(g.IntN(256))
	}
	token, decimals := s.Options[sc.Asset].Token, int32(18)
	if sc.Asset == assetUSDC {
		decimals = devchain.USDCDecimals
	}
	body := map[string]any{"checkoutSessionId": s.ID, "amount": decimal.NewFromBigInt(amount, -decimals).String(), "address": to.Hex(), "reason": "chaos"}
	// The payment must be final first: the API refuses until then. The
	// wait is the run's (its play context): after a node outage or a
	// worker kill the engine takes its time to catch up.
	paidAt := time.Now()
	var id, last string
	var recorded time.Duration
	for id == "" {
		res, err := r.s.api.post(ctx, r.s.longAPI+"/api/v1/projects/"+r.s.projectID+"/refunds", r.s.key, body)
		last = fmt.Sprintf("%d %s %v", res.Status, res.Raw, err)
		switch {
		case err == nil && res.Status == http.StatusCreated:
			var v struct{ ID string }
			_ = json.Unmarshal(res.Data, &v)
			id = v.ID
			continue
		case err == nil && res.Status == http.StatusUnprocessableEntity && strings.Contains(string(res.Raw), "nothing final"):
			// The payment is not final yet.
		case err == nil && res.Status < 500:
			r.problem("api", s.ID, "refund refused: %d %s", res.Status, res.Raw)
			return errReported
		}
		if recorded == 0 {
			var n int
			if r.s.db.QueryRow(ctx, `SELECT count(*) FROM transactions WHERE checkout_session_id = $1`, s.ID).Scan(&n) == nil && n > 0 {
				recorded = time.Since(paidAt)
			}
		}
		if err := sleep(ctx, 2*time.Second); err != nil {
			check, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_, gone := r.s.chain.Client().TransactionReceipt(check, payment)
			cancel()
			if gone != nil {
				return nil // a reorg dropped the payment for good: nothing came in to refund
			}
			r.problem("api", s.ID, "no refund could be made before the run's end (%s after the payment; recorded after %s); the last answer: %s",
				time.Since(paidAt).Round(time.Second), recorded.Round(time.Second), last)
			return errReported
		}
	}
	r.mu.Lock()
	r.refundWaits = append(r.refundWaits, [2]time.Duration{recorded, time.Since(paidAt)})
	r.mu.Unlock()
	// A refund to the merchant's address waits for an owner's approval of
	// the address shown.
	if _, err := r.asOwner(ctx, "refund approval", r.s.longAPI+"/api/v1/projects/"+r.s.projectID+"/refunds/"+id+"/approve",
		map[string]any{"address": to.Hex()}); err != nil {
		return err
	}
	acc, release, err := r.payer(ctx)
	if err != nil {
		return err
	}
	defer release()
	// The refund is paid from a treasury, which the project proves it
	// controls: a transaction from any other address is not taken.
	if err := r.prove(ctx, r.s.projectID, acc); err != nil {
		return err
	}
	h, err := r.sendOut(ctx, g, r.outMode(), acc, "refunds", id,
		r.s.longAPI+"/api/v1/projects/"+r.s.projectID+"/refunds/"+id+"/transaction", to, token, amount)
	if h != (common.Hash{}) || err == nil {
		r.mu.Lock()
		r.refunds = append(r.refunds, sentRefund{ID: id, SessionID: s.ID, To: to, Token: token, Amount: amount, Hash: h})
		r.mu.Unlock()
	}
	return err
}

// sentPayout is a payout the run made, and the transfer that pays it.
type sentPayout struct {
	ID, BatchID string
	To          common.Address
	Token       common.Address // zero for the native coin
	Amount      *big.Int
	Hash        common.Hash
}

// payout uploads a batch of 1 to 3 payouts of the scenario's asset to
// fresh addresses from a payer account (the merchant's treasury), has the
// owner approve it, pays each from the treasury and reports its hash, or
// (one in three) leaves it for the scanner to see.
func (r *run) payout(ctx context.Context, sc *scenario, g *rand.Rand) error {
	acc, release, err := r.payer(ctx)
	if err != nil {
		return err
	}
	defer release()
	decimals, token := int32(18), common.Address{}
	if sc.Asset == assetUSDC {
		decimals, token = devchain.USDCDecimals, r.s.chain.Token
	}
	n := 1 + g.IntN(3)
	lines := make([]any, n)
	sent := make([]sentPayout, n)
	for i := range sent {
		for j := range sent[i].To {
			sent[i].To[j] = byte(g.IntN(256))
		}
		// Between a thousandth and a tenth of a unit.
		sent[i].Amount = decimal.New(int64(1+g.IntN(100)), -3).Shift(decimals).BigInt()
		sent[i].Token = token
		lines[i] = map[string]any{"address": sent[i].To.Hex(), "asset": sc.Asset,
			"amount": decimal.NewFromBigInt(sent[i].Amount, -decimals).String(), "reference": fmt.Sprintf("chaos-%d", i)}
	}
	if err := r.prove(ctx, r.s.projectID, acc); err != nil {
		return err
	}
	proj := r.s.longAPI + "/api/v1/projects/" + r.s.projectID
	res, err := r.s.api.post(ctx, proj+"/payout-batches", r.s.key, map[string]any{"fromAddress": acc.Address.Hex(), "payouts": lines})
	if err != nil || res.Status != http.StatusCreated {
		r.problem("api", "", "payout batch refused: %v %d %s", err, res.Status, res.Raw)
		return errReported
	}
	var batch struct {
		ID      string
		Payouts []struct{ ID string }
	}
	if err := json.Unmarshal(res.Data, &batch); err != nil || len(batch.Payouts) != n {
		return fmt.Errorf("payout batch: %v: %s", err, res.Raw)
	}
	if err := r.approve(ctx, proj+"/payout-batches/"+batch.ID+"/approve"); err != nil {
		return err
	}
	for i := range sent {
		sent[i].ID, sent[i].BatchID = batch.Payouts[i].ID, batch.ID
		mode := r.outMode()
		if mode == outReported && g.IntN(3) == 0 {
			mode = outUnreported // the scanner sees it come from the treasury
		}
		h, err := r.sendOut(ctx, g, mode, acc, "payouts", sent[i].ID, proj+"/payouts/"+sent[i].ID+"/transaction",
			sent[i].To, sent[i].Token, sent[i].Amount)
		if h != (common.Hash{}) {
			sent[i].Hash = h
			r.mu.Lock()
			r.payouts = append(r.payouts, sent[i])
			r.mu.Unlock()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// approve approves a payout batch as the project's owner.
func (r *run) approve(ctx context.Context, url string) error {
	_, err := r.asOwner(ctx, "payout batch approval", url, map[string]any{})
	return err
}

// prove makes an account a proven address of a project (a verified
// recipient: its key signs the claim's challenge), once per run: a batch
// pays only from one. The first project's are its treasuries.
func (r *run) prove(ctx context.Context, projectID string, acc devchain.Account) error {
	first := projectID == r.s.projectID
	r.mu.Lock()
	done := first && r.proven[acc.Address]
	r.mu.Unlock()
	if done {
		return nil
	}
	proj := r.s.longAPI + "/api/v1/projects/" + projectID
	res, err := r.asOwner(ctx, "treasury claim", proj+"/recipients", map[string]any{"address": acc.Address.Hex()})
	if err != nil {
		return err
	}
	var claim struct{ Challenge *string }
	if err := json.Unmarshal(res.Data, &claim); err != nil {
		return fmt.Errorf("treasury claim: %v: %s", err, res.Raw)
	}
	if claim.Challenge != nil {
		sig, err := crypto.Sign(accounts.TextHash([]byte(*claim.Challenge)), acc.Key)
		if err != nil {
			return err
		}
		sig[64] += 27
		if _, err := r.asOwner(ctx, "treasury proof", proj+"/recipients/"+acc.Address.Hex()+"/verify",
			map[string]any{"signature": hexutil.Encode(sig)}); err != nil {
			return err
		}
	}
	if !first {
		return nil
	}
	r.mu.Lock()
	if r.proven == nil {
		r.proven = map[common.Address]bool{}
	}
	r.proven[acc.Address] = true
	r.mu.Unlock()
	return nil
}

// asOwner posts body to url as the project's owner: signed in once per
// run, and again when the sign-in is too old for a sensitive action.
func (r *run) asOwner(ctx context.Context, what, url string, body any) (apiResponse, error) {
	for tries := 0; tries < 3; tries++ {
		r.mu.Lock()
		cookie := r.ownerCookie
		r.mu.Unlock()
		if cookie == "" {
			login, err := r.s.api.post(ctx, r.s.longAPI+"/api/v1/auth/login", "", map[string]any{"email": r.s.owner, "password": r.s.ownerPassword})
			if err != nil || login.Status != http.StatusOK {
				r.problem("api", "", "the owner's sign-in: %v %d %s", err, login.Status, login.Raw)
				return apiResponse{}, errReported
			}
			for _, c := range (&http.Response{Header: login.Header}).Cookies() {
				if c.Name == api.SessionCookie {
					cookie = api.SessionCookie + "=" + c.Value
				}
			}
			r.mu.Lock()
			r.ownerCookie = cookie
			r.mu.Unlock()
		}
		res, err := r.s.api.postWith(ctx, url, map[string]string{"Cookie": cookie}, body)
		switch {
		case err == nil && (res.Status == http.StatusOK || res.Status == http.StatusCreated):
			return res, nil
		case err == nil && strings.Contains(string(res.Raw), api.ReauthenticationRequired), err == nil && res.Status == http.StatusUnauthorized:
			r.mu.Lock()
			r.ownerCookie = "" // signed in again
			r.mu.Unlock()
		default:
			r.problem("api", "", "%s: %v %d %s", what, err, res.Status, res.Raw)
			return apiResponse{}, errReported
		}
	}
	r.problem("api", "", "%s: the owner's fresh sign-in was refused", what)
	return apiResponse{}, errReported
}
