package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/api"
	"github.com/paymentsd/paymentsd/dev/contracts/bindings"
	"github.com/paymentsd/paymentsd/dev/devchain"
)

// scenario is one randomized payment: a class, a start within the payment
// phase, an asset, and the sessions it opened.
type scenario struct {
	N        int
	Class    string
	Start    time.Duration
	Asset    string
	Sessions []*session
}

// sentTx is a transaction a payer sent, with the sessions it pays.
type sentTx struct {
	Hash     common.Hash
	At       time.Time
	Sessions []*session
}

var (
	usdcABI      = bindings.NewDevUSDC()
	multisendABI = bindings.NewDevMultisend()
)

// plan draws the scenarios: classes in turn from the chosen ones (so every
// class is exercised even at small N), shuffled, each with a random start.
func plan(o Options, rng *rand.Rand) []*scenario {
	out := make([]*scenario, o.N)
	for i := range out {
		class := o.Classes[i%len(o.Classes)]
		asset := assetUSDC
		if rng.IntN(2) == 0 {
			asset = assetETH
		}
		switch class {
		case ClassMulti, ClassSplit:
			asset = assetUSDC // several transfers in one transaction: token logs
		case ClassInternal:
			asset = assetETH // native payments by internal calls
		}
		if slices.Contains(bitcoinClasses, class) {
			asset = assetBTC
		}
		out[i] = &scenario{Class: class, Asset: asset, Start: time.Duration(rng.Int64N(int64(o.PayPhase)))}
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	for i, sc := range out {
		sc.N = i + 1
	}
	return out
}

// play runs one scenario; its errors are the harness's, not the engine's.
func (r *run) play(ctx context.Context, sc *scenario) error {
	if err := sleepUntil(ctx, r.start.Add(sc.Start)); err != nil {
		return err
	}
	g := rand.New(rand.NewPCG(r.o.Seed, uint64(sc.N)))
	o := r.o
	if slices.Contains(bitcoinClasses, sc.Class) {
		return r.playBitcoin(ctx, sc, g)
	}
	long := func() (*session, error) { return r.open(ctx, sc, g, false) }
	short := func() (*session, error) { return r.open(ctx, sc, g, true) }

	switch sc.Class {
	case ClassFull, ClassOver, ClassTopUp, ClassSubmitBefore, ClassSubmitAfter:
		s, err := long()
		if err != nil {
			return err
		}
		due := s.Options[sc.Asset].Due
		switch sc.Class {
		case ClassFull:
			_, err = r.pay(ctx, s, sc.Asset, due)
		case ClassOver:
			_, err = r.pay(ctx, s, sc.Asset, new(big.Int).Add(due, part(g, due, 1, 50)))
		case ClassTopUp:
			first := part(g, due, 20, 80)
			if _, err = r.pay(ctx, s, sc.Asset, first); err != nil {
				return err
			}
			if err := sleep(ctx, time.Duration(2+g.IntN(7))*time.Second); err != nil {
				return err
			}
			_, err = r.pay(ctx, s, sc.Asset, new(big.Int).Sub(due, first))
		case ClassSubmitBefore:
			err = r.payAndSubmit(ctx, s, s, sc.Asset, due, true)
		case ClassSubmitAfter:
			err = r.payAndSubmit(ctx, s, s, sc.Asset, due, false)
		}
		return err

	case ClassUnder:
		s, err := short()
		if err != nil {
			return err
		}
		latest := o.ShortLifetime - o.Margin - 5*time.Second
		if err := sleep(ctx, time.Second+time.Duration(g.Int64N(int64(latest-time.Second)))); err != nil {
			return err
		}
		_, err = r.pay(ctx, s, sc.Asset, part(g, s.Options[sc.Asset].Due, 20, 80))
		return err

	case ClassLate:
		s, err := short()
		if err != nil {
			return err
		}
		if err := sleepUntil(ctx, s.ExpiresAt.Add(o.Margin+time.Duration(1+g.IntN(4))*time.Second)); err != nil {
			return err
		}
		_, err = r.pay(ctx, s, sc.Asset, s.Options[sc.Asset].Due)
		return err

	case ClassExpireConfirming:
		s, err := short()
		if err != nil {
			return err
		}
		// Mined about Margin+1s before expiry; final Confirmations blocks
		// later, after it.
		if err := sleepUntil(ctx, s.ExpiresAt.Add(-o.Margin-2*time.Second)); err != nil {
			return err
		}
		_, err = r.pay(ctx, s, sc.Asset, s.Options[sc.Asset].Due)
		return err

	case ClassMulti:
		s, err := long()
		if err != nil {
			return err
		}
		parts := split(g, s.Options[sc.Asset].Due, 2+g.IntN(3))
		to := make([]*session, len(parts))
		for i := range to {
			to[i] = s
		}
		return r.multisend(ctx, sc.Asset, to, parts)

	case ClassSplit:
		a, err := long()
		if err != nil {
			return err
		}
		b, err := long()
		if err != nil {
			return err
		}
		return r.multisend(ctx, sc.Asset, []*session{a, b}, []*big.Int{a.Options[sc.Asset].Due, b.Options[sc.Asset].Due})

	case ClassWrongSession:
		victim, err := long()
		if err != nil {
			return err
		}
		squatter, err := long()
		if err != nil {
			return err
		}
		due := victim.Options[sc.Asset].Due
		switch g.IntN(3) {
		case 0: // before broadcasting
			return r.payAndSubmit(ctx, victim, squatter, sc.Asset, due, true)
		case 1: // right after
			return r.payAndSubmit(ctx, victim, squatter, sc.Asset, due, false)
		}
		// Once the victim's payment is mined and seen, as one copied from
		// a block explorer.
		h, err := r.pay(ctx, victim, sc.Asset, due)
		if err != nil {
			return err
		}
		wait, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, _ = r.s.chain.WaitMined(wait, h)
		cancel()
		if err := sleep(ctx, time.Duration(3+g.IntN(5))*time.Second); err != nil {
			return err
		}
		r.submit(ctx, victim, squatter, h)
		return nil

	case ClassRefund:
		s, err := long()
		if err != nil {
			return err
		}
		due := s.Options[sc.Asset].Due
		h, err := r.pay(ctx, s, sc.Asset, due)
		if err != nil {
			return err
		}
		return r.refund(ctx, sc, s, g, due, h)

	case ClassPayout:
		return r.payout(ctx, sc, g)

	case ClassInternal:
		a, err := long()
		if err != nil {
			return err
		}
		if g.IntN(2) == 0 {
			parts := split(g, a.Options[sc.Asset].Due, 2)
			return r.multisend(ctx, sc.Asset, []*session{a, a}, parts)
		}
		b, err := long()
		if err != nil {
			return err
		}
		return r.multisend(ctx, sc.Asset, []*session{a, b}, []*big.Int{a.Options[sc.Asset].Due, b.Options[sc.Asset].Due})
	}
	return fmt.Errorf("unknown class %q", sc.Class)
}

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

// open opens a session for a random amount between 1 and 500 USD (10 and
// 500 in bitcoin, whose outputs must be worth more than dust).
func (r *run) open(ctx context.Context, sc *scenario, g *rand.Rand, short bool) (*session, error) {
	cents := 100 + g.IntN(49_900)
	plan := r.s.planID
	if sc.Asset == assetBTC {
		cents, plan = 1_000+g.IntN(49_000), r.s.btcPlanID
	}
	amount := fmt.Sprintf("%d.%02d", cents/100, cents%100)
	base := r.s.longAPI
	if short {
		base = r.s.shortAPI
	}
	s, err := r.s.api.openSession(ctx, base, plan, amount)
	if err != nil {
		r.problem("api", "", "scenario %d (%s): %v", sc.N, sc.Class, err)
		return nil, errReported
	}
	s.Short, s.Class = short, sc.Class
	if _, ok := s.Options[sc.Asset]; !ok {
		r.problem("api", s.ID, "no %s option: %v", sc.Asset, s.Options)
		return nil, errReported
	}
	r.mu.Lock()
	sc.Sessions = append(sc.Sessions, s)
	r.sessions[s.ID] = s
	r.mu.Unlock()
	return s, nil
}

// payer lends a funded account for one send; each account sends one
// transaction at a time.
func (r *run) payer(ctx context.Context) (devchain.Account, func(), error) {
	select {
	case a := <-r.accounts:
		return a, func() { r.accounts <- a }, nil
	case <-ctx.Done():
		return devchain.Account{}, nil, ctx.Err()
	}
}

// call is what paying amount of asset to s sends: a token transfer or
// plain value.
func (r *run) call(s *session, asset string, amount *big.Int) (to common.Address, value *big.Int, data []byte) {
	if tok := s.Options[asset].Token; tok != (common.Address{}) {
		return tok, nil, usdcABI.PackTransfer(s.Address, amount)
	}
	return s.Address, amount, nil
}

// pay sends amount of asset to s's deposit address.
func (r *run) pay(ctx context.Context, s *session, asset string, amount *big.Int) (common.Hash, error) {
	acc, release, err := r.payer(ctx)
	if err != nil {
		return common.Hash{}, err
	}
	defer release()
	to, value, data := r.call(s, asset, amount)
	r.chainMu.RLock()
	defer r.chainMu.RUnlock()
	h, err := r.s.chain.Transact(ctx, acc, to, value, data)
	if err != nil {
		return h, fmt.Errorf("pay %s: %w", s.ID, err)
	}
	r.sent(h, s)
	return h, nil
}

// payAndSubmit pays s and posts the hash to submitTo (s itself, or another
// session for a wrong-session submission), before broadcasting the
// transaction or right after.
func (r *run) payAndSubmit(ctx context.Context, s, submitTo *session, asset string, amount *big.Int, before bool) error {
	acc, release, err := r.payer(ctx)
	if err != nil {
		return err
	}
	defer release()
	to, value, data := r.call(s, asset, amount)
	// Held across signing, posting and sending: a reorg in between could
	// take back the nonce the signed transaction carries.
	r.chainMu.RLock()
	defer r.chainMu.RUnlock()
	var h common.Hash
	submit := func() { r.submit(ctx, s, submitTo, h) }
	if before {
		tx, err := r.s.chain.SignTransact(ctx, acc, to, value, data)
		if err != nil {
			return fmt.Errorf("sign for %s: %w", s.ID, err)
		}
		h = tx.Hash()
		submit()
		if err := r.s.chain.SendSigned(ctx, tx); err != nil {
			return fmt.Errorf("send for %s: %w", s.ID, err)
		}
		r.sent(h, s)
		return nil
	}
	if h, err = r.s.chain.Transact(ctx, acc, to, value, data); err != nil {
		return fmt.Errorf("pay %s: %w", s.ID, err)
	}
	r.sent(h, s)
	submit()
	return nil
}

// submit posts h, a payment to s, to submitTo, and checks that the answer
// to a wrong session shows nothing of s.
func (r *run) submit(ctx context.Context, s, submitTo *session, h common.Hash) {
	resp, err := r.s.api.submit(ctx, r.s.longAPI, submitTo, h)
	r.mu.Lock()
	r.submits[submitStatus(resp.Status, err)]++
	r.mu.Unlock()
	if err != nil || resp.Status >= http.StatusBadRequest {
		r.logf("hash %s posted to %s (%s): %v %d %s", h.Hex(), submitTo.ID, submitTo.Class, err, resp.Status, bytes.TrimSpace(resp.Raw))
	}
	if err == nil && submitTo != s && leaks(resp.Raw, s) {
		answer := strings.TrimSpace(string(resp.Raw))
		if len(answer) > 200 {
			answer = answer[:200] + "…"
		}
		r.problem("leak", submitTo.ID, "the answer to posting %s to it shows the paid session %s: %s", h.Hex(), s.ID, answer)
	}
}

// multisend pays amounts[i] to sessions[i] in one transaction of the dev
// multisend: token transfers, or native payments by internal calls.
func (r *run) multisend(ctx context.Context, asset string, sessions []*session, amounts []*big.Int) error {
	acc, release, err := r.payer(ctx)
	if err != nil {
		return err
	}
	defer release()
	to := make([]common.Address, len(sessions))
	total := new(big.Int)
	for i, s := range sessions {
		to[i] = s.Address
		total.Add(total, amounts[i])
	}
	var value *big.Int
	var data []byte
	if tok := sessions[0].Options[asset].Token; tok != (common.Address{}) {
		data = multisendABI.PackSendToken(tok, to, amounts)
	} else {
		value, data = total, multisendABI.PackSendNative(to, amounts)
	}
	r.chainMu.RLock()
	defer r.chainMu.RUnlock()
	h, err := r.s.chain.Transact(ctx, acc, r.s.multisend, value, data)
	if err != nil {
		return fmt.Errorf("multisend to %s: %w", sessions[0].ID, err)
	}
	r.sent(h, sessions...)
	return nil
}

func (r *run) sent(h common.Hash, sessions ...*session) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.txs = append(r.txs, sentTx{Hash: h, At: time.Now(), Sessions: sessions})
}

// leaks reports whether an API answer names the other session or its
// deposit address.
func leaks(raw []byte, other *session) bool {
	body := strings.ToLower(string(raw))
	return strings.Contains(body, strings.ToLower(other.ID)) || strings.Contains(body, strings.ToLower(other.Address.Hex()))
}

func submitStatus(status int, err error) string {
	if err != nil {
		return "error"
	}
	return fmt.Sprintf("%d %s", status, http.StatusText(status))
}

// part is between lo% and hi% of due, at least one base unit.
func part(g *rand.Rand, due *big.Int, lo, hi int) *big.Int {
	pct := big.NewInt(int64(lo + g.IntN(hi-lo+1)))
	p := new(big.Int).Div(new(big.Int).Mul(due, pct), big.NewInt(100))
	if p.Sign() == 0 {
		p.SetInt64(1)
	}
	return p
}

// split cuts due into k positive parts at random points.
func split(g *rand.Rand, due *big.Int, k int) []*big.Int {
	parts := make([]*big.Int, 0, k)
	left := new(big.Int).Set(due)
	for i := k; i > 1; i-- {
		// Each part takes 1/(2i) to 1/i of what is left.
		p := new(big.Int).Mul(left, big.NewInt(int64(5000+g.IntN(5001))))
		p.Div(p, big.NewInt(int64(10000*i)))
		if p.Sign() == 0 {
			p.SetInt64(1)
		}
		parts = append(parts, p)
		left.Sub(left, p)
	}
	return append(parts, left)
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func sleepUntil(ctx context.Context, t time.Time) error { return sleep(ctx, time.Until(t)) }
