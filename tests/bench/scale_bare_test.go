package bench

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The bare handler's checkout sessions: the SQL of store/sessions.go and
// store/list.go, pgx scanning into a flat struct and encoding/json. The
// transaction routes are bareHandler's.

// sessionColumns is store.sessionColumns, copied.
const sessionColumns = `id, token_hash, project_id, payment_plan_id, is_live, status, email, metadata,
	amount_usd::text, amount_paid_usd::text, deposit_address, payment_options, quote_expires_at,
	expires_at, completed_at, exception, created_at, updated_at, late_until, deposit_index, version, resolution, shared_recipient`

const (
	// store.GetSession, then store.SessionTransactions
	getSessionSQL = `SELECT ` + sessionColumns + ` FROM checkout_sessions
		WHERE id = $1 AND project_id = $2 AND is_live = $3`
	sessionTxSQL = `SELECT ` + txColumns + ` FROM transactions WHERE checkout_session_id = $1 OR assigned_session_id = $1
		ORDER BY created_at, log_index, id`
	// store.list for sessions: the total from list_counts, then the page
	sessionPageSQL       = `SELECT ` + sessionColumns + ` FROM checkout_sessions WHERE project_id = $1 AND is_live = $2 ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4`
	sessionPageStatusSQL = `SELECT ` + sessionColumns + ` FROM checkout_sessions WHERE project_id = $1 AND is_live = $2 AND status = $3 ORDER BY created_at DESC, id DESC LIMIT $4 OFFSET $5`
)

type bareSession struct {
	ID              string          `json:"id"`
	TokenHash       string          `json:"-"`
	ProjectID       string          `json:"projectId"`
	PaymentPlanID   string          `json:"paymentPlanId"`
	IsLive          bool            `json:"isLive"`
	Status          string          `json:"status"`
	Email           string          `json:"email"`
	Metadata        json.RawMessage `json:"metadata"`
	AmountUSD       string          `json:"amountUsd"`
	AmountPaidUSD   string          `json:"amountPaidUsd"`
	DepositAddress  string          `json:"depositAddress"`
	PaymentOptions  json.RawMessage `json:"paymentOptions"`
	QuoteExpiresAt  time.Time       `json:"quoteExpiresAt"`
	ExpiresAt       time.Time       `json:"expiresAt"`
	CompletedAt     *time.Time      `json:"completedAt"`
	Exception       string          `json:"exception"`
	CreatedAt       time.Time       `json:"createdAt"`
	UpdatedAt       time.Time       `json:"updatedAt"`
	LateUntil       *time.Time      `json:"lateUntil"`
	DepositIndex    *int64          `json:"depositIndex"`
	Version         int             `json:"-"`
	Resolution      string          `json:"resolution"`
	SharedRecipient bool            `json:"sharedRecipient"`
	Transactions    []bareTx        `json:"transactions,omitempty"`
}

func scanBareSession(row pgx.Row) (bareSession, error) {
	var s bareSession
	err := row.Scan(&s.ID, &s.TokenHash, &s.ProjectID, &s.PaymentPlanID, &s.IsLive, &s.Status, &s.Email, &s.Metadata,
		&s.AmountUSD, &s.AmountPaidUSD, &s.DepositAddress, &s.PaymentOptions, &s.QuoteExpiresAt, &s.ExpiresAt,
		&s.CompletedAt, &s.Exception, &s.CreatedAt, &s.UpdatedAt, &s.LateUntil, &s.DepositIndex, &s.Version,
		&s.Resolution, &s.SharedRecipient)
	return s, err
}

// bareScaleHandler serves the transaction routes of bareHandler and the
// checkout session ones, in the sandbox, with no authentication.
func bareScaleHandler(pool *pgxpool.Pool) http.Handler {
	tx := bareHandler(pool, false)
	mux := http.NewServeMux()
	mux.Handle("GET /api/v1/projects/{projectId}/transactions", tx)
	mux.Handle("GET /api/v1/projects/{projectId}/transactions/{transactionId}", tx)
	fail := func(w http.ResponseWriter, err error) { http.Error(w, err.Error(), http.StatusInternalServerError) }
	writeJSON := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	mux.HandleFunc("GET /api/v1/projects/{projectId}/checkout-sessions/{sessionId}", func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		s, err := scanBareSession(pool.QueryRow(ctx, getSessionSQL, r.PathValue("sessionId"), r.PathValue("projectId"), false))
		if err != nil {
			fail(w, err)
			return
		}
		rows, err := pool.Query(ctx, sessionTxSQL, s.ID)
		if err != nil {
			fail(w, err)
			return
		}
		if s.Transactions, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (bareTx, error) { return scanBare(r) }); err != nil {
			fail(w, err)
			return
		}
		writeJSON(w, s)
	})
	mux.HandleFunc("GET /api/v1/projects/{projectId}/checkout-sessions", func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		count, page, args := countSQL, sessionPageSQL, []any{r.PathValue("projectId"), false}
		if status := r.URL.Query().Get("status"); status != "" {
			count, page, args = countStatusSQL, sessionPageStatusSQL, append(args, status)
		}
		var total int
		if err := pool.QueryRow(ctx, count, append([]any{"checkout_sessions"}, args...)...).Scan(&total); err != nil {
			fail(w, err)
			return
		}
		rows, err := pool.Query(ctx, page, append(args, 20, 0)...)
		if err != nil {
			fail(w, err)
			return
		}
		items, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (bareSession, error) { return scanBareSession(r) })
		if err != nil {
			fail(w, err)
			return
		}
		writeJSON(w, struct {
			Items []bareSession `json:"items"`
			Total int           `json:"total"`
		}{items, total})
	})
	return mux
}
