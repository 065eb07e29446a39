package moneyout

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store/internal/db"
)

// outgoingTable is the refunds' or the payouts' table: the reads both
// make (one item, a list by a condition, by transaction, to check) are
// written once, with the table's name, columns, scan and order as data.
type outgoingTable[T any] struct {
	name    string // "refunds", "payouts": the table, and its reads' errors
	columns string
	scan    func(pgx.Row) (T, error)
	// checkOrder orders the items a reconciliation checks.
	checkOrder string
}

var (
	refundsTable = outgoingTable[payment.Refund]{name: "refunds", columns: refundColumns, scan: scanRefund,
		checkOrder: "created_at, id"}
	payoutsTable = outgoingTable[payment.Payout]{name: "payouts", columns: payoutColumns, scan: scanPayout,
		checkOrder: "created_at, line"}
)

// query reads the items where (a condition and an order) keeps; what
// names the read in its error.
func (t outgoingTable[T]) query(ctx context.Context, q db.Querier, what, where string, args ...any) ([]T, error) {
	rows, err := q.Query(ctx, `SELECT `+t.columns+` FROM `+t.name+` WHERE `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (T, error) { return t.scan(r) })
}

// one reads the item where keeps (ErrNotFound when none).
func (t outgoingTable[T]) one(ctx context.Context, q db.Querier, where string, args ...any) (T, error) {
	return t.scan(q.QueryRow(ctx, `SELECT `+t.columns+` FROM `+t.name+` WHERE `+where, args...))
}

// get reads an item of the principal's project and environment.
func (t outgoingTable[T]) get(ctx context.Context, q db.Querier, p payment.Principal, id string) (T, error) {
	where, args := itemOf(&p, id)
	return t.one(ctx, q, where, args...)
}

// byTxHash reads the items whose recorded transaction is hash.
func (t outgoingTable[T]) byTxHash(ctx context.Context, q db.Querier, hash string) ([]T, error) {
	return t.query(ctx, q, t.name+" by transaction", `tx_hash = $1`, hash)
}

// toCheck reads the items a reconciliation checks against the chain (one
// project's, or every project's for ""): those with a transaction.
func (t outgoingTable[T]) toCheck(ctx context.Context, q db.Querier, projectID string) ([]T, error) {
	return t.query(ctx, q, t.name+" to check",
		`($1 = '' OR project_id = $1) AND status IN ('sent', 'confirmed', 'finalized') ORDER BY `+t.checkOrder, projectID)
}

// itemOf is the condition that selects the item id of the principal's
// project and environment, or of any project when p is nil (its workflow,
// a claim link whose token found it).
func itemOf(p *payment.Principal, id string) (string, []any) {
	if p == nil {
		return `id = $1`, []any{id}
	}
	return `id = $1 AND project_id = $2 AND is_live = $3`, []any{id, p.ProjectID, p.IsLive}
}
