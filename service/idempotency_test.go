package service_test

import (
	"context"
	"testing"
	"time"
)

// An Idempotency-Key's record: the first claim runs the request, a retry
// sees it running and then its sealed response; a request that failed
// with a server error is released and runs again, and one whose request
// never finished is free again after the claim's lease; after a day every
// key is free again.
func TestIdempotencyKeysReplayTheFirstResponse(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	id := []byte("scope and key hashed")

	if r, err := e.svc.ClaimIdempotencyKey(ctx, id, "body-1"); err != nil || r != nil {
		t.Fatalf("first claim = %+v, %v; want a new claim", r, err)
	}
	r, err := e.svc.ClaimIdempotencyKey(ctx, id, "body-1")
	if err != nil || r == nil || r.StatusCode != 0 || r.RequestHash != "body-1" {
		t.Fatalf("a retry while the first runs = %+v, %v; want the record, still running", r, err)
	}
	if err := e.svc.CompleteIdempotencyKey(ctx, id, 201, []byte("sealed response")); err != nil {
		t.Fatal(err)
	}
	r, err = e.svc.ClaimIdempotencyKey(ctx, id, "body-2")
	if err != nil || r == nil || r.StatusCode != 201 || string(r.Sealed) != "sealed response" || r.RequestHash != "body-1" {
		t.Fatalf("a retry with another body = %+v, %v; want the first request's record to compare with", r, err)
	}

	other := []byte("another key")
	if r, err := e.svc.ClaimIdempotencyKey(ctx, other, "body-1"); err != nil || r != nil {
		t.Fatalf("another key = %+v, %v; want a new claim", r, err)
	}
	if err := e.svc.ReleaseIdempotencyKey(ctx, other); err != nil {
		t.Fatal(err)
	}
	if r, err := e.svc.ClaimIdempotencyKey(ctx, other, "body-1"); err != nil || r != nil {
		t.Fatalf("a key released after a server error = %+v, %v; want a new claim", r, err)
	}

	// A claim whose request never finished nor released it (the database
	// went down under it) holds its key for the lease, then frees it.
	stuck := []byte("a claim never released")
	if r, err := e.svc.ClaimIdempotencyKey(ctx, stuck, "body-1"); err != nil || r != nil {
		t.Fatalf("a new key = %+v, %v; want a new claim", r, err)
	}
	e.clock.Advance(time.Minute)
	if r, err := e.svc.ClaimIdempotencyKey(ctx, stuck, "body-1"); err != nil || r == nil || r.StatusCode != 0 {
		t.Fatalf("a retry a minute later = %+v, %v; want the claim, still running", r, err)
	}
	e.clock.Advance(2 * time.Minute)
	if r, err := e.svc.ClaimIdempotencyKey(ctx, stuck, "body-1"); err != nil || r != nil {
		t.Fatalf("a retry past the lease = %+v, %v; want a new claim", r, err)
	}
	if err := e.svc.CompleteIdempotencyKey(ctx, stuck, 201, []byte("sealed")); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(3 * time.Minute)
	if r, err := e.svc.ClaimIdempotencyKey(ctx, stuck, "body-1"); err != nil || r == nil || r.StatusCode != 201 {
		t.Fatalf("a finished request's key past the lease = %+v, %v; want its response replayed", r, err)
	}

	// A day later the records are gone: purged, or reclaimed on use.
	e.clock.Advance(25 * time.Hour)
	if r, err := e.svc.ClaimIdempotencyKey(ctx, id, "body-3"); err != nil || r != nil {
		t.Fatalf("a key used a day ago = %+v, %v; want a new claim", r, err)
	}
	if n, err := e.svc.PurgeIdempotency(ctx); err != nil || n != 2 {
		t.Fatalf("purged %d (%v), want the two records older than a day", n, err)
	}
}
