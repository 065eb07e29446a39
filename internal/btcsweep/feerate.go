package btcsweep

import (
	"context"
	"fmt"
)

// DefaultMaxFeeRate is the fee rate, in sat/vB, a sweep pays at most
// unless told otherwise: well above what a block takes in ordinary times,
// below the spikes in which a sweep, never urgent, is better made later.
const DefaultMaxFeeRate = 100

// InputVSize is the virtual size a native SegWit input adds to a
// transaction: what spending one more coin costs, at the fee rate.
const InputVSize = 68

// Rate is the fee rate a sweep pays and where it came from: given by the
// merchant (Estimate 0) or the node's estimate, capped at Ceiling when
// the estimate is above it.
type Rate struct {
	SatPerVB int64
	Estimate int64
	Ceiling  int64
	Capped   bool
}

// ChooseFeeRate decides a sweep's fee rate: given (sat/vB) when it is not
// 0, else the node's estimate for blocks blocks. A rate given above the
// ceiling is refused: the merchant asked for both, and only they can say
// which holds. The node's estimate above it is capped to it: a sweep is
// never urgent, and it is replaceable (BIP125) should it wait too long.
func ChooseFeeRate(ctx context.Context, node Node, given, ceiling int64, blocks int) (Rate, error) {
	if ceiling < 1 {
		return Rate{}, fmt.Errorf("the fee rate ceiling %d: want at least 1 sat/vB", ceiling)
	}
	if given != 0 {
		if given > ceiling {
			return Rate{}, fmt.Errorf("the fee rate %d sat/vB is above the ceiling of %d sat/vB: raise the ceiling (--max-fee-rate) to pay it", given, ceiling)
		}
		return Rate{SatPerVB: given, Ceiling: ceiling}, nil
	}
	estimate, err := FeeRate(ctx, node, blocks)
	if err != nil {
		return Rate{}, err
	}
	r := Rate{SatPerVB: estimate, Estimate: estimate, Ceiling: ceiling}
	if estimate > ceiling {
		r.SatPerVB, r.Capped = ceiling, true
	}
	return r, nil
}

// String says the rate, where it came from and the ceiling, for the
// command's output.
func (r Rate) String() string {
	switch {
	case r.Capped:
		return fmt.Sprintf("%d sat/vB, the ceiling: the node estimates %d sat/vB, above the ceiling of %d sat/vB, so the sweep may take longer to be mined (it can be replaced)",
			r.SatPerVB, r.Estimate, r.Ceiling)
	case r.Estimate != 0:
		return fmt.Sprintf("%d sat/vB, the node's estimate (ceiling %d sat/vB)", r.SatPerVB, r.Ceiling)
	}
	return fmt.Sprintf("%d sat/vB, as given (ceiling %d sat/vB)", r.SatPerVB, r.Ceiling)
}

// SplitDust parts coins into those worth spending at feeRate and the
// dust: coins holding no more than what their own input costs at that
// rate (InputVSize × feeRate), which a sweep would hand to the miners
// whole, and more. The dust stays where it is, for a sweep at a lower
// rate.
func SplitDust(coins []Coin, feeRate int64) (spend, dust []Coin) {
	for _, c := range coins {
		if c.Sats <= DustAt(feeRate) {
			dust = append(dust, c)
		} else {
			spend = append(spend, c)
		}
	}
	return spend, dust
}

// DustAt is the most a coin may hold and still be dust at feeRate: what
// spending it costs.
func DustAt(feeRate int64) int64 { return InputVSize * feeRate }
