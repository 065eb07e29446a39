package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/btcsuite/btcd/wire"
	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/payment"
)

// BitcoinOutgoingTo returns the refunds and payouts of a Bitcoin network
// that pay one of addrs and wait for their signature, or whose
// transaction is sent, stale or confirmed (a Bitcoin scan records the
// transactions paying them, so that their workflows read where those
// stand, a reorg's new block too), those waiting first, oldest first. It
// reads by destination, as AwaitingOutgoingTo does.
func (s MoneyOut) BitcoinOutgoingTo(ctx context.Context, network string, addrs []string) ([]payment.Refund, []payment.Payout, error) {
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

// BitcoinOwner is the project environment whose deposit address an
// output pays.
type BitcoinOwner struct {
	ProjectID string
	IsLive    bool
	Address   string
	// Index is the deposit address's derivation index.
	Index int64
}

// BitcoinOutputOwners tells, of outpoints of a network, those the network's
// scans recorded paying a deposit address (a payment, or the change of the
// project's own money out), and whose address that is: the outputs only
// the project's deposit key spends.
func (s Chains) BitcoinOutputOwners(ctx context.Context, network string, outpoints []wire.OutPoint) (map[wire.OutPoint]BitcoinOwner, error) {
	out := map[wire.OutPoint]BitcoinOwner{}
	if len(outpoints) == 0 {
		return out, nil
	}
	ids := make([]string, len(outpoints))
	for i, op := range outpoints {
		ids[i] = op.Hash.String()
	}
	rows, err := s.db(ctx).Query(ctx, `SELECT t.txid, (o->>'vout')::bigint, b.project_id, b.is_live, b.address, b.derivation_index
		FROM bitcoin_transactions t, jsonb_array_elements(t.outputs) o, bitcoin_deposit_addresses b
		WHERE t.network = $1 AND t.txid = ANY($2) AND b.address = o->>'address'`, network, ids)
	if err != nil {
		return nil, fmt.Errorf("bitcoin output owners: %w", err)
	}
	want := map[string]bool{}
	for _, op := range outpoints {
		want[op.String()] = true
	}
	var txid string
	var vout int64
	var o BitcoinOwner
	_, err = pgx.ForEachRow(rows, []any{&txid, &vout, &o.ProjectID, &o.IsLive, &o.Address, &o.Index}, func() error {
		op, err := parseOutPoint(fmt.Sprintf("%s:%d", txid, vout))
		if err != nil {
			return err
		}
		if want[op.String()] {
			out[op] = o
		}
		return nil
	})
	return out, err
}
