package store_test

import (
	"context"
	"fmt"
	"net/url"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/dev/freeport"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/store/storetest"
)

// The database out of reach is told from a fault of the request: a
// server that refuses connections (stopped, restarting) and a connection
// the server ends (a shutdown) are unavailable, worth a retry; a query
// the server refuses is not.
func TestUnavailableTellsTheDatabaseDownFromABadQuery(t *testing.T) {
	ctx := context.Background()
	dbURL := storetest.NewDB(t)
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)

	_, err = conn.Exec(ctx, "SELECT * FROM no_such_table")
	if err == nil || store.Unavailable(err) {
		t.Fatalf("a query the server refuses: %v, unavailable %v", err, store.Unavailable(err))
	}

	// The server ends the connection as a fast shutdown does
	// (pg_terminate_backend sends the same admin_shutdown).
	var pid int
	if err := conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	admin, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "SELECT pg_terminate_backend($1)", pid); err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(ctx, "SELECT 1")
	if err == nil || !store.Unavailable(err) {
		t.Fatalf("a query on a connection the server ended: %v, unavailable %v", err, store.Unavailable(err))
	}

	u, _ := url.Parse(dbURL)
	u.Host = fmt.Sprintf("127.0.0.1:%d", freeport.Pick())
	_, err = pgx.Connect(ctx, u.String())
	if err == nil || !store.Unavailable(err) {
		t.Fatalf("a server that refuses connections: %v, unavailable %v", err, store.Unavailable(err))
	}
	if store.Unavailable(nil) {
		t.Fatal("no error is unavailable")
	}
}
