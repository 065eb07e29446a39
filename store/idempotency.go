package store

import (
	"context"
	"time"
)

// IdempotentResponse is the first response given to a POST with an
// Idempotency-Key.
type IdempotentResponse struct {
	RequestHash string
	StatusCode  int // 0 while the first request is still running
	Body        []byte
}

// IdempotencyTTL is how long a key's first response is replayed.
const IdempotencyTTL = 24 * time.Hour

// ClaimIdempotencyKey claims key in scope for a request whose body hashes to
// hash. It returns (nil, nil) when the claim is new, so the request runs,
// or the stored record when the key was used before. Keys older than the
// TTL are reclaimed.
func (s *Store) ClaimIdempotencyKey(ctx context.Context, scope, key, hash string, now time.Time) (*IdempotentResponse, error) {
	tag, err := s.pool.Exec(ctx, `INSERT INTO idempotency_keys (scope, key, request_hash, created_at)
		VALUES ($1,$2,$3,$4)
		ON CONFLICT (scope, key) DO UPDATE SET request_hash = EXCLUDED.request_hash, created_at = EXCLUDED.created_at,
			status_code = NULL, response_body = NULL
		WHERE idempotency_keys.created_at < $5`, scope, key, hash, now, now.Add(-IdempotencyTTL))
	if err != nil {
		return nil, err
	}
	if tag.RowsAffected() == 1 {
		return nil, nil
	}
	var r IdempotentResponse
	var code *int
	err = s.pool.QueryRow(ctx, `SELECT request_hash, status_code, response_body FROM idempotency_keys
		WHERE scope = $1 AND key = $2`, scope, key).Scan(&r.RequestHash, &code, &r.Body)
	if err != nil {
		return nil, mapErr(err)
	}
	if code != nil {
		r.StatusCode = *code
	}
	return &r, nil
}

// CompleteIdempotencyKey stores the response to replay for a claimed key.
func (s *Store) CompleteIdempotencyKey(ctx context.Context, scope, key string, status int, body []byte) error {
	_, err := s.pool.Exec(ctx, `UPDATE idempotency_keys SET status_code = $3, response_body = $4
		WHERE scope = $1 AND key = $2`, scope, key, status, body)
	return err
}

// ReleaseIdempotencyKey forgets a claim whose request failed in a way worth
// retrying (a server error), so that the retry runs again.
func (s *Store) ReleaseIdempotencyKey(ctx context.Context, scope, key string) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2 AND status_code IS NULL`, scope, key)
	return err
}
