package chaos

import (
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/wire"

	"github.com/paymentsd/paymentsd/dev/btcnode"
)

// sentBTC is a bitcoin transaction a payer sent, with the sessions it
// pays.
type sentBTC struct {
	Tx       *wire.MsgTx
	At       time.Time
	Sessions []*session
	// ReplacedBy is the transaction that replaced it or spent its coin
	// elsewhere, if one did.
	ReplacedBy string
	// DoubleSpend says ReplacedBy pays none of its sessions.
	DoubleSpend bool
}

// btcReorg is one Bitcoin reorg the run made.
type btcReorg struct {
	At        time.Time
	Depth     int
	Abandoned []string // the run's transactions in the blocks it took away
	Dropped   []string // those of them double-spent before the new branch
}

// btcPay is one output of a bitcoin payment: sats to a session.
type btcPay struct {
	s    *session
	sats *big.Int
}

// Fees of the payers' transactions, in sats: a payment, its replacement
// (BIP125 wants more, absolute and per byte), and a double spend in a
// reorg, which may replace a replacement.
const (
	btcFee        = 1_000
	btcReplaceFee = 4_000
	btcReorgFee   = 10_000
)

// playBitcoin runs a Bitcoin scenario.
func (r *run) playBitcoin(ctx context.Context, sc *scenario, g *rand.Rand) error {
	o := r.o
	due := func(s *session) *big.Int { return s.Options[assetBTC].Due }
	switch sc.Class {
	case ClassBTCFull:
		s, err := r.open(ctx, sc, g, false)
		if err != nil {
			return err
		}
		return r.payBTC(ctx, []btcPay{{s, due(s)}})

	case ClassBTCTopUp:
		s, err := r.open(ctx, sc, g, false)
		if err != nil {
			return err
		}
		first := part(g, due(s), 20, 80)
		if err := r.payBTC(ctx, []btcPay{{s, first}}); err != nil {
			return err
		}
		if err := sleep(ctx, time.Duration(2+g.IntN(7))*time.Second); err != nil {
			return err
		}
		return r.payBTC(ctx, []btcPay{{s, new(big.Int).Sub(due(s), first)}})

	case ClassBTCOver:
		s, err := r.open(ctx, sc, g, false)
		if err != nil {
			return err
		}
		return r.payBTC(ctx, []btcPay{{s, new(big.Int).Add(due(s), part(g, due(s), 1, 50))}})

	case ClassBTCUnder:
		s, err := r.open(ctx, sc, g, true)
		if err != nil {
			return err
		}
		latest := o.ShortLifetime - o.Margin - 5*time.Second
		if err := sleep(ctx, time.Second+time.Duration(g.Int64N(int64(latest-time.Second)))); err != nil {
			return err
		}
		return r.payBTC(ctx, []btcPay{{s, part(g, due(s), 20, 80)}})

	case ClassBTCLate:
		s, err := r.open(ctx, sc, g, true)
		if err != nil {
			return err
		}
		if err := sleepUntil(ctx, s.ExpiresAt.Add(o.Margin+time.Duration(1+g.IntN(4))*time.Second)); err != nil {
			return err
		}
		return r.payBTC(ctx, []btcPay{{s, due(s)}})

	case ClassBTCMulti:
		a, err := r.open(ctx, sc, g, false)
		if err != nil {
			return err
		}
		if g.IntN(2) == 0 {
			var pays []btcPay
			for _, part := range split(g, due(a), 2+g.IntN(2)) {
				pays = append(pays, btcPay{a, part})
			}
			return r.payBTC(ctx, pays)
		}
		b, err := r.open(ctx, sc, g, false)
		if err != nil {
			return err
		}
		return r.payBTC(ctx, []btcPay{{a, due(a)}, {b, due(b)}})

	case ClassBTCReplace, ClassBTCDoubleSpend:
		s, err := r.open(ctx, sc, g, false)
		if err != nil {
			return err
		}
		// No block mines the payment before it is replaced, once the
		// engine has seen it pending (or after 5 s): a customer whose
		// payment waits unconfirmed bumps its fee, or spends its coin
		// elsewhere.
		r.s.btcMu.RLock()
		defer r.s.btcMu.RUnlock()
		pays := []btcPay{{s, due(s)}}
		tx, err := r.sendBTC(ctx, pays)
		if err != nil {
			return err
		}
		if err := r.seenPending(ctx, tx.TxHash().String(), 5*time.Second); err != nil {
			return err
		}
		outs, err := btcOuts(pays)
		if err != nil {
			return err
		}
		double := sc.Class == ClassBTCDoubleSpend
		if double {
			outs = []btcnode.Out{{To: r.s.btc.Wallet(), Sats: due(s).Int64()}}
		}
		bumped, err := r.s.btc.Replace(ctx, tx, outs, btcReplaceFee)
		if err != nil {
			return fmt.Errorf("replace %s: %w", tx.TxHash(), err)
		}
		var paid []*session
		if !double {
			paid = []*session{s}
		}
		r.replaced(tx, bumped, double, paid)
		return nil
	}
	return fmt.Errorf("unknown class %q", sc.Class)
}

// seenPending waits until the engine has recorded a payment of txid, at
// most limit.
func (r *run) seenPending(ctx context.Context, txid string, limit time.Duration) error {
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); {
		var n int
		if err := r.s.db.QueryRow(ctx, `SELECT count(*) FROM transactions WHERE project_id = $1 AND tx_hash = $2`,
			r.s.projectID, txid).Scan(&n); err == nil && n > 0 {
			return nil
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
	return nil
}

func btcOuts(pays []btcPay) ([]btcnode.Out, error) {
	outs := make([]btcnode.Out, len(pays))
	for i, p := range pays {
		to, err := btcutil.DecodeAddress(p.s.Options[assetBTC].Address, btcnode.Params)
		if err != nil {
			return nil, fmt.Errorf("session %s's bitcoin address: %w", p.s.ID, err)
		}
		outs[i] = btcnode.Out{To: to, Sats: p.sats.Int64()}
	}
	return outs, nil
}

// payBTC sends one transaction paying pays, between the node's blocks.
func (r *run) payBTC(ctx context.Context, pays []btcPay) error {
	r.s.btcMu.RLock()
	defer r.s.btcMu.RUnlock()
	_, err := r.sendBTC(ctx, pays)
	return err
}

// sendBTC sends one transaction paying pays and records it; the caller
// holds btcMu for reading.
func (r *run) sendBTC(ctx context.Context, pays []btcPay) (*wire.MsgTx, error) {
	outs, err := btcOuts(pays)
	if err != nil {
		return nil, err
	}
	tx, err := r.s.btc.Send(ctx, outs, btcFee)
	if err != nil {
		return nil, fmt.Errorf("pay %s: %w", pays[0].s.ID, err)
	}
	var sessions []*session
	for _, p := range pays {
		if !slices.Contains(sessions, p.s) {
			sessions = append(sessions, p.s)
		}
	}
	r.mu.Lock()
	r.btcTxs = append(r.btcTxs, &sentBTC{Tx: tx, At: time.Now(), Sessions: sessions})
	r.mu.Unlock()
	return tx, nil
}

// replaced records that by replaced old, paying the sessions paid.
func (r *run) replaced(old, by *wire.MsgTx, double bool, paid []*session) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range r.btcTxs {
		if t.Tx.TxHash() == old.TxHash() {
			t.ReplacedBy, t.DoubleSpend = by.TxHash().String(), double
		}
	}
	if len(paid) > 0 {
		r.btcTxs = append(r.btcTxs, &sentBTC{Tx: by, At: time.Now(), Sessions: paid})
	}
}

// reorgBitcoin takes the node's last depth blocks away (invalidateblock):
// their transactions go back to its mempool. With drop, one of the run's
// payments among them is double-spent before a longer branch is mined, so
// it never comes back.
func (r *run) reorgBitcoin(ctx context.Context, depth int, drop bool) {
	rec, err := r.doReorgBitcoin(ctx, depth, drop)
	r.faults.add(func(f *faultLog) {
		if err != nil {
			f.failures = append(f.failures, "bitcoin reorg: "+err.Error())
			return
		}
		f.btcReorgs = append(f.btcReorgs, rec)
	})
	if err == nil {
		r.faults.event(faultEvent{Fault: FaultBTCReorg, At: rec.At,
			Detail: fmt.Sprintf("depth %d, %d of the run's transactions back in the mempool, %d double-spent", rec.Depth, len(rec.Abandoned), len(rec.Dropped))})
	}
}

func (r *run) doReorgBitcoin(ctx context.Context, depth int, drop bool) (btcReorg, error) {
	// The reorg waits, up to half a minute, for blocks that hold some of
	// the run's transactions: taking empty blocks away tests little.
	var rec btcReorg
	for wait := time.Now().Add(30 * time.Second); ; {
		r.s.btcMu.Lock()
		var err error
		rec, err = r.reorgBitcoinNow(ctx, depth, drop, time.Now().After(wait))
		r.s.btcMu.Unlock()
		if err != nil || rec.At != (time.Time{}) {
			return rec, err
		}
		if err := sleep(ctx, r.o.BitcoinInterval); err != nil {
			return rec, err
		}
	}
}

// reorgBitcoinNow makes the reorg if the last depth blocks hold some of
// the run's transactions, or anyway; the caller holds btcMu. It returns a
// zero record when it did not.
func (r *run) reorgBitcoinNow(ctx context.Context, depth int, drop, anyway bool) (btcReorg, error) {
	c := r.s.btc.Client
	tip, err := c.GetBlockCount()
	if err != nil {
		return btcReorg{}, err
	}
	ours := map[string]*sentBTC{}
	r.mu.Lock()
	for _, t := range r.btcTxs {
		ours[t.Tx.TxHash().String()] = t
	}
	r.mu.Unlock()
	rec := btcReorg{Depth: depth}
	first, err := c.GetBlockHash(tip - int64(depth) + 1)
	if err != nil {
		return btcReorg{}, err
	}
	for h := tip - int64(depth) + 1; h <= tip; h++ {
		hash, err := c.GetBlockHash(h)
		if err != nil {
			return btcReorg{}, err
		}
		b, err := c.GetBlock(hash)
		if err != nil {
			return btcReorg{}, err
		}
		for _, tx := range b.Transactions {
			if ours[tx.TxHash().String()] != nil {
				rec.Abandoned = append(rec.Abandoned, tx.TxHash().String())
			}
		}
	}
	if len(rec.Abandoned) == 0 && !anyway {
		return btcReorg{}, nil
	}
	if err := c.InvalidateBlock(first); err != nil {
		return btcReorg{}, err
	}
	rec.At = time.Now()
	r.logf("fault: bitcoin reorg of %d blocks from %s, %d of the run's transactions back in the mempool", depth, first, len(rec.Abandoned))
	if drop && len(rec.Abandoned) > 0 {
		victim := ours[rec.Abandoned[0]]
		by, err := r.s.btc.Replace(ctx, victim.Tx, []btcnode.Out{{To: r.s.btc.Wallet(), Sats: 10_000}}, btcReorgFee)
		if err != nil {
			return rec, fmt.Errorf("double-spend %s in the reorg: %w", rec.Abandoned[0], err)
		}
		r.replaced(victim.Tx, by, true, nil)
		rec.Dropped = append(rec.Dropped, rec.Abandoned[0])
	}
	if _, err := r.s.btc.Mine(ctx, depth+1); err != nil {
		return rec, err
	}
	return rec, nil
}

// restartBitcoin stops the merchant's node for BitcoinDown and starts it
// again. btcd in regtest starts on an empty chain, and takes the chain
// again from its peer, the network; the transactions its mempool held are
// gone from it until a block mines them.
func (r *run) restartBitcoin(ctx context.Context) {
	flight := r.inFlight(ctx)
	from := time.Now()
	r.logf("fault: the merchant's bitcoin node restarted, down %s", r.o.BitcoinDown)
	err := r.s.btcEngine.Restart(ctx, r.o.BitcoinDown)
	up := time.Now()
	if err == nil {
		err = r.s.btcEngine.WaitSynced(ctx, r.s.btc, time.Minute)
	}
	r.faults.add(func(f *faultLog) {
		if err != nil {
			f.failures = append(f.failures, "bitcoin restart: "+err.Error())
		}
		f.btcDown = append(f.btcDown, window{from, time.Now()})
		f.btcSync = append(f.btcSync, time.Since(up))
	})
	r.faults.event(faultEvent{Fault: FaultBTCRestart, At: from, For: time.Since(from), InFlight: flight,
		Detail: fmt.Sprintf("the merchant's node stopped, started again after %s, at the network's best block after %s", r.o.BitcoinDown,
			time.Since(up).Round(100*time.Millisecond))})
}
