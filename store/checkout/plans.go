package checkout

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store/internal/db"
)

const planColumns = `id, project_id, is_live, title, pricing_model, amount_usd::text, min_amount_usd::text,
	max_amount_usd::text, accepted_asset_policies, redirect_url, merchant_info, expires_at, status, created_at, updated_at, version,
	recipient_address, token_options, quote_ttl_seconds`

// planStatusExpr is a plan's effective status: an active plan past its
// expiresAt reads as expired.
const planStatusExpr = `(CASE WHEN status = 'active' AND expires_at IS NOT NULL AND expires_at <= now() THEN 'expired' ELSE status END)`

// CreatePlan inserts a payment plan with its created event.
func (s Store) CreatePlan(ctx context.Context, p payment.Plan, render db.Render[payment.Plan]) error {
	policies, _ := json.Marshal(p.AcceptedAssetPolicies)
	merchant, _ := json.Marshal(p.MerchantInfo)
	tokenOptions, _ := json.Marshal(p.TokenOptions)
	if p.TokenOptions == nil {
		tokenOptions = []byte("[]")
	}
	return s.h.WithTx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO payment_plans (`+planColumnsInsert+`)
			VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$14,$15,$16,$17)`,
			p.ID, p.ProjectID, p.IsLive, p.Title, p.PricingModel, db.DecString(p.AmountUSD), db.DecString(p.MinAmountUSD),
			db.DecString(p.MaxAmountUSD), policies, p.RedirectURL, merchant, p.ExpiresAt, p.Status, p.CreatedAt,
			p.RecipientAddress, tokenOptions, int64(p.QuoteTTL/time.Second))
		if err != nil {
			return db.MapErr(err)
		}
		return db.InsertEvent(ctx, tx, p.ProjectID, p.IsLive, payment.EventPlanCreated, p.ID, 1, render, p, p.CreatedAt)
	})
}

const planColumnsInsert = `id, project_id, is_live, title, pricing_model, amount_usd, min_amount_usd,
	max_amount_usd, accepted_asset_policies, redirect_url, merchant_info, expires_at, status, created_at, updated_at,
	recipient_address, token_options, quote_ttl_seconds`

// GetPlan returns a plan of the principal's project and environment.
func (s Store) GetPlan(ctx context.Context, p payment.Principal, id string) (payment.Plan, error) {
	return scanPlan(s.h.Pool.QueryRow(ctx, `SELECT `+planColumns+` FROM payment_plans
		WHERE id = $1 AND project_id = $2 AND is_live = $3`, id, p.ProjectID, p.IsLive))
}

// PlanByID returns a plan whatever its project: for the public checkout.
func (s Store) PlanByID(ctx context.Context, id string) (payment.Plan, error) {
	return scanPlan(s.h.Pool.QueryRow(ctx, `SELECT `+planColumns+` FROM payment_plans WHERE id = $1`, id))
}

// ListPlans lists the principal's plans, newest first.
func (s Store) ListPlans(ctx context.Context, p payment.Principal, q payment.ListQuery) ([]payment.Plan, int, error) {
	return db.List(ctx, s.h, "payment_plans", planColumns, db.NewFilter(p, q, planStatusExpr), q, scanPlan)
}

func scanPlan(row pgx.Row) (payment.Plan, error) {
	var p payment.Plan
	var amount, lo, hi *string
	var policies, merchant, tokenOptions []byte
	var ttl int64
	err := row.Scan(&p.ID, &p.ProjectID, &p.IsLive, &p.Title, &p.PricingModel, &amount, &lo, &hi,
		&policies, &p.RedirectURL, &merchant, &p.ExpiresAt, &p.Status, &p.CreatedAt, &p.UpdatedAt, &p.Version,
		&p.RecipientAddress, &tokenOptions, &ttl)
	if err != nil {
		return p, db.MapErr(err)
	}
	p.QuoteTTL = time.Duration(ttl) * time.Second
	if err := json.Unmarshal(tokenOptions, &p.TokenOptions); err != nil {
		return p, err
	}
	p.AmountUSD, p.MinAmountUSD, p.MaxAmountUSD = db.OptDecimal(amount), db.OptDecimal(lo), db.OptDecimal(hi)
	if err := json.Unmarshal(policies, &p.AcceptedAssetPolicies); err != nil {
		return p, err
	}
	if err := json.Unmarshal(merchant, &p.MerchantInfo); err != nil {
		return p, err
	}
	p.ExpiresAt = db.UTCPtr(p.ExpiresAt)
	p.CreatedAt, p.UpdatedAt = p.CreatedAt.UTC(), p.UpdatedAt.UTC()
	return p, nil
}

// UpdatePlan changes one of the principal's plans under a row lock: change
// edits it and returns the event type of the change, or an error to
// abandon it.
func (s Store) UpdatePlan(ctx context.Context, pr payment.Principal, id string, at time.Time, change func(*payment.Plan) (payment.EventType, error), render db.Render[payment.Plan]) (payment.Plan, error) {
	var p payment.Plan
	err := s.h.WithTx(ctx, func(tx pgx.Tx) error {
		var err error
		p, err = scanPlan(tx.QueryRow(ctx, `SELECT `+planColumns+` FROM payment_plans
			WHERE id = $1 AND project_id = $2 AND is_live = $3 FOR UPDATE`, id, pr.ProjectID, pr.IsLive))
		if err != nil {
			return err
		}
		event, err := change(&p)
		if err != nil {
			return err
		}
		p.UpdatedAt = at
		p.Version++
		merchant, _ := json.Marshal(p.MerchantInfo)
		_, err = tx.Exec(ctx, `UPDATE payment_plans SET title = $2, redirect_url = $3, merchant_info = $4, expires_at = $5,
			status = $6, updated_at = $7, version = $8 WHERE id = $1`, id, p.Title, p.RedirectURL, merchant, p.ExpiresAt, p.Status, at, p.Version)
		if err != nil {
			return db.MapErr(err)
		}
		return db.InsertEvent(ctx, tx, p.ProjectID, p.IsLive, event, p.ID, p.Version, render, p, at)
	})
	return p, err
}
