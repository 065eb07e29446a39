package identity

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store/internal/db"
)

// WebAuthnHandle returns a user's WebAuthn handle, making it (random
// bytes from fresh) on first use.
func (s Store) WebAuthnHandle(ctx context.Context, userID string, fresh []byte) ([]byte, error) {
	var h []byte
	err := s.h.Pool.QueryRow(ctx, `UPDATE users SET webauthn_handle = coalesce(webauthn_handle, $2) WHERE id = $1 RETURNING webauthn_handle`,
		userID, fresh).Scan(&h)
	return h, db.MapErr(err)
}

// UserByWebAuthnHandle finds the user of a handle.
func (s Store) UserByWebAuthnHandle(ctx context.Context, handle []byte) (payment.User, error) {
	u, _, err := scanUser(s.h.Pool.QueryRow(ctx, `SELECT `+userColumns+` FROM users WHERE webauthn_handle = $1`, handle))
	return u, err
}

// StoredPasskey is a passkey with its credential as go-webauthn records
// it (JSON).
type StoredPasskey struct {
	payment.Passkey
	Credential json.RawMessage
}

// InsertPasskey records a user's new passkey.
func (s Store) InsertPasskey(ctx context.Context, p StoredPasskey, credentialID []byte) error {
	_, err := s.db(ctx).Exec(ctx, `INSERT INTO passkeys (id, user_id, credential_id, credential, name, created_at) VALUES ($1,$2,$3,$4,$5,$6)`,
		p.ID, p.UserID, credentialID, p.Credential, p.Name, p.CreatedAt)
	return db.MapErr(err)
}

// Passkeys lists a user's passkeys, oldest first.
func (s Store) Passkeys(ctx context.Context, userID string) ([]StoredPasskey, error) {
	rows, err := s.h.Pool.Query(ctx, `SELECT id, user_id, name, created_at, last_used_at, credential FROM passkeys
		WHERE user_id = $1 ORDER BY created_at, id`, userID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (StoredPasskey, error) {
		var p StoredPasskey
		err := r.Scan(&p.ID, &p.UserID, &p.Name, &p.CreatedAt, &p.LastUsedAt, &p.Credential)
		p.CreatedAt = p.CreatedAt.UTC()
		return p, err
	})
}

// PasskeyUsed records a sign-in with a passkey: its credential as
// updated (the sign counter) and when.
func (s Store) PasskeyUsed(ctx context.Context, credentialID []byte, credential json.RawMessage, now time.Time) error {
	_, err := s.h.Pool.Exec(ctx, `UPDATE passkeys SET credential = $2, last_used_at = $3 WHERE credential_id = $1`, credentialID, credential, now)
	return err
}

// RenamePasskey renames a user's passkey; ErrNotFound when it is not
// theirs.
func (s Store) RenamePasskey(ctx context.Context, userID, id, name string) error {
	tag, err := s.h.Pool.Exec(ctx, `UPDATE passkeys SET name = $3 WHERE user_id = $1 AND id = $2`, userID, id, name)
	if err == nil && tag.RowsAffected() == 0 {
		return payment.ErrNotFound
	}
	return err
}

// DeletePasskey deletes a user's passkey; ErrNotFound when it is not
// theirs.
func (s Store) DeletePasskey(ctx context.Context, userID, id string) error {
	tag, err := s.db(ctx).Exec(ctx, `DELETE FROM passkeys WHERE user_id = $1 AND id = $2`, userID, id)
	if err == nil && tag.RowsAffected() == 0 {
		return payment.ErrNotFound
	}
	return err
}

// CreateChallenge records a ceremony's session data until expires.
func (s Store) CreateChallenge(ctx context.Context, id, kind, userID string, session json.RawMessage, expires time.Time) error {
	var uid any
	if userID != "" {
		uid = userID
	}
	_, err := s.h.Pool.Exec(ctx, `INSERT INTO webauthn_challenges (id, kind, user_id, session, expires_at) VALUES ($1,$2,$3,$4,$5)`,
		id, kind, uid, session, expires)
	return db.MapErr(err)
}

// TakeChallenge uses a ceremony's challenge, once: unexpired, unused, of
// the kind, and (userID non-empty) the user's. ErrNotFound otherwise.
func (s Store) TakeChallenge(ctx context.Context, id, kind, userID string, now time.Time) (json.RawMessage, error) {
	var session json.RawMessage
	err := s.h.Pool.QueryRow(ctx, `UPDATE webauthn_challenges SET used_at = $4 WHERE id = $1 AND kind = $2
		AND coalesce(user_id, '') = $3 AND used_at IS NULL AND expires_at > $4 RETURNING session`, id, kind, userID, now).Scan(&session)
	return session, db.MapErr(err)
}
