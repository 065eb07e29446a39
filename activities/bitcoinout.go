package activities

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/btcsuite/btcd/wire"

	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/chainwatch/btcscan"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store"
)

// bitcoinOutgoing is a Bitcoin scan's watch of the destinations of
// refunds and payouts paid in bitcoin (store.BitcoinOutgoingTo): the
// transactions paying them are recorded as a payment's are, so that
// their workflows read where they stand (activities/sentlook), and one made without
// its ID reported is found. Like outgoingWatch, it reads the items by the
// addresses a read pays, so its cost grows with a block's outputs, not
// with the items open.
type bitcoinOutgoing struct {
	a       *Activities
	network string
	// refunds and payouts are the items read, oldest first (those waiting
	// for their signature first, per read); seen names them.
	refunds []payment.Refund
	payouts []payment.Payout
	seen    map[string]bool
	dest    map[string]bool
}

// watch returns, of addrs, the destinations of the network's Bitcoin
// items, remembering those items.
func (w *bitcoinOutgoing) watch(ctx context.Context, addrs []string) (map[string]bool, error) {
	refunds, payouts, err := w.a.Store.MoneyOut().BitcoinOutgoingTo(ctx, w.network, addrs)
	if err != nil {
		return nil, err
	}
	if w.dest == nil {
		w.dest, w.seen = map[string]bool{}, map[string]bool{}
	}
	watched := map[string]bool{}
	for _, r := range refunds {
		if watched[r.ToAddress], w.dest[r.ToAddress] = true, true; !w.seen[r.ID] {
			w.seen[r.ID], w.refunds = true, append(w.refunds, r)
		}
	}
	for _, p := range payouts {
		if watched[p.ToAddress], w.dest[p.ToAddress] = true, true; !w.seen[p.ID] {
			w.seen[p.ID], w.payouts = true, append(w.payouts, p)
		}
	}
	return watched, nil
}

// sessionOutputs returns, of the outputs a scan found (recorded already),
// those that pay sessions: not those to an item's destination, nor the
// change of the project's own money out (an output to a deposit address
// of a transaction spending an output recorded at a deposit address of
// the same project environment: only its deposit key could sign it, so it
// is the merchant's coins coming back, never a customer's payment). It
// records as sent the items waiting for their signature that a
// transaction pays exactly from the project's own coins (their ID was not
// reported).
func (w *bitcoinOutgoing) sessionOutputs(ctx context.Context, c *chainwatch.Chain, found []btcscan.Output,
	sessions map[string]store.WatchedAddress) ([]btcscan.Output, error) {
	var spent []wire.OutPoint
	for _, o := range found {
		spent = append(spent, o.Spends...)
	}
	owners, err := w.a.Store.Chains().BitcoinOutputOwners(ctx, w.network, spent)
	if err != nil {
		return nil, classify(err)
	}
	ownedBy := func(o btcscan.Output, projectID string, isLive bool) (all, any bool) {
		all = len(o.Spends) > 0
		for _, op := range o.Spends {
			ow, ok := owners[op]
			mine := ok && ow.ProjectID == projectID && ow.IsLive == isLive
			all, any = all && mine, any || mine
		}
		return all, any
	}
	var out []btcscan.Output
	now := time.Now().UTC().Truncate(time.Microsecond)
	for _, o := range found {
		if s, ok := sessions[o.Address]; ok {
			if _, change := ownedBy(o, s.ProjectID, s.IsLive); change {
				slog.InfoContext(ctx, "change of the project's own bitcoin, not a payment", "network", w.network,
					"txid", o.TxID.String(), "vout", o.Vout, "address", o.Address)
				continue
			}
			out = append(out, o)
		}
		if !w.dest[o.Address] {
			continue
		}
		if err := w.spot(ctx, c, o, ownedBy, now); err != nil {
			return nil, classify(err)
		}
	}
	return out, nil
}

// spot records as sent the first refund, else the first payout, waiting
// for its signature that output o pays exactly from its project's own
// coins, unless the output counts for something already.
func (w *bitcoinOutgoing) spot(ctx context.Context, c *chainwatch.Chain, o btcscan.Output,
	ownedBy func(btcscan.Output, string, bool) (bool, bool), now time.Time) error {
	hash := o.TxID.String()
	taken, err := w.a.Store.MoneyOut().TakenTransfers(ctx, 0, hash, "")
	if err != nil || taken[int(o.Vout)] != "" {
		return err
	}
	transfer := func(og payment.Outgoing) payment.Transfer {
		return payment.Transfer{LogIndex: int(o.Vout), From: og.FromAddress, To: o.Address, AssetID: og.AssetDefinitionID,
			AmountBaseUnits: strconv.FormatInt(o.Sats, 10)}
	}
	if done, err := spotFirst(ctx, w.a, refundOut, w.refunds, hash, "bitcoin transaction", "txid",
		bitcoinOffer(refundOut, o, ownedBy, transfer, hash, now)); done || err != nil {
		return err
	}
	_, err = spotFirst(ctx, w.a, payoutOut, w.payouts, hash, "bitcoin transaction", "txid", bitcoinOffer(payoutOut, o, ownedBy, transfer, hash, now))
	return err
}

// bitcoinOffer is spotFirst's offer of output o to an item waiting for its
// signature that o pays, from its project's own coins: the domain's spot
// of the transfer o is for it.
func bitcoinOffer[T any](k outgoingKind[T], o btcscan.Output, ownedBy func(btcscan.Output, string, bool) (bool, bool),
	transfer func(payment.Outgoing) payment.Transfer, hash string, now time.Time) func(T) (func(*T) payment.EventType, error) {
	return func(item T) (func(*T) payment.EventType, error) {
		it := k.ref(item)
		if all, _ := ownedBy(o, it.ProjectID, it.IsLive); !all || it.Status != payment.RefundAwaitingSignature ||
			!strings.EqualFold(it.ToAddress, o.Address) {
			return nil, nil
		}
		return func(locked *T) payment.EventType { return k.spot(locked, transfer(k.ref(*locked).Outgoing), hash, now) }, nil
	}
}
