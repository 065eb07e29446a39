package chains

import (
	"context"

	"github.com/paymentsd/paymentsd/store/checkout"
	"github.com/paymentsd/paymentsd/store/internal/db"
)

// Watched is what a scan's lookup finds among its recipients.
type Watched struct {
	// Deposits are the sessions whose deposit addresses are among them.
	Deposits []checkout.WatchedAddress
	// Shared are those that are shared recipients watched on the network
	// (SharedRecipients).
	Shared []string
}

// WatchedRecipients is DepositAddresses and SharedRecipients through the
// process's set of every deposit address issued and every shared
// recipient held: of addresses (lowercase), only those the set may hold
// are looked up in the database, and not at all when no recipient of a
// scanned range is a session's or a hold's. It costs the process about 40
// bytes a session ever opened (docs/performance.md, "Data at scale").
func (s Store) WatchedRecipients(ctx context.Context, network string, addresses []string) (Watched, error) {
	keys, ok := make([]uint64, len(addresses)), make([]bool, len(addresses))
	for i, a := range addresses {
		keys[i], ok[i] = db.AddressKey(a)
	}
	held := make([]bool, len(addresses))
	w := &s.h.Watched
	w.Mu.Lock()
	err := w.Refresh(ctx, s.h)
	var deposits, shared []string
	if err == nil {
		w.MayHold(keys, held)
		for i, a := range addresses {
			if !ok[i] || held[i] {
				deposits = append(deposits, a)
			}
			if _, held := w.Shared[keys[i]]; held || !ok[i] {
				shared = append(shared, a)
			}
		}
	}
	w.Mu.Unlock()
	var out Watched
	if err != nil {
		return out, err
	}
	if len(deposits) > 0 {
		if out.Deposits, err = checkout.New(s.h).DepositAddresses(ctx, deposits); err != nil {
			return out, err
		}
	}
	if len(shared) > 0 {
		out.Shared, err = checkout.New(s.h).SharedRecipients(ctx, network, shared)
	}
	return out, err
}

// MayBeDestinations returns those of addresses (lowercase) that a refund
// or payout may pay, through the set of every destination money out was
// given: most of a scanned range's recipients are none, and are not looked
// up in the database.
func (s Store) MayBeDestinations(ctx context.Context, addresses []string) ([]string, error) {
	w := &s.h.Watched
	w.Mu.Lock()
	defer w.Mu.Unlock()
	if err := w.Refresh(ctx, s.h); err != nil {
		return nil, err
	}
	var out []string
	for _, a := range addresses {
		k, ok := db.AddressKey(a)
		if _, held := w.Outgoing[k]; held || !ok {
			out = append(out, a)
		}
	}
	return out, nil
}
