package store

import (
	"context"
	"time"

	"github.com/paymentsd/paymentsd/store/internal/db"
)

// IdempotentResponse is the record of a POST made with an Idempotency-Key.
type IdempotentResponse struct {
	RequestHash string
	StatusCode  int    // 0 while the first request is still running
	Sealed      []byte // the first response, sealed; nil for a record kept from before sealing
}

// IdempotencyTTL is how long a key's first response is replayed; records
// older than this are reclaimed on use and deleted by PurgeIdempotency.
const IdempotencyTTL = 24 * time.Hour

// IdempotencyClaimLease is how long a claim whose request never finished
// holds its key: twice the API's write deadline (60 s), after which no
// answer to the first request can come. A request that failed while the
// database was down could not release its claim (ReleaseIdempotencyKey);
// past the lease a retry runs again instead of hearing "still being
// processed" for a day.
const IdempotencyClaimLease = 2 * time.Minute

// ClaimIdempotencyKey claims the record id (a hash of the caller's scope
// and key; the store never sees the key) for a request whose body hashes to
// hash. It returns (nil, nil) when the claim is new, so the request runs,
// or the stored record when the key was used before. Records older than the
// TTL are reclaimed, and so are claims unfinished past the lease.
func (s *Store) ClaimIdempotencyKey(ctx context.Context, id []byte, hash string, now time.Time) (*IdempotentResponse, error) {
	tag, err := s.h.Pool.Exec(ctx, `INSERT INTO idempotency_records (id, request_hash, created_at)
		VALUES ($1,$2,$3)
		ON CONFLICT (id) DO UPDATE SET request_hash = EXCLUDED.request_hash, created_at = EXCLUDED.created_at,
			status_code = NULL, response_sealed = NULL
		WHERE idempotency_records.created_at < $4
			OR idempotency_records.status_code IS NULL AND idempotency_records.created_at < $5`,
		id, hash, now, now.Add(-IdempotencyTTL), now.Add(-IdempotencyClaimLease))
	if err != nil {
		return nil, err
	}
	if tag.RowsAffected() == 1 {
		return nil, nil
	}
	var r IdempotentResponse
	var code *int
	err = s.h.Pool.QueryRow(ctx, `SELECT request_hash, status_code, response_sealed FROM idempotency_records
		WHERE id = $1`, id).Scan(&r.RequestHash, &code, &r.Sealed)
	if err != nil {
		return nil, db.MapErr(err)
	}
	if code != nil {
		r.StatusCode = *code
	}
	return &r, nil
}

// CompleteIdempotencyKey stores the sealed response to replay for a
// claimed record.
func (s *Store) CompleteIdempotencyKey(ctx context.Context, id []byte, status int, sealed []byte) error {
	_, err := s.h.Pool.Exec(ctx, `UPDATE idempotency_records SET status_code = $2, response_sealed = $3
		WHERE id = $1`, id, status, sealed)
	return err
}

// ReleaseIdempotencyKey forgets a claim whose request failed in a way worth
// retrying (a server error), so that the retry runs again.
func (s *Store) ReleaseIdempotencyKey(ctx context.Context, id []byte) error {
	_, err := s.h.Pool.Exec(ctx, `DELETE FROM idempotency_records WHERE id = $1 AND status_code IS NULL`, id)
	return err
}

// PurgeIdempotency deletes the records older than the TTL and says how
// many it deleted.
func (s *Store) PurgeIdempotency(ctx context.Context, now time.Time) (int64, error) {
	tag, err := s.h.Pool.Exec(ctx, `DELETE FROM idempotency_records WHERE created_at < $1`, now.Add(-IdempotencyTTL))
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}
