package e2e

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"connectrpc.com/connect"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/paymentsd/paymentsd/api"
	v1 "github.com/paymentsd/paymentsd/api/gen/paymentsd/v1"
	"github.com/paymentsd/paymentsd/api/gen/paymentsd/v1/paymentsdv1connect"
	"github.com/paymentsd/paymentsd/store"
)

// keyLookups counts the statements that read API keys, as the database
// receives them.
type keyLookups struct{ n atomic.Int64 }

func (k *keyLookups) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if strings.Contains(d.SQL, "FROM api_keys") {
		k.n.Add(1)
	}
	return ctx
}

func (k *keyLookups) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// A client IP that has spent its budget of failed authentications is
// refused before its key is looked up, over REST and Connect, whatever key
// it sends next: guessing costs the database nothing, and a right guess
// does not get through.
func TestFailedAuthenticationIsThrottledBeforeTheKeyLookup(t *testing.T) {
	cfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	lookups := &keyLookups{}
	cfg.ConnConfig.Tracer = lookups
	db, err := store.OpenConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	ts, e := newAPI(t, apiOptions{db: db, limits: map[api.Tier]uint64{api.Standard: 3,
		api.Relaxed: 1000, api.SemiRelaxed: 1000, api.Moderate: 1000, api.Strict: 1000}})
	p := newProject(t, e) // its keys were never verified: this process has not cached them
	path := "/api/v1/projects/" + p.Project.ID

	start := lookups.n.Load()
	for _, guess := range []string{"svc_test_guess1", "svc_live_guess2", "svc_test_guess3"} {
		r := get(t, ts.URL, path, guess)
		mustStatus(t, r, http.StatusUnauthorized)
	}
	if n := lookups.n.Load() - start; n != 3 {
		t.Fatalf("%d key lookups for 3 guesses", n)
	}

	retryAfter := regexp.MustCompile(`^[1-9][0-9]*$`)
	for _, key := range []string{p.SandboxKey, "svc_test_guess4"} {
		r := get(t, ts.URL, path, key)
		mustStatus(t, r, http.StatusTooManyRequests)
		if r.errorCode() != "RATE_LIMITED" || !retryAfter.MatchString(r.Header.Get("Retry-After")) {
			t.Fatalf("over budget: %s, Retry-After %q", r.Raw, r.Header.Get("Retry-After"))
		}
	}
	client := paymentsdv1connect.NewPaymentsServiceClient(http.DefaultClient, ts.URL)
	_, err = client.GetProject(context.Background(), authed(&v1.GetProjectRequest{ProjectId: p.Project.ID}, p.LiveKey))
	var ce *connect.Error
	if !errors.As(err, &ce) || ce.Code() != connect.CodeResourceExhausted || !retryAfter.MatchString(ce.Meta().Get("Retry-After")) {
		t.Fatalf("Connect over budget: %v", err)
	}
	if n := lookups.n.Load() - start; n != 3 {
		t.Fatalf("%d key lookups, want the 3 of the guesses within the budget", n)
	}
	// The budget is the IP's failures only: its public calls still go.
	mustStatus(t, get(t, ts.URL, "/api/v1/assets", ""), http.StatusOK)
}
