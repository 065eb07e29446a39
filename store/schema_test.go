package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/store/storetest"
)

// This build's processes refuse a database still on the last release's
// schema, or on none, saying what to run; once migrated they start, and
// they would on a later release's schema too.
func TestCheckSchemaRefusesAnEarlierReleasesSchema(t *testing.T) {
	ctx := context.Background()
	url := storetest.NewEmptyDB(t)
	err := store.CheckSchema(ctx, url)
	if err == nil || !strings.Contains(err.Error(), "at migration 0 and this release needs") || !strings.Contains(err.Error(), "paymentsd migrate") {
		t.Fatalf("an empty database: %v", err)
	}

	db, p := storetest.Migrations(t, url)
	if _, err := p.UpTo(ctx, store.LastReleasedMigration); err != nil {
		t.Fatal(err)
	}
	err = store.CheckSchema(ctx, url)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("is at migration %d and this release needs", store.LastReleasedMigration)) {
		t.Fatalf("the last release's schema: %v", err)
	}

	if err := store.Migrate(ctx, url); err != nil {
		t.Fatal(err)
	}
	if err := store.CheckSchema(ctx, url); err != nil {
		t.Fatalf("migrated: %v", err)
	}
	// A later release's migration applied: this build still starts.
	if _, err := db.ExecContext(ctx, `INSERT INTO goose_db_version (version_id, is_applied) VALUES (99999, true)`); err != nil {
		t.Fatal(err)
	}
	if err := store.CheckSchema(ctx, url); err != nil {
		t.Fatalf("a later release's schema: %v", err)
	}
}

// A database URL carrying the pool's settings (pool_max_conns, which the
// operator sizes the pool with) migrates and opens: the migrations take
// the pool's settings for the pool's, not for the server's parameters.
func TestAURLWithPoolSettingsMigratesAndOpens(t *testing.T) {
	ctx := context.Background()
	url := storetest.NewEmptyDB(t)
	url = storetest.WithPoolConns(url, 7) + "&pool_min_conns=1"
	if err := store.Migrate(ctx, url); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	if err := store.CheckSchema(ctx, url); err != nil {
		t.Fatalf("check the schema: %v", err)
	}
	st, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if got := st.Pool().Config().MaxConns; got != 7 {
		t.Fatalf("the pool holds up to %d connections, want the URL's 7", got)
	}
}
