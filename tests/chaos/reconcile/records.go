package reconcile

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/jackc/pgx/v5"
)

// Option is one asset a session accepts, with the amount due in it.
type Option struct {
	AssetID string
	Token   common.Address // zero for the native coin
	Due     *big.Int       // base units
}

// Session is a checkout session as the engine recorded it.
type Session struct {
	ID             string
	Status         string
	Exception      string
	DepositAddress common.Address
	// BitcoinAddress is the session's Bitcoin deposit address, if it has
	// one. The run's sessions that have one accept bitcoin alone, and are
	// reconciled against the Bitcoin node.
	BitcoinAddress string
	PaidUSD        *big.Rat
	Options        []Option
	ExpiresAt      time.Time
	LateUntil      time.Time
	Version        int
}

// option returns the session's option for a transfer's asset.
func (s Session) option(token common.Address) (Option, bool) {
	for _, o := range s.Options {
		if o.Token == token {
			return o, true
		}
	}
	return Option{}, false
}

// Tx is one row of the engine's transactions table.
type Tx struct {
	ID        string
	SessionID string
	Status    string
	ChainID   int64
	TxHash    string
	LogIndex  int
	To        string
	AssetID   string
	Amount    *big.Int
	AmountUSD *big.Rat
	BlockHash string
	Version   int
	History   []string // statuses in order
}

// Refund is one row of the engine's refunds table: money out.
type Refund struct {
	ID        string
	SessionID string
	Status    string
	To        common.Address
	Token     common.Address // zero for the native coin
	Amount    *big.Int
	TxHash    string
	Version   int
}

// Key is the row's transfer identity, as Transfer.Key.
func (t Tx) Key() string { return txKey(t.TxHash, t.LogIndex) }

// Event is one recorded event, with the version and status its data carries.
type Event struct {
	ID          string
	ObjectID    string
	Type        string
	Version     int
	DataVersion int
	DataStatus  string
}

// Records are the engine's records of one project.
type Records struct {
	CompleteOn   string
	Tolerance    *big.Rat
	Sessions     []Session
	Transactions []Tx
	Refunds      []Refund
	// Payouts are the payouts table's rows, as refunds: SessionID holds
	// the payout's batch.
	Payouts []Refund
	// Batches are the payout batches' statuses and versions, by ID.
	Batches map[string]Batch
	Events  []Event
	// PlanVersions are the project's plans' versions, by ID.
	PlanVersions map[string]int
	// FirstSeen is when the engine's scans first saw each of the
	// project's bitcoin payments' transactions (in the mempool or a
	// block), by transaction ID.
	FirstSeen map[string]time.Time
}

// Batch is a payout batch's status and version.
type Batch struct {
	Status  string
	Version int
}

// Querier is what ReadRecords needs of a database connection or pool.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// ReadRecords reads a project's sessions, transactions, refunds, plans and
// events.
func ReadRecords(ctx context.Context, db Querier, projectID string) (*Records, error) {
	r := &Records{PlanVersions: map[string]int{}}
	var tolerance string
	if err := db.QueryRow(ctx, `SELECT complete_on, underpayment_tolerance_percent::text FROM projects WHERE id = $1`,
		projectID).Scan(&r.CompleteOn, &tolerance); err != nil {
		return nil, fmt.Errorf("reconcile: project: %w", err)
	}
	var ok bool
	if r.Tolerance, ok = new(big.Rat).SetString(tolerance); !ok {
		return nil, fmt.Errorf("reconcile: project tolerance %q", tolerance)
	}

	rows, err := db.Query(ctx, `SELECT id, status, exception, deposit_address, COALESCE(b.address, ''), amount_paid_usd::text,
		payment_options, expires_at, late_until, version
		FROM checkout_sessions s LEFT JOIN bitcoin_deposit_addresses b ON b.session_id = s.id
		WHERE s.project_id = $1 ORDER BY id`, projectID)
	if err != nil {
		return nil, fmt.Errorf("reconcile: sessions: %w", err)
	}
	r.Sessions, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (Session, error) {
		var s Session
		var addr, paid string
		var options []byte
		var lateUntil *time.Time
		if err := row.Scan(&s.ID, &s.Status, &s.Exception, &addr, &s.BitcoinAddress, &paid, &options, &s.ExpiresAt, &lateUntil,
			&s.Version); err != nil {
			return s, err
		}
		s.DepositAddress = common.HexToAddress(addr)
		if lateUntil != nil {
			s.LateUntil = *lateUntil
		}
		var ok bool
		if s.PaidUSD, ok = new(big.Rat).SetString(paid); !ok {
			return s, fmt.Errorf("session %s: amount paid %q", s.ID, paid)
		}
		var opts []struct {
			AssetDefinitionID string `json:"assetDefinitionId"`
			TokenAddress      string `json:"tokenAddress"`
			AmountBaseUnits   string `json:"amountBaseUnits"`
		}
		if err := json.Unmarshal(options, &opts); err != nil {
			return s, fmt.Errorf("session %s: payment options: %w", s.ID, err)
		}
		for _, o := range opts {
			due, ok := new(big.Int).SetString(o.AmountBaseUnits, 10)
			if !ok || due.Sign() <= 0 {
				return s, fmt.Errorf("session %s: amount due %q in %s", s.ID, o.AmountBaseUnits, o.AssetDefinitionID)
			}
			opt := Option{AssetID: o.AssetDefinitionID, Due: due}
			if o.TokenAddress != "" {
				opt.Token = common.HexToAddress(o.TokenAddress)
			}
			s.Options = append(s.Options, opt)
		}
		return s, nil
	})
	if err != nil {
		return nil, fmt.Errorf("reconcile: sessions: %w", err)
	}

	rows, err = db.Query(ctx, `SELECT id, checkout_session_id, status, chain_id, tx_hash, COALESCE(log_index, -2), to_address,
		asset_definition_id, amount_base_units::text, amount_usd::text, block_hash, version, status_history
		FROM transactions WHERE project_id = $1 ORDER BY id`, projectID)
	if err != nil {
		return nil, fmt.Errorf("reconcile: transactions: %w", err)
	}
	r.Transactions, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (Tx, error) {
		var t Tx
		var amount, usd string
		var history []byte
		if err := row.Scan(&t.ID, &t.SessionID, &t.Status, &t.ChainID, &t.TxHash, &t.LogIndex, &t.To, &t.AssetID,
			&amount, &usd, &t.BlockHash, &t.Version, &history); err != nil {
			return t, err
		}
		var ok bool
		if t.Amount, ok = new(big.Int).SetString(amount, 10); !ok {
			return t, fmt.Errorf("transaction %s: amount %q", t.ID, amount)
		}
		if t.AmountUSD, ok = new(big.Rat).SetString(usd); !ok {
			return t, fmt.Errorf("transaction %s: amount in USD %q", t.ID, usd)
		}
		var changes []struct {
			Status string `json:"status"`
		}
		if err := json.Unmarshal(history, &changes); err != nil {
			return t, fmt.Errorf("transaction %s: status history: %w", t.ID, err)
		}
		for _, c := range changes {
			t.History = append(t.History, c.Status)
		}
		t.TxHash = strings.ToLower(t.TxHash)
		return t, nil
	})
	if err != nil {
		return nil, fmt.Errorf("reconcile: transactions: %w", err)
	}

	if r.Refunds, err = readMoneyOut(ctx, db, "refunds", "checkout_session_id", projectID); err != nil {
		return nil, err
	}
	if r.Payouts, err = readMoneyOut(ctx, db, "payouts", "batch_id", projectID); err != nil {
		return nil, err
	}
	rows, err = db.Query(ctx, `SELECT id, status, version FROM payout_batches WHERE project_id = $1`, projectID)
	if err != nil {
		return nil, fmt.Errorf("reconcile: payout batches: %w", err)
	}
	r.Batches = map[string]Batch{}
	var id string
	var b Batch
	if _, err := pgx.ForEachRow(rows, []any{&id, &b.Status, &b.Version}, func() error { r.Batches[id] = b; return nil }); err != nil {
		return nil, fmt.Errorf("reconcile: payout batches: %w", err)
	}

	rows, err = db.Query(ctx, `SELECT id, version FROM payment_plans WHERE project_id = $1`, projectID)
	if err != nil {
		return nil, fmt.Errorf("reconcile: plans: %w", err)
	}
	plans, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (struct {
		ID      string
		Version int
	}, error) {
		var p struct {
			ID      string
			Version int
		}
		err := row.Scan(&p.ID, &p.Version)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("reconcile: plans: %w", err)
	}
	for _, p := range plans {
		r.PlanVersions[p.ID] = p.Version
	}

	rows, err = db.Query(ctx, `SELECT txid, first_seen_at FROM bitcoin_transactions
		WHERE txid IN (SELECT tx_hash FROM transactions WHERE project_id = $1 AND chain_id = 0)`, projectID)
	if err != nil {
		return nil, fmt.Errorf("reconcile: bitcoin transactions: %w", err)
	}
	r.FirstSeen = map[string]time.Time{}
	var txid string
	var at time.Time
	if _, err := pgx.ForEachRow(rows, []any{&txid, &at}, func() error { r.FirstSeen[strings.ToLower(txid)] = at; return nil }); err != nil {
		return nil, fmt.Errorf("reconcile: bitcoin transactions: %w", err)
	}

	// The events of webhook endpoints (webhook.test, webhook_endpoint.*)
	// describe the delivery of events, not payments.
	rows, err = db.Query(ctx, `SELECT id, object_id, type, version, data FROM events
		WHERE project_id = $1 AND type NOT LIKE 'webhook%' ORDER BY object_id, version, id`, projectID)
	if err != nil {
		return nil, fmt.Errorf("reconcile: events: %w", err)
	}
	r.Events, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (Event, error) {
		var e Event
		var data []byte
		if err := row.Scan(&e.ID, &e.ObjectID, &e.Type, &e.Version, &data); err != nil {
			return e, err
		}
		var d struct {
			Version int    `json:"version"`
			Status  string `json:"status"`
		}
		if err := json.Unmarshal(data, &d); err != nil {
			return e, fmt.Errorf("event %s: data: %w", e.ID, err)
		}
		e.DataVersion, e.DataStatus = d.Version, d.Status
		return e, nil
	})
	if err != nil {
		return nil, fmt.Errorf("reconcile: events: %w", err)
	}
	return r, nil
}

// readMoneyOut reads the refunds or the payouts of a project (table), the
// owner column (a refund's session, a payout's batch) as SessionID.
func readMoneyOut(ctx context.Context, db Querier, table, owner, projectID string) ([]Refund, error) {
	rows, err := db.Query(ctx, `SELECT id, `+owner+`, status, to_address, token_address, amount_base_units::text,
		tx_hash, version FROM `+table+` WHERE project_id = $1 ORDER BY id`, projectID)
	if err != nil {
		return nil, fmt.Errorf("reconcile: %s: %w", table, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Refund, error) {
		var f Refund
		var to, token, amount string
		if err := row.Scan(&f.ID, &f.SessionID, &f.Status, &to, &token, &amount, &f.TxHash, &f.Version); err != nil {
			return f, err
		}
		f.To, f.TxHash = common.HexToAddress(to), strings.ToLower(f.TxHash)
		if token != "" {
			f.Token = common.HexToAddress(token)
		}
		var ok bool
		if f.Amount, ok = new(big.Int).SetString(amount, 10); !ok {
			return f, fmt.Errorf("%s %s: amount %q", table, f.ID, amount)
		}
		return f, nil
	})
	if err != nil {
		return nil, fmt.Errorf("reconcile: %s: %w", table, err)
	}
	return out, nil
}
