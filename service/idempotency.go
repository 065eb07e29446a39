package service

import (
	"context"
)

// The records of the API's Idempotency-Keys: the engine keeps them, the API
// decides their scope and seals what they hold (api/idempotency.go).

// IdempotentResponse is the record of a request made with an
// Idempotency-Key: the hash of its body and its sealed first response.
type IdempotentResponse struct {
	RequestHash string
	StatusCode  int    // 0 while the first request is still running
	Sealed      []byte // the first response, sealed; nil for a record kept from before sealing
}

// ClaimIdempotencyKey claims the record id for a request whose body hashes
// to hash: nil when the claim is new, else the record made before.
func (svc *Service) ClaimIdempotencyKey(ctx context.Context, id []byte, hash string) (*IdempotentResponse, error) {
	r, err := svc.core.Store.ClaimIdempotencyKey(ctx, id, hash, svc.core.Now())
	if r == nil || err != nil {
		return nil, err
	}
	return &IdempotentResponse{RequestHash: r.RequestHash, StatusCode: r.StatusCode, Sealed: r.Sealed}, nil
}

// CompleteIdempotencyKey keeps the sealed first response of a claimed record.
func (svc *Service) CompleteIdempotencyKey(ctx context.Context, id []byte, status int, sealed []byte) error {
	return svc.core.Store.CompleteIdempotencyKey(ctx, id, status, sealed)
}

// ReleaseIdempotencyKey forgets a claim whose request failed with a server
// error, so that a retry runs again.
func (svc *Service) ReleaseIdempotencyKey(ctx context.Context, id []byte) error {
	return svc.core.Store.ReleaseIdempotencyKey(ctx, id)
}

// PurgeIdempotency deletes the records older than a day; a service
// without a store has none.
func (svc *Service) PurgeIdempotency(ctx context.Context) (int64, error) {
	if svc.core.Store == nil {
		return 0, nil
	}
	return svc.core.Store.PurgeIdempotency(ctx, svc.core.Now())
}
