package checkout

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store/internal/db"
)

const SessionColumns = `id, token_hash, project_id, payment_plan_id, is_live, status, email, metadata,
	amount_usd::text, amount_paid_usd::text, deposit_address, payment_options, quote_expires_at,
	expires_at, completed_at, exception, created_at, updated_at, late_until, deposit_index, version, resolution, shared_recipient`

// InsertSession records a new checkout session with its created event. It
// is idempotent: inserting the same session again changes nothing and
// reports no error, so the activity that calls it can be retried.
func (s Store) InsertSession(ctx context.Context, cs payment.Session, render db.Render[payment.Session]) error {
	return s.h.WithTx(ctx, func(tx pgx.Tx) error { return insertSession(ctx, tx, cs, render) })
}

func insertSession(ctx context.Context, tx pgx.Tx, cs payment.Session, render db.Render[payment.Session]) error {
	metadata := []byte(cs.Metadata)
	if len(metadata) == 0 {
		metadata = payment.EmptyMetadata
	}
	options, _ := json.Marshal(cs.PaymentOptions)
	tag, err := tx.Exec(ctx, `INSERT INTO checkout_sessions (id, token_hash, project_id, payment_plan_id,
		is_live, status, email, metadata, amount_usd, amount_paid_usd, deposit_address, payment_options,
		quote_expires_at, expires_at, created_at, updated_at, late_until, deposit_index, version, shared_recipient)
		VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,0,$10,$11,$12,$13,$14,$14,$15,$16,1,$17)
		ON CONFLICT DO NOTHING`,
		cs.ID, cs.TokenHash, cs.ProjectID, cs.PaymentPlanID, cs.IsLive, cs.Status, cs.Email, metadata,
		cs.AmountUSD.String(), cs.DepositAddress, options, cs.QuoteExpiresAt, cs.ExpiresAt, cs.CreatedAt,
		nullTime(cs.LateUntil), cs.DepositIndex, cs.SharedRecipient)
	if err != nil {
		return db.MapErr(err)
	}
	if tag.RowsAffected() == 0 {
		// Recorded before (the API and the session's workflow both
		// record it, at the same time at worst), unless another
		// session holds one of its unique keys.
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM checkout_sessions WHERE id = $1`, cs.ID).Scan(&n); err != nil || n == 1 {
			return db.MapErr(err)
		}
		return &payment.Error{Kind: payment.KindConflict, Message: "another checkout session holds this one's token or deposit index"}
	}
	if cs.DepositAddress != "" && !cs.SharedRecipient {
		// A deposit address is never a verified recipient: under the
		// address's lock, which a claim's verification takes too, so
		// that of the two only the first to commit stands.
		if err := lockAddress(ctx, tx, cs.DepositAddress); err != nil {
			return err
		}
		var owned bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM recipients WHERE address = $1 AND verified_at IS NOT NULL)`,
			strings.ToLower(cs.DepositAddress)).Scan(&owned); err != nil {
			return err
		}
		if owned {
			return ErrDepositIsRecipient
		}
	}
	if cs.BitcoinAddress != "" {
		if cs.BitcoinIndex == nil {
			return fmt.Errorf("session %s: a Bitcoin address without its derivation index", cs.ID)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO bitcoin_deposit_addresses (address, session_id, project_id, is_live,
				derivation_index, created_at) VALUES ($1,$2,$3,$4,$5,$6)`,
			cs.BitcoinAddress, cs.ID, cs.ProjectID, cs.IsLive, *cs.BitcoinIndex, cs.CreatedAt); err != nil {
			return db.MapErr(err)
		}
	}
	cs.Version = 1
	return db.InsertEvent(ctx, tx, cs.ProjectID, cs.IsLive, payment.EventSessionCreated, cs.ID, 1, render, cs, cs.CreatedAt)
}

// UpdateSession changes a session in a database transaction: change gets
// the session as stored and returns the event types its change makes
// (none: nothing is written). Each event takes the session's next version.
// A change already recorded makes no event, so a retried call adds nothing.
func (s Store) UpdateSession(ctx context.Context, id string, at time.Time, change func(*payment.Session) []payment.EventType, render db.Render[payment.Session]) error {
	return s.h.WithTx(ctx, func(tx pgx.Tx) error {
		cs, err := ScanSession(tx.QueryRow(ctx, `SELECT `+SessionColumns+` FROM checkout_sessions WHERE id = $1 FOR UPDATE`, id))
		if err != nil {
			return err
		}
		return UpdateSession(ctx, tx, cs, at, change, render)
	})
}

// UpdateSession applies change to cs, read for update in tx, and records
// it with its events.
func UpdateSession(ctx context.Context, tx pgx.Tx, cs payment.Session, at time.Time, change func(*payment.Session) []payment.EventType, render db.Render[payment.Session]) error {
	events := change(&cs)
	if len(events) == 0 {
		return nil
	}
	cs.UpdatedAt = at
	_, err := tx.Exec(ctx, `UPDATE checkout_sessions SET status = $2, amount_paid_usd = $3, exception = $4,
		completed_at = $5, updated_at = $6, version = version + $7, resolution = $8 WHERE id = $1`,
		cs.ID, cs.Status, cs.AmountPaidUSD.String(), cs.Exception, cs.CompletedAt, at, len(events), cs.Resolution)
	if err != nil {
		return db.MapErr(err)
	}
	base := cs.Version
	for i, typ := range events {
		cs.Version = base + i + 1
		if err := db.InsertEvent(ctx, tx, cs.ProjectID, cs.IsLive, typ, cs.ID, cs.Version, render, cs, at); err != nil {
			return err
		}
	}
	return nil
}

// SessionByTokenHash returns the session whose token hashes to hash.
func (s Store) SessionByTokenHash(ctx context.Context, hash string) (payment.Session, error) {
	return ScanSession(s.h.Pool.QueryRow(ctx, `SELECT `+SessionColumns+` FROM checkout_sessions WHERE token_hash = $1`, hash))
}

// SessionByID returns a session whatever its project: for workflows.
func (s Store) SessionByID(ctx context.Context, id string) (payment.Session, error) {
	return ScanSession(s.h.Pool.QueryRow(ctx, `SELECT `+SessionColumns+` FROM checkout_sessions WHERE id = $1`, id))
}

// GetSession returns a session of the principal's project and environment.
func (s Store) GetSession(ctx context.Context, p payment.Principal, id string) (payment.Session, error) {
	return ScanSession(s.h.Pool.QueryRow(ctx, `SELECT `+SessionColumns+` FROM checkout_sessions
		WHERE id = $1 AND project_id = $2 AND is_live = $3`, id, p.ProjectID, p.IsLive))
}

// SessionOwner returns the project and environment of a session.
func (s Store) SessionOwner(ctx context.Context, id string) (projectID string, isLive bool, err error) {
	err = s.h.Pool.QueryRow(ctx, `SELECT project_id, is_live FROM checkout_sessions WHERE id = $1`, id).Scan(&projectID, &isLive)
	return projectID, isLive, db.MapErr(err)
}

// ListSessions lists the principal's sessions, newest first.
func (s Store) ListSessions(ctx context.Context, p payment.Principal, q payment.ListQuery) ([]payment.Session, int, error) {
	return db.List(ctx, s.h, "checkout_sessions", SessionColumns, SessionFilter(p, q), q, ScanSession)
}

// ExceptionSQL keeps the sessions with an exception not resolved.
const ExceptionSQL = "exception <> ''"

// SessionFilter is a sessions list's filter: the list's, and with
// q.Flagged the sessions with an exception only.
func SessionFilter(p payment.Principal, q payment.ListQuery) *db.Filter {
	f := db.NewFilter(p, q, "status")
	if q.Flagged {
		f.Where = append(f.Where, ExceptionSQL)
	}
	return f
}

func ScanSession(row pgx.Row) (payment.Session, error) { return ScanSessionWith(row) }

// ScanSessionWith scans a session's columns and, after them, extra ones.
func ScanSessionWith(row pgx.Row, extra ...any) (payment.Session, error) {
	var cs payment.Session
	var amount, paid string
	var metadata, options []byte
	var lateUntil *time.Time
	err := row.Scan(append([]any{&cs.ID, &cs.TokenHash, &cs.ProjectID, &cs.PaymentPlanID, &cs.IsLive, &cs.Status, &cs.Email,
		&metadata, &amount, &paid, &cs.DepositAddress, &options, &cs.QuoteExpiresAt, &cs.ExpiresAt,
		&cs.CompletedAt, &cs.Exception, &cs.CreatedAt, &cs.UpdatedAt, &lateUntil, &cs.DepositIndex, &cs.Version, &cs.Resolution, &cs.SharedRecipient}, extra...)...)
	if err != nil {
		return cs, db.MapErr(err)
	}
	cs.AmountUSD, cs.AmountPaidUSD = db.MustDecimal(amount), db.MustDecimal(paid)
	if lateUntil != nil {
		cs.LateUntil = lateUntil.UTC()
	}
	// jsonb writes its text with spaces: the API returns it compact, as
	// it was given.
	var compact bytes.Buffer
	if err := json.Compact(&compact, metadata); err != nil {
		return cs, err
	}
	cs.Metadata = compact.Bytes()
	if err := json.Unmarshal(options, &cs.PaymentOptions); err != nil {
		return cs, err
	}
	for _, o := range cs.PaymentOptions {
		if o.DepositAddress != "" {
			cs.BitcoinAddress = o.DepositAddress // its index is kept in bitcoin_deposit_addresses alone
		}
	}
	cs.QuoteExpiresAt, cs.ExpiresAt = cs.QuoteExpiresAt.UTC(), cs.ExpiresAt.UTC()
	cs.CreatedAt, cs.UpdatedAt, cs.CompletedAt = cs.CreatedAt.UTC(), cs.UpdatedAt.UTC(), db.UTCPtr(cs.CompletedAt)
	return cs, nil
}

func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// WatchedAddress is a deposit address the chainwatch workflows must watch.
type WatchedAddress struct {
	Address   string
	SessionID string
	IsLive    bool
	ProjectID string
}

// DepositAddresses returns the sessions whose deposit addresses are among
// addresses (lowercase), whatever their state: every deposit address ever
// issued stays watched, so that no transfer to one goes unrecorded.
func (s Store) DepositAddresses(ctx context.Context, addresses []string) ([]WatchedAddress, error) {
	rows, err := s.h.Pool.Query(ctx, `SELECT deposit_address, id, is_live, project_id FROM checkout_sessions
		WHERE deposit_address <> '' AND NOT shared_recipient AND lower(deposit_address) = ANY($1)`, addresses)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[WatchedAddress])
}

// BitcoinDepositAddresses returns the sessions whose Bitcoin deposit
// addresses are among addresses, whatever their state, as DepositAddresses
// does for EVM addresses.
func (s Store) BitcoinDepositAddresses(ctx context.Context, addresses []string) ([]WatchedAddress, error) {
	rows, err := s.h.Pool.Query(ctx, `SELECT address, session_id, is_live, project_id FROM bitcoin_deposit_addresses
		WHERE address = ANY($1)`, addresses)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[WatchedAddress])
}

// SessionsNeedingWorkflow returns the sessions whose workflow must be
// running: open or processing, or inside their late-payment window; of one
// project when projectID is set.
func (s Store) SessionsNeedingWorkflow(ctx context.Context, projectID string) ([]payment.Session, error) {
	rows, err := s.h.Pool.Query(ctx, `SELECT `+SessionColumns+` FROM checkout_sessions
		WHERE (status IN ('open', 'processing') OR late_until > now()) AND ($1 = '' OR project_id = $1)
		ORDER BY created_at, id`, projectID)
	if err != nil {
		return nil, db.MapErr(err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (payment.Session, error) { return ScanSession(r) })
}
