package chaos

import (
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"

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

// open opens a session for a random amount between 1 and 500 USD.
func (r *run) open(ctx context.Context, sc *scenario, g *rand.Rand, short bool) (*session, error) {
	cents := 100 + g.IntN(49_900)
	amount := fmt.Sprintf("%d.%02d", cents/100, cents%100)
	base := r.s.longAPI
	if short {
		base = r.s.shortAPI
	}
	s, err := r.s.api.openSession(ctx, base, r.s.planID, amount)
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
