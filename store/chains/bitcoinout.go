package chains

import (
	"context"
	"fmt"

	"github.com/btcsuite/btcd/wire"
	"github.com/jackc/pgx/v5"
)

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
func (s Store) BitcoinOutputOwners(ctx context.Context, network string, outpoints []wire.OutPoint) (map[wire.OutPoint]BitcoinOwner, error) {
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
