package btcsweep

import (
	"errors"
	"fmt"
	"slices"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/psbt"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"

	"github.com/paymentsd/paymentsd/internal/btckeys"
)

// Payment is one output a payment plan pays: an amount to an address.
type Payment struct {
	To   btcutil.Address
	Sats int64
}

// Plan is a payment planned from deposit coins: the coins it spends, the
// payments (outputs 0, 1, … in order), the change back to a deposit
// address of the account (the last output; none when it would be dust,
// which the fee then takes), and the fee at FeeRate.
type Plan struct {
	Coins       []Coin
	Payments    []Payment
	Change      int64
	ChangeIndex uint32
	ChangeTo    btcutil.Address
	Fee         int64
	FeeRate     int64
}

// PlanPayment chooses coins to pay payments at feeRate sat/vB: those at
// deposit address prefer first (a refund's own session's), then the
// largest, until they cover the payments and the fee; the change goes
// back to the deposit address of the first coin chosen.
func PlanPayment(key btckeys.Key, params *chaincfg.Params, coins []Coin, prefer *uint32, payments []Payment, feeRate int64) (Plan, error) {
	if key.Kind != btckeys.SegWit {
		return Plan{}, errors.New("only native SegWit deposit addresses are spent")
	}
	if feeRate < 1 {
		return Plan{}, fmt.Errorf("fee rate %d: want at least 1 sat/vB", feeRate)
	}
	if len(payments) == 0 {
		return Plan{}, errors.New("nothing to pay")
	}
	var want int64
	for _, p := range payments {
		if !p.To.IsForNet(params) {
			return Plan{}, fmt.Errorf("the destination %s is not an address of %s", p.To, params.Name)
		}
		if p.Sats < dust {
			return Plan{}, fmt.Errorf("%d sats to %s is below the %d sats the network relays", p.Sats, p.To, dust)
		}
		want += p.Sats
	}
	sorted := slices.Clone(coins)
	slices.SortStableFunc(sorted, func(a, b Coin) int {
		pa, pb := prefer != nil && a.Index == *prefer, prefer != nil && b.Index == *prefer
		switch {
		case pa != pb && pa:
			return -1
		case pa != pb:
			return 1
		case a.Sats != b.Sats:
			if a.Sats > b.Sats {
				return -1
			}
			return 1
		}
		return 0
	})
	var have int64
	plan := Plan{FeeRate: feeRate}
	for _, c := range sorted {
		plan.Coins = append(plan.Coins, c)
		have += c.Sats
		withChange := feeRate * VSize(len(plan.Coins), len(payments)+1)
		if have >= want+withChange {
			plan.Fee, plan.Change = withChange, have-want-withChange
			if plan.Change < dust {
				plan.Fee, plan.Change = have-want, 0
			}
			break
		}
		if without := feeRate * VSize(len(plan.Coins), len(payments)); have >= want+without {
			plan.Fee = have - want // the change would be dust: the fee takes it
			break
		}
	}
	if plan.Fee == 0 {
		return Plan{}, fmt.Errorf("the deposit addresses' spendable coins (%d sats) do not cover %d sats and the fee at %d sat/vB", have, want, feeRate)
	}
	plan.Payments = payments
	if plan.Change > 0 {
		plan.ChangeIndex = plan.Coins[0].Index
		addr, err := key.DeriveAddress(plan.ChangeIndex, params)
		if err != nil {
			return Plan{}, err
		}
		plan.ChangeTo = addr
	}
	return plan, nil
}

// PSBT returns the plan's unsigned PSBT: as Build's, each input carries
// the output it spends and its key's path below the account key.
func (plan Plan) PSBT(key btckeys.Key, params *chaincfg.Params) (*psbt.Packet, error) {
	ins := make([]*wire.OutPoint, len(plan.Coins))
	seqs := make([]uint32, len(plan.Coins))
	for i, c := range plan.Coins {
		out := c.Out
		ins[i], seqs[i] = &out, wire.MaxTxInSequenceNum-2 // replaceable: a stuck payment can be bumped
	}
	var outs []*wire.TxOut
	for _, p := range plan.Payments {
		script, err := txscript.PayToAddrScript(p.To)
		if err != nil {
			return nil, err
		}
		outs = append(outs, wire.NewTxOut(p.Sats, script))
	}
	if plan.Change > 0 {
		script, err := txscript.PayToAddrScript(plan.ChangeTo)
		if err != nil {
			return nil, err
		}
		outs = append(outs, wire.NewTxOut(plan.Change, script))
	}
	p, err := psbt.New(ins, outs, 2, 0, seqs)
	if err != nil {
		return nil, err
	}
	u, err := psbt.NewUpdater(p)
	if err != nil {
		return nil, err
	}
	for i, c := range plan.Coins {
		addr, err := key.DeriveAddress(c.Index, params)
		if err != nil {
			return nil, err
		}
		script, err := txscript.PayToAddrScript(addr)
		if err != nil {
			return nil, err
		}
		pub, err := key.PublicKey(c.Index)
		if err != nil {
			return nil, err
		}
		if err := u.AddInWitnessUtxo(wire.NewTxOut(c.Sats, script), i); err != nil {
			return nil, err
		}
		if err := u.AddInSighashType(txscript.SigHashAll, i); err != nil {
			return nil, err
		}
		if err := u.AddInBip32Derivation(key.Fingerprint(), []uint32{0, c.Index}, pub, i); err != nil {
			return nil, err
		}
	}
	return p, nil
}
