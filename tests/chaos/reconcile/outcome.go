package reconcile

import (
	"math/big"
	"slices"
	"time"
)

// Expect works out the outcomes a session may have, given the transfers to
// its address on the canonical chain (docs/reconciliation.md):
//
//   - completed once what was paid before expiresAt reaches the amount due
//     (less the project's tolerance), whenever it is confirmed; overpaid if
//     everything paid exceeds the amount due;
//   - before expiresAt otherwise: open with nothing paid, processing and
//     underpaid with part of it;
//   - after expiresAt otherwise: expired, with overpaid if more than the
//     amount due arrived, else paid_late if any payment arrived after
//     expiry, else underpaid if part of it arrived.
//
// Amounts are compared exactly, as fractions of the amount due in each
// payment's own asset. A payment mined within margin of expiresAt counts
// both ways, and ambiguous says whether that happened.
func Expect(s Session, paid []Transfer, now time.Time, margin time.Duration, tolerance *big.Rat) (outcomes []Outcome, ambiguous bool) {
	threshold := big.NewRat(1, 1)
	if tolerance != nil {
		threshold.Sub(threshold, new(big.Rat).Quo(tolerance, big.NewRat(100, 1)))
	}
	type payment struct {
		share *big.Rat
		when  time.Time
	}
	var pays []payment
	var unsure []int
	for _, t := range paid {
		o, ok := s.option(t.Token)
		if !ok {
			continue // an asset the session does not accept is worth nothing to it
		}
		when := time.Unix(int64(t.Time), 0)
		if when.After(s.LateUntil) && !s.LateUntil.IsZero() {
			continue // after the late window: the engine no longer watches
		}
		if near(when, s.ExpiresAt, margin) && len(unsure) < 8 {
			unsure = append(unsure, len(pays))
		}
		pays = append(pays, payment{new(big.Rat).SetFrac(t.Amount, o.Due), when})
	}
	expiredNow := []bool{!now.Before(s.ExpiresAt)}
	if near(now, s.ExpiresAt, margin) {
		expiredNow = []bool{false, true}
	}
	ambiguous = len(unsure) > 0 || len(expiredNow) > 1
	for combo := 0; combo < 1<<len(unsure); combo++ {
		late := make([]bool, len(pays))
		for i, p := range pays {
			late[i] = !p.when.Before(s.ExpiresAt)
		}
		for bit, i := range unsure {
			late[i] = combo&(1<<bit) != 0
		}
		for _, expired := range expiredNow {
			onTime, all := new(big.Rat), new(big.Rat)
			anyLate := false
			for i, p := range pays {
				all.Add(all, p.share)
				if late[i] {
					anyLate = true
				} else {
					onTime.Add(onTime, p.share)
				}
			}
			if anyLate && !expired {
				continue // a late payment means the session has expired
			}
			one := big.NewRat(1, 1)
			var o Outcome
			switch {
			case onTime.Cmp(threshold) >= 0:
				o.Status = "completed"
				if all.Cmp(one) > 0 {
					o.Exception = "overpaid"
				}
			case !expired:
				o.Status = "open"
				if all.Sign() > 0 {
					o.Status, o.Exception = "processing", "underpaid"
				}
			default:
				o.Status = "expired"
				switch {
				case all.Cmp(one) > 0:
					o.Exception = "overpaid"
				case anyLate:
					o.Exception = "paid_late"
				case all.Sign() > 0:
					o.Exception = "underpaid"
				}
			}
			if !slices.Contains(outcomes, o) {
				outcomes = append(outcomes, o)
			}
		}
	}
	return outcomes, ambiguous
}

func near(a, b time.Time, margin time.Duration) bool {
	d := a.Sub(b)
	return d > -margin && d < margin
}
