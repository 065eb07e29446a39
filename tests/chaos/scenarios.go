package chaos

import (
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/ethereum/go-ethereum/common"
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
