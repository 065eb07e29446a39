package moneyout

import (
	"context"
	"strings"

	"github.com/paymentsd/paymentsd/payment"
)

// BitcoinOutgoingTo returns the refunds and payouts of a Bitcoin network
// that pay one of addrs and wait for their signature, or whose
// transaction is sent, stale or confirmed (a Bitcoin scan records the
// transactions paying them, so that their workflows read where those
// stand, a reorg's new block too), those waiting first, oldest first. It
// reads by destination, as AwaitingOutgoingTo does.
func (s Store) BitcoinOutgoingTo(ctx context.Context, network string, addrs []string) ([]payment.Refund, []payment.Payout, error) {
	if len(addrs) == 0 {
		return nil, nil, nil
	}
	lower := make([]string, len(addrs))
	for i, a := range addrs {
		lower[i] = strings.ToLower(a)
	}
	refunds, payouts, err := s.AwaitingOutgoingTo(ctx, network, addrs)
	if err != nil {
		return nil, nil, err
	}
	// Each status set is read through its own index (refunds_awaiting_to,
	// refunds_confirmed_to).
	const where = `network = $1 AND status = 'confirmed' AND lower(to_address) = ANY($2) ORDER BY created_at, id`
	q := s.db(ctx)
	r, err := refundsTable.query(ctx, q, "confirmed bitcoin refunds", where, network, lower)
	if err != nil {
		return nil, nil, err
	}
	p, err := payoutsTable.query(ctx, q, "confirmed bitcoin payouts", where, network, lower)
	return append(refunds, r...), append(payouts, p...), err
}
