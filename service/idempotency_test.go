package service_test

import (
	"context"
	"testing"
	"time"
)

// An Idempotency-Key's record: the first claim runs the request, a retry
// sees it running and then its sealed response; a request that failed
// with a server error is released and runs again; after a day the key is
// free again.
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

	// A day later the records are gone: purged, or reclaimed on use.
	e.clock.Advance(25 * time.Hour)
	if r, err := e.svc.ClaimIdempotencyKey(ctx, id, "body-3"); err != nil || r != nil {
		t.Fatalf("a key used a day ago = %+v, %v; want a new claim", r, err)
	}
	if n, err := e.svc.PurgeIdempotency(ctx); err != nil || n != 1 {
		t.Fatalf("purged %d (%v), want the one record older than a day", n, err)
	}
}
