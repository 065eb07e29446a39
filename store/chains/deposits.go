package chains

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store/internal/db"
)

// SetDepositKey sets a project's extended public key for an environment.
// The index counter is kept, so addresses already handed out are never
// handed out again. identity is the key's (deposit.Key.Identity): it is
// claimed for the project environment for good first, and a key whose
// identity another project or environment has claimed, now or before, is
// refused with payment.ErrConflict. Of two setting one identity at once,
// one wins.
func (s Store) SetDepositKey(ctx context.Context, projectID string, isLive bool, xpub, identity string, now time.Time) error {
	return s.h.WithTx(ctx, func(tx pgx.Tx) error {
		if err := claimKeyIdentity(ctx, tx, projectID, isLive, identity, now); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO project_deposit_keys (project_id, is_live, xpub, key_identity, created_at)
			VALUES ($1,$2,$3,$4,$5) ON CONFLICT (project_id, is_live) DO UPDATE SET xpub = EXCLUDED.xpub, key_identity = EXCLUDED.key_identity`,
			projectID, isLive, xpub, identity, now)
		return db.MapErr(err)
	})
}

// SetBitcoinKey sets a project's Bitcoin account key for an environment,
// with the kind of address it derives (btckeys.Kind), as SetDepositKey
// sets the EVM key: the index counter is kept, and the key's identity is
// claimed for the project environment in the same space as the EVM
// keys', so an account key serves one project environment whichever
// chains it is given for.
func (s Store) SetBitcoinKey(ctx context.Context, projectID string, isLive bool, xpub, addressType, identity string, now time.Time) error {
	return s.h.WithTx(ctx, func(tx pgx.Tx) error {
		if err := claimKeyIdentity(ctx, tx, projectID, isLive, identity, now); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO project_bitcoin_keys (project_id, is_live, xpub, address_type, key_identity, created_at)
			VALUES ($1,$2,$3,$4,$5,$6) ON CONFLICT (project_id, is_live) DO UPDATE
			SET xpub = EXCLUDED.xpub, address_type = EXCLUDED.address_type, key_identity = EXCLUDED.key_identity`,
			projectID, isLive, xpub, addressType, identity, now)
		return db.MapErr(err)
	})
}

// claimKeyIdentity binds a key identity to the project environment for
// good, or fails with payment.ErrConflict when another project or
// environment holds it. Of two claiming one identity at once, one wins.
func claimKeyIdentity(ctx context.Context, tx pgx.Tx, projectID string, isLive bool, identity string, now time.Time) error {
	// A concurrent claim of the identity holds this insert until it ends;
	// the select then sees the claim that won.
	if _, err := tx.Exec(ctx, `INSERT INTO deposit_key_identities (key_identity, project_id, is_live, created_at)
		VALUES ($1,$2,$3,$4) ON CONFLICT (key_identity) DO NOTHING`, identity, projectID, isLive, now); err != nil {
		return db.MapErr(err)
	}
	var owner string
	var ownerLive bool
	if err := tx.QueryRow(ctx, `SELECT project_id, is_live FROM deposit_key_identities WHERE key_identity = $1`,
		identity).Scan(&owner, &ownerLive); err != nil {
		return db.MapErr(err)
	}
	if owner != projectID || ownerLive != isLive {
		return payment.ErrConflict
	}
	return nil
}

// DepositKeyClaim is the project environment a key identity is bound to.
type DepositKeyClaim struct {
	ProjectID string
	IsLive    bool
}

// DepositKeyClaims returns the project environment each key identity
// named is bound to (SetDepositKey); one nobody claimed is left out.
func (s Store) DepositKeyClaims(ctx context.Context, identities []string) (map[string]DepositKeyClaim, error) {
	rows, err := s.h.Pool.Query(ctx, `SELECT key_identity, project_id, is_live FROM deposit_key_identities WHERE key_identity = ANY($1)`, identities)
	if err != nil {
		return nil, err
	}
	out := map[string]DepositKeyClaim{}
	var id string
	var c DepositKeyClaim
	_, err = pgx.ForEachRow(rows, []any{&id, &c.ProjectID, &c.IsLive}, func() error {
		out[id] = c
		return nil
	})
	return out, err
}

// DepositKey returns a project's extended public key for an environment
// and the number of indexes it has handed out; "" when none is set.
func (s Store) DepositKey(ctx context.Context, projectID string, isLive bool) (xpub string, issued int64, err error) {
	err = s.h.Pool.QueryRow(ctx, `SELECT xpub, next_index FROM project_deposit_keys WHERE project_id = $1 AND is_live = $2`,
		projectID, isLive).Scan(&xpub, &issued)
	if err == pgx.ErrNoRows {
		return "", 0, nil
	}
	return xpub, issued, db.MapErr(err)
}

// BitcoinKey returns a project's Bitcoin account key for an environment,
// the kind of address it derives and the number of indexes it has handed
// out; "" when none is set.
func (s Store) BitcoinKey(ctx context.Context, projectID string, isLive bool) (xpub, addressType string, issued int64, err error) {
	err = s.h.Pool.QueryRow(ctx, `SELECT xpub, address_type, next_index FROM project_bitcoin_keys WHERE project_id = $1 AND is_live = $2`,
		projectID, isLive).Scan(&xpub, &addressType, &issued)
	if err == pgx.ErrNoRows {
		return "", "", 0, nil
	}
	return xpub, addressType, issued, db.MapErr(err)
}

// NextDepositIndex takes the next unused derivation index of a project's
// deposit key and returns the key with it.
func (s Store) NextDepositIndex(ctx context.Context, projectID string, isLive bool) (xpub string, index int64, err error) {
	err = s.h.Pool.QueryRow(ctx, `UPDATE project_deposit_keys SET next_index = next_index + 1
		WHERE project_id = $1 AND is_live = $2 RETURNING xpub, next_index - 1`, projectID, isLive).Scan(&xpub, &index)
	return xpub, index, db.MapErr(err)
}

// TakenIndexes are the next derivation indexes TakeIndexes took, each
// with its key: of the deposit key (EVM) and of the Bitcoin account key,
// as asked.
type TakenIndexes struct {
	DepositKey   string
	DepositIndex int64
	BitcoinKey   string
	// BitcoinAddressType is the kind of address the Bitcoin key derives.
	BitcoinAddressType string
	BitcoinIndex       int64
}

// The keys TakeIndexes found missing (both payment.ErrNotFound).
var (
	ErrNoDepositKey = fmt.Errorf("no deposit key: %w", payment.ErrNotFound)
	ErrNoBitcoinKey = fmt.Errorf("no Bitcoin account key: %w", payment.ErrNotFound)
)

// TakeIndexes takes the next index of a project environment's deposit
// key (evm) and of its Bitcoin account key (bitcoin), in one database
// transaction: a session that needs both takes both or neither, so a
// missing key leaves no index behind. ErrNoDepositKey or ErrNoBitcoinKey
// when an asked key is not set.
func (s Store) TakeIndexes(ctx context.Context, projectID string, isLive, evm, bitcoin bool) (TakenIndexes, error) {
	var t TakenIndexes
	err := s.h.WithTx(ctx, func(tx pgx.Tx) error {
		if evm {
			err := tx.QueryRow(ctx, `UPDATE project_deposit_keys SET next_index = next_index + 1
				WHERE project_id = $1 AND is_live = $2 RETURNING xpub, next_index - 1`, projectID, isLive).
				Scan(&t.DepositKey, &t.DepositIndex)
			if err == pgx.ErrNoRows {
				return ErrNoDepositKey
			} else if err != nil {
				return db.MapErr(err)
			}
		}
		if bitcoin {
			err := tx.QueryRow(ctx, `UPDATE project_bitcoin_keys SET next_index = next_index + 1
				WHERE project_id = $1 AND is_live = $2 RETURNING xpub, address_type, next_index - 1`, projectID, isLive).
				Scan(&t.BitcoinKey, &t.BitcoinAddressType, &t.BitcoinIndex)
			if err == pgx.ErrNoRows {
				return ErrNoBitcoinKey
			} else if err != nil {
				return db.MapErr(err)
			}
		}
		return nil
	})
	return t, err
}

// ListDepositAddresses lists the principal's used deposit indexes, of its
// EVM deposit key or its Bitcoin account key (q.Chain), in index order,
// filtered by q (the session's status and creation time, and whether the
// address was paid), each with what it received.
func (s Store) ListDepositAddresses(ctx context.Context, p payment.Principal, q payment.DepositQuery) ([]payment.DepositAddress, int, error) {
	used := `(SELECT id, status, deposit_index, deposit_address, created_at, project_id, is_live, late_until,
		deposit_index - coalesce(lag(deposit_index) OVER (ORDER BY deposit_index), -1) - 1 AS gap_before
		FROM checkout_sessions WHERE project_id = $1 AND is_live = $2 AND deposit_index IS NOT NULL) u`
	// A transaction stays on the session whose address it paid (an
	// assignment names another session beside it), so the session's
	// transactions of the address's kind of chain are its address's (a
	// session offering both has an EVM and a Bitcoin address; Bitcoin
	// transactions are chain 0).
	paid := `t.checkout_session_id = u.id AND t.chain_id <> 0 AND t.status IN ('confirmed', 'finalized')`
	if q.Chain == payment.ChainBitcoin {
		used = `(SELECT c.id, c.status, b.derivation_index AS deposit_index, b.address AS deposit_address, c.created_at,
			c.project_id, c.is_live, c.late_until,
			b.derivation_index - coalesce(lag(b.derivation_index) OVER (ORDER BY b.derivation_index), -1) - 1 AS gap_before
			FROM bitcoin_deposit_addresses b JOIN checkout_sessions c ON c.id = b.session_id
			WHERE b.project_id = $1 AND b.is_live = $2) u`
		paid = `t.checkout_session_id = u.id AND t.chain_id = 0 AND t.status IN ('confirmed', 'finalized')`
	}
	f := db.NewFilter(p, q.ListQuery, "status") // its first two arguments are used's $1 and $2
	if q.Funded {
		f.Where = append(f.Where, `EXISTS (SELECT 1 FROM transactions t WHERE `+paid+`)`)
	}
	where := strings.Join(f.Where, " AND ")
	var total int
	if err := s.h.Pool.QueryRow(ctx, "SELECT count(*) FROM "+used+" WHERE "+where, f.Args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count deposit addresses: %w", err)
	}
	outputs := `'[]'::jsonb`
	if q.Chain == payment.ChainBitcoin {
		// And the change of the project's own money out back at the
		// address (an output of a mined transaction that spends an output
		// recorded at a deposit address of the same project environment:
		// activities' bitcoinOutgoing), which a refund, a payout or a
		// sweep spends as well.
		outputs = `coalesce((SELECT jsonb_agg(x ORDER BY x->>0, (x->>1)::bigint) FROM (
			SELECT jsonb_build_array(t.tx_hash, t.log_index, t.amount_base_units::text, t.status) x FROM transactions t WHERE ` + paid + `
			UNION ALL
			SELECT jsonb_build_array(bt.txid, (o->>'vout')::bigint, o->>'sats', 'change')
			FROM bitcoin_transactions bt, jsonb_array_elements(bt.outputs) o
			WHERE bt.outputs @> jsonb_build_array(jsonb_build_object('address', u.deposit_address))
				AND o->>'address' = u.deposit_address AND bt.block_height IS NOT NULL
				AND NOT EXISTS (SELECT 1 FROM transactions t WHERE t.chain_id = 0 AND t.tx_hash = bt.txid AND t.log_index = (o->>'vout')::bigint)
				AND EXISTS (SELECT 1 FROM unnest(bt.spends) sp
					JOIN bitcoin_transactions pt ON pt.network = bt.network AND pt.txid = split_part(sp, ':', 1)
					CROSS JOIN jsonb_array_elements(pt.outputs) po
					JOIN bitcoin_deposit_addresses b ON b.address = po->>'address'
					WHERE po->>'vout' = split_part(sp, ':', 2) AND b.project_id = u.project_id AND b.is_live = u.is_live)
			) y), '[]')`
	}
	args := append(f.Args, q.Limit, q.Offset())
	rows, err := s.h.Pool.Query(ctx, fmt.Sprintf(`SELECT deposit_index, deposit_address, id, status, created_at, gap_before, late_until,
		coalesce((SELECT jsonb_agg(jsonb_build_array(asset, network, amount::text) ORDER BY asset)
			FROM (SELECT t.asset_definition_id AS asset, t.network, sum(t.amount_base_units) AS amount
				FROM transactions t WHERE %s GROUP BY 1, 2) r), '[]'), %s
		FROM %s WHERE %s ORDER BY deposit_index LIMIT $%d OFFSET $%d`, paid, outputs, used, where, len(args)-1, len(args)), args...)
	if err != nil {
		return nil, 0, fmt.Errorf("list deposit addresses: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (payment.DepositAddress, error) {
		var d payment.DepositAddress
		var received [][3]string
		var outputs [][4]any
		err := row.Scan(&d.Index, &d.Address, &d.SessionID, &d.Status, &d.CreatedAt, &d.GapBefore, &d.LateUntil, &received, &outputs)
		d.CreatedAt = d.CreatedAt.UTC()
		if d.LateUntil != nil {
			t := d.LateUntil.UTC()
			d.LateUntil = &t
		}
		for _, r := range received {
			d.Received = append(d.Received, payment.Received{AssetID: r[0], Network: r[1], AmountBaseUnits: r[2]})
		}
		for _, o := range outputs {
			txid, _ := o[0].(string)
			vout, _ := o[1].(float64)
			sats, _ := o[2].(string)
			status, _ := o[3].(string)
			d.Outputs = append(d.Outputs, payment.PaidOutput{TxID: txid, Vout: int64(vout), Sats: sats, Status: payment.TransactionStatus(status)})
		}
		return d, err
	})
	return out, total, err
}

// DepositCounter is a deposit key's counter and the highest index a
// recorded session holds (-1: none).
type DepositCounter struct {
	ProjectID string
	IsLive    bool
	Xpub      string
	NextIndex int64
	MaxUsed   int64
}

// DepositCounters lists the deposit keys' counters, of one project or
// (projectID empty) all, with the highest index their sessions hold.
func (s Store) DepositCounters(ctx context.Context, projectID string) ([]DepositCounter, error) {
	rows, err := s.h.Pool.Query(ctx, `SELECT k.project_id, k.is_live, k.xpub, k.next_index,
		coalesce((SELECT max(deposit_index) FROM checkout_sessions c
			WHERE c.project_id = k.project_id AND c.is_live = k.is_live AND c.deposit_index IS NOT NULL), -1)
		FROM project_deposit_keys k WHERE $1 = '' OR k.project_id = $1 ORDER BY k.project_id, k.is_live`, projectID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (DepositCounter, error) {
		var c DepositCounter
		err := row.Scan(&c.ProjectID, &c.IsLive, &c.Xpub, &c.NextIndex, &c.MaxUsed)
		return c, err
	})
}

// BitcoinKeyRow is a project environment's stored Bitcoin account key.
type BitcoinKeyRow struct {
	ProjectID   string
	IsLive      bool
	Xpub        string
	AddressType string
}

// BitcoinKeys lists the Bitcoin account keys of every project.
func (s Store) BitcoinKeys(ctx context.Context) ([]BitcoinKeyRow, error) {
	rows, err := s.h.Pool.Query(ctx, `SELECT project_id, is_live, xpub, address_type FROM project_bitcoin_keys ORDER BY project_id, is_live`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[BitcoinKeyRow])
}

// AdvanceDepositIndex moves a deposit key's counter up to next; it never
// moves it down.
func (s Store) AdvanceDepositIndex(ctx context.Context, projectID string, isLive bool, next int64) error {
	_, err := s.h.Pool.Exec(ctx, `UPDATE project_deposit_keys SET next_index = greatest(next_index, $3)
		WHERE project_id = $1 AND is_live = $2`, projectID, isLive, next)
	return db.MapErr(err)
}

// RecipientCollision is a session's own deposit address that is also a
// payment plan's recipient address (a shared recipient, docs/decisions.md).
type RecipientCollision struct {
	SessionID, SessionProjectID string
	SessionIsLive               bool
	Address                     string
	PlanID, PlanProjectID       string
	PlanIsLive                  bool
}

// RecipientCollisions lists the sessions' own deposit addresses that are
// a plan's recipient address, of any project, those involving projectID
// only when it is not empty.
func (s Store) RecipientCollisions(ctx context.Context, projectID string) ([]RecipientCollision, error) {
	rows, err := s.h.Pool.Query(ctx, `SELECT c.id, c.project_id, c.is_live, c.deposit_address, p.id, p.project_id, p.is_live
		FROM payment_plans p JOIN checkout_sessions c ON lower(c.deposit_address) = lower(p.recipient_address)
			AND c.deposit_address <> '' AND NOT c.shared_recipient
		WHERE p.recipient_address <> '' AND ($1 = '' OR c.project_id = $1 OR p.project_id = $1)
		ORDER BY c.project_id, c.id, p.id`, projectID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (RecipientCollision, error) {
		var r RecipientCollision
		err := row.Scan(&r.SessionID, &r.SessionProjectID, &r.SessionIsLive, &r.Address, &r.PlanID, &r.PlanProjectID, &r.PlanIsLive)
		return r, err
	})
}

// DepositAddressHolder returns a project environment other than
// (projectID, isLive) whose session holds one of addresses as its own
// deposit address; ok is false when none does.
func (s Store) DepositAddressHolder(ctx context.Context, projectID string, isLive bool, addresses []string) (c DepositKeyClaim, ok bool, err error) {
	lower := make([]string, len(addresses))
	for i, a := range addresses {
		lower[i] = strings.ToLower(a)
	}
	err = s.h.Pool.QueryRow(ctx, `SELECT project_id, is_live FROM checkout_sessions
		WHERE lower(deposit_address) = ANY($1) AND deposit_address <> '' AND NOT shared_recipient
			AND (project_id <> $2 OR is_live <> $3) LIMIT 1`, lower, projectID, isLive).Scan(&c.ProjectID, &c.IsLive)
	if err == pgx.ErrNoRows {
		return c, false, nil
	}
	return c, err == nil, err
}
