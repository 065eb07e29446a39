package chains

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/chainwatch/btcscan"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store/checkout"
)

// RecordBitcoinScan records what a Bitcoin network's scan found: each
// transaction paying a watched address with the outputs it spends and,
// when found in a block, that block (a later block replaces an earlier
// one: the scan found it again after a reorg; the mempool never replaces
// a block); and the transactions
// found conflicting with a watched one (a conflict in a block replaces
// one in the mempool, never the reverse).
func (s Store) RecordBitcoinScan(ctx context.Context, network string, found btcscan.Found, now time.Time) error {
	if len(found.Outputs) == 0 && len(found.Conflicts) == 0 {
		return nil
	}
	type seen struct {
		first   btcscan.Output
		outputs []chainwatch.BitcoinOutput
	}
	var order []chainhash.Hash
	byTx := map[chainhash.Hash]*seen{}
	for _, o := range found.Outputs {
		t := byTx[o.TxID]
		if t == nil {
			t = &seen{}
			byTx[o.TxID] = t
			order = append(order, o.TxID)
		}
		switch {
		case t.outputs == nil || o.Block.Height > 0 && t.first.Block != o.Block:
			// First seen, or seen again in a later block of the scan:
			// that block's sighting is the one recorded.
			t.first, t.outputs = o, nil
		case t.first.Block != o.Block:
			continue // in the mempool after a block of the scan: the block's sighting stands
		}
		t.outputs = append(t.outputs, chainwatch.BitcoinOutput{Vout: o.Vout, Address: o.Address, Sats: o.Sats})
	}
	return s.h.WithTx(ctx, func(tx pgx.Tx) error {
		for _, id := range order {
			t := byTx[id]
			o := t.first
			spends := make([]string, len(o.Spends))
			for i, op := range o.Spends {
				spends[i] = op.String()
			}
			outputs, err := json.Marshal(t.outputs)
			if err != nil {
				return err
			}
			var hash *string
			var height *int64
			var at *time.Time
			if o.Block.Height > 0 {
				h, t := o.Block.Hash.String(), time.Unix(o.Block.Time, 0).UTC()
				hash, height, at = &h, &o.Block.Height, &t
			}
			if _, err := tx.Exec(ctx, `INSERT INTO bitcoin_transactions (network, txid, outputs, spends, block_hash,
					block_height, block_time, first_seen_at)
				VALUES ($1,$2,$3,$4,$5,$6,$7,$8)
				ON CONFLICT (network, txid) DO UPDATE SET
					block_hash = coalesce(excluded.block_hash, bitcoin_transactions.block_hash),
					block_height = coalesce(excluded.block_height, bitcoin_transactions.block_height),
					block_time = coalesce(excluded.block_time, bitcoin_transactions.block_time)`,
				network, id.String(), outputs, spends, hash, height, at, now); err != nil {
				return err
			}
		}
		for _, c := range found.Conflicts {
			if _, err := tx.Exec(ctx, `UPDATE bitcoin_transactions SET conflicted_by = $3, conflict_mined = $4
				WHERE network = $1 AND txid = $2 AND (conflicted_by IS NULL OR $4 AND NOT conflict_mined)`,
				network, c.TxID.String(), c.By.String(), c.Block.Height > 0); err != nil {
				return err
			}
		}
		return nil
	})
}

// BitcoinSpends tells which of outpoints the watched transactions of a
// network spend, and which transaction spends each: the Spends of a
// Bitcoin scan's btcscan.Watch.
func (s Store) BitcoinSpends(ctx context.Context, network string, outpoints []wire.OutPoint) (map[wire.OutPoint]chainhash.Hash, error) {
	keys := make([]string, len(outpoints))
	for i, op := range outpoints {
		keys[i] = op.String()
	}
	rows, err := s.h.Pool.Query(ctx, `SELECT t.txid, s FROM bitcoin_transactions t, unnest(t.spends) s
		WHERE t.network = $1 AND t.spends && $2::text[] AND s = ANY($2::text[])`, network, keys)
	if err != nil {
		return nil, err
	}
	out := map[wire.OutPoint]chainhash.Hash{}
	var txid, spent string
	_, err = pgx.ForEachRow(rows, []any{&txid, &spent}, func() error {
		id, err := chainhash.NewHashFromStr(txid)
		if err != nil {
			return err
		}
		op, err := parseOutPoint(spent)
		if err != nil {
			return err
		}
		out[op] = *id
		return nil
	})
	return out, err
}

// parseOutPoint reads wire.OutPoint's String form, txid:vout.
func parseOutPoint(s string) (wire.OutPoint, error) {
	id, vout, ok := strings.Cut(s, ":")
	h, err := chainhash.NewHashFromStr(id)
	n, nerr := strconv.ParseUint(vout, 10, 32)
	if !ok || err != nil || nerr != nil {
		return wire.OutPoint{}, fmt.Errorf("stored outpoint %q", s)
	}
	return wire.OutPoint{Hash: *h, Index: uint32(n)}, nil
}

// BitcoinSeen returns what a network's scans saw of a transaction; false
// when they saw none of it.
func (s Store) BitcoinSeen(ctx context.Context, network string, txid chainhash.Hash) (chainwatch.BitcoinSeen, bool, error) {
	var hash, conflict *string
	var height *int64
	var at *time.Time
	var seen chainwatch.BitcoinSeen
	var outputs []byte
	var spends []string
	err := s.h.Pool.QueryRow(ctx, `SELECT outputs, block_hash, block_height, block_time, conflicted_by, conflict_mined, spends
		FROM bitcoin_transactions WHERE network = $1 AND txid = $2`, network, txid.String()).
		Scan(&outputs, &hash, &height, &at, &conflict, &seen.ConflictMined, &spends)
	if err == pgx.ErrNoRows {
		return seen, false, nil
	}
	if err != nil {
		return seen, false, err
	}
	if err := json.Unmarshal(outputs, &seen.Outputs); err != nil {
		return seen, false, err
	}
	for _, sp := range spends {
		op, err := parseOutPoint(sp)
		if err != nil {
			return seen, false, err
		}
		seen.Spends = append(seen.Spends, op)
	}
	if hash != nil {
		h, err := chainhash.NewHashFromStr(*hash)
		if err != nil {
			return seen, false, err
		}
		seen.Block = btcscan.Block{Height: *height, Hash: *h, Time: at.Unix()}
	}
	if conflict != nil {
		h, err := chainhash.NewHashFromStr(*conflict)
		if err != nil {
			return seen, false, err
		}
		seen.ConflictedBy = *h
	}
	return seen, true, nil
}

// BitcoinSessions returns, by address, the sessions whose Bitcoin
// deposit addresses are among addresses: what they ask and the rates they
// quoted set how deep a payment to them must be to be final.
func (s Store) BitcoinSessions(ctx context.Context, addresses []string) (map[string]payment.Session, error) {
	rows, err := s.h.Pool.Query(ctx, `WITH b AS (SELECT address AS btc_address, session_id FROM bitcoin_deposit_addresses
		WHERE address = ANY($1)) SELECT `+checkout.SessionColumns+`, b.btc_address FROM checkout_sessions JOIN b ON b.session_id = id`, addresses)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]payment.Session{}
	for rows.Next() {
		var address string
		cs, err := checkout.ScanSessionWith(rows, &address)
		if err != nil {
			return nil, err
		}
		out[address] = cs
	}
	return out, rows.Err()
}
