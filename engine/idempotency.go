package engine

import (
	"context"

	"github.com/paymentsd/paymentsd/store"
)

// The records of the API's Idempotency-Keys: the engine keeps them, the API
// decides their scope and seals what they hold (api/idempotency.go).

// ClaimIdempotencyKey claims the record id for a request whose body hashes
// to hash: nil when the claim is new, else the record made before.
func (e *Engine) ClaimIdempotencyKey(ctx context.Context, id []byte, hash string) (*store.IdempotentResponse, error) {
	return e.Store.ClaimIdempotencyKey(ctx, id, hash, e.now())
}

// CompleteIdempotencyKey keeps the sealed first response of a claimed record.
func (e *Engine) CompleteIdempotencyKey(ctx context.Context, id []byte, status int, sealed []byte) error {
	return e.Store.CompleteIdempotencyKey(ctx, id, status, sealed)
}

// ReleaseIdempotencyKey forgets a claim whose request failed with a server
// error, so that a retry runs again.
func (e *Engine) ReleaseIdempotencyKey(ctx context.Context, id []byte) error {
	return e.Store.ReleaseIdempotencyKey(ctx, id)
}

// PurgeIdempotency deletes the records older than a day.
func (e *Engine) PurgeIdempotency(ctx context.Context) (int64, error) {
	return e.Store.PurgeIdempotency(ctx, e.now())
}
