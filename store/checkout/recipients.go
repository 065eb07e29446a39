package checkout

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store/internal/db"
)

// Errors of claiming a recipient.
var (
	// ErrRecipientOwned: another project owns the address in the
	// environment.
	ErrRecipientOwned = errors.New("the address is another project's verified recipient in this environment")
	// ErrRecipientIsDeposit: the address is a deposit address of a
	// session (any project's, any environment).
	ErrRecipientIsDeposit = errors.New("the address is a deposit address")
	// ErrDepositIsRecipient: a session's new deposit address became a
	// verified recipient after it was derived (store InsertSession).
	ErrDepositIsRecipient = &payment.Error{Kind: payment.KindConflict,
		Message: "The session's deposit address has just been verified as a recipient: retry to open the session on the next address"}
)

const recipientColumns = `project_id, is_live, address, challenge, challenge_expires_at, verified_at, method, created_at`

func scanRecipient(row pgx.Row) (payment.Recipient, error) {
	var r payment.Recipient
	var expires *time.Time
	err := row.Scan(&r.ProjectID, &r.IsLive, &r.Address, &r.Challenge, &expires, &r.VerifiedAt, &r.Method, &r.CreatedAt)
	if expires != nil {
		r.ChallengeExpiresAt = *expires
	}
	r.Address = payment.ChecksumAddress(r.Address)
	return r, err
}

// lockAddress serializes, for one transaction, the changes of who owns an
// address as a recipient.
func lockAddress(ctx context.Context, tx pgx.Tx, address string) error {
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, "recipient/"+strings.ToLower(address))
	return err
}

// checkClaimable refuses an address that another project owns in the
// environment or that is any session's own deposit address.
func checkClaimable(ctx context.Context, tx pgx.Tx, projectID string, isLive bool, address string) error {
	var owner string
	err := tx.QueryRow(ctx, `SELECT project_id FROM recipients WHERE is_live = $1 AND address = $2 AND verified_at IS NOT NULL`,
		isLive, address).Scan(&owner)
	switch {
	case err == nil && owner != projectID:
		return ErrRecipientOwned
	case err != nil && err != pgx.ErrNoRows:
		return err
	}
	var deposit bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM checkout_sessions
		WHERE lower(deposit_address) = $1 AND deposit_address <> '' AND NOT shared_recipient)`, address).Scan(&deposit); err != nil {
		return err
	}
	if deposit {
		return ErrRecipientIsDeposit
	}
	return nil
}

// ClaimRecipient records a project's claim of an address in an
// environment with the challenge it must sign, or renews the challenge of
// a pending claim. A verified recipient of the project is returned as it
// is. It refuses an address another project owns in the environment
// (ErrRecipientOwned) and any session's deposit address
// (ErrRecipientIsDeposit).
func (s Store) ClaimRecipient(ctx context.Context, r payment.Recipient) (payment.Recipient, error) {
	address := strings.ToLower(r.Address)
	var out payment.Recipient
	err := s.h.WithTx(ctx, func(tx pgx.Tx) error {
		if err := lockAddress(ctx, tx, address); err != nil {
			return err
		}
		if err := checkClaimable(ctx, tx, r.ProjectID, r.IsLive, address); err != nil {
			return err
		}
		var err error
		out, err = scanRecipient(tx.QueryRow(ctx, `INSERT INTO recipients (project_id, is_live, address, challenge,
			challenge_expires_at, created_at) VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (project_id, is_live, address) DO UPDATE SET
				challenge = CASE WHEN recipients.verified_at IS NULL THEN excluded.challenge ELSE recipients.challenge END,
				challenge_expires_at = CASE WHEN recipients.verified_at IS NULL THEN excluded.challenge_expires_at ELSE recipients.challenge_expires_at END
			RETURNING `+recipientColumns, r.ProjectID, r.IsLive, address, r.Challenge, r.ChallengeExpiresAt, r.CreatedAt))
		return err
	})
	return out, err
}

// GetRecipient returns a project's claim of an address in an environment.
func (s Store) GetRecipient(ctx context.Context, projectID string, isLive bool, address string) (payment.Recipient, error) {
	r, err := scanRecipient(s.h.Pool.QueryRow(ctx, `SELECT `+recipientColumns+` FROM recipients
		WHERE project_id = $1 AND is_live = $2 AND address = $3`, projectID, isLive, strings.ToLower(address)))
	return r, db.MapErr(err)
}

// ListRecipients lists a project's recipients of an environment, verified
// and pending, oldest first.
func (s Store) ListRecipients(ctx context.Context, projectID string, isLive bool) ([]payment.Recipient, error) {
	rows, err := s.h.Pool.Query(ctx, `SELECT `+recipientColumns+` FROM recipients
		WHERE project_id = $1 AND is_live = $2 ORDER BY created_at, address`, projectID, isLive)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (payment.Recipient, error) { return scanRecipient(r) })
}

// VerifyRecipient marks a project's pending claim verified, once its
// challenge's signature has been checked: it consumes the challenge. It
// checks again, under the address's lock, that no other project owns the
// address and that it is no deposit address.
func (s Store) VerifyRecipient(ctx context.Context, projectID string, isLive bool, address, challenge, method string, at time.Time) (payment.Recipient, error) {
	address = strings.ToLower(address)
	var out payment.Recipient
	err := s.h.WithTx(ctx, func(tx pgx.Tx) error {
		if err := lockAddress(ctx, tx, address); err != nil {
			return err
		}
		if err := checkClaimable(ctx, tx, projectID, isLive, address); err != nil {
			return err
		}
		var err error
		out, err = scanRecipient(tx.QueryRow(ctx, `UPDATE recipients SET verified_at = $5, method = $6, challenge = '',
			challenge_expires_at = NULL WHERE project_id = $1 AND is_live = $2 AND address = $3 AND challenge = $4
			AND verified_at IS NULL RETURNING `+recipientColumns, projectID, isLive, address, challenge, at, method))
		return db.MapErr(err)
	})
	return out, err
}

// DeleteRecipient removes a project's recipient (verified or pending). A
// verified one that sessions of the project still hold amounts on is
// kept: payments to it are still expected (payment.ErrConflict).
func (s Store) DeleteRecipient(ctx context.Context, projectID string, isLive bool, address string, now time.Time) error {
	address = strings.ToLower(address)
	return s.h.WithTx(ctx, func(tx pgx.Tx) error {
		if err := lockAddress(ctx, tx, address); err != nil {
			return err
		}
		var held bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM amount_reservations
			WHERE project_id = $1 AND is_live = $2 AND recipient = $3 AND held_until > $4)`,
			projectID, isLive, address, now).Scan(&held); err != nil {
			return err
		}
		if held {
			return payment.ErrConflict
		}
		tag, err := tx.Exec(ctx, `DELETE FROM recipients WHERE project_id = $1 AND is_live = $2 AND address = $3`, projectID, isLive, address)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return payment.ErrNotFound
		}
		return nil
	})
}

// IsVerifiedRecipient tells whether an address is a verified recipient of
// any project in any environment: a session's deposit address must not
// be one.
func (s Store) IsVerifiedRecipient(ctx context.Context, address string) (bool, error) {
	var yes bool
	err := s.h.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM recipients WHERE address = $1 AND verified_at IS NOT NULL)`,
		strings.ToLower(address)).Scan(&yes)
	return yes, err
}
