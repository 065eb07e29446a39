// Package storetest gives each test a fresh, migrated database on a real
// PostgreSQL: TEST_DATABASE_URL when set, otherwise a private cluster in the
// project's .data folder, started from the local PostgreSQL binaries.
package storetest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/paymentsd/paymentsd/internal/postgres"
	"github.com/paymentsd/paymentsd/store"
)

// testPort is the port of a checkout's private test cluster: derived from
// the checkout's path, so that two checkouts on one machine do not collide.
func testPort(root string) int {
	h := fnv.New32a()
	h.Write([]byte(root))
	return 55000 + int(h.Sum32()%1000)
}

// BaseURL returns the URL of a database the tests may create databases from.
func BaseURL() (string, error) {
	if u := os.Getenv("TEST_DATABASE_URL"); u != "" {
		return u, nil
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
	c, err := postgres.Start(context.Background(), filepath.Join(root, ".data", "test-postgres"), testPort(root))
	if err != nil {
		return "", fmt.Errorf("start test postgres (or set TEST_DATABASE_URL): %w", err)
	}
	return c.URL(), nil
}

// CreateDB creates a fresh database with every migration applied; drop
// removes it.
func CreateDB() (url string, drop func(), err error) {
	base, err := BaseURL()
	if err != nil {
		return "", nil, err
	}
	tmpl, err := templateDB(base)
	if err != nil {
		return "", nil, err
	}
	return createDB(base, "TEMPLATE "+tmpl)
}

// NewEmptyDB creates a fresh database with no migration applied, for tests
// of the migrations themselves, and returns its URL; the database is
// dropped when the test ends.
func NewEmptyDB(tb testing.TB) string {
	tb.Helper()
	base, err := BaseURL()
	if err != nil {
		tb.Fatal(err)
	}
	url, drop, err := createDB(base, "")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(drop)
	return url
}

// createDB creates a database with the options of CREATE DATABASE given.
func createDB(base, options string) (url string, drop func(), err error) {
	ctx := context.Background()
	name := "test_" + randHex(8)
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return "", nil, fmt.Errorf("connect %s: %w", base, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, fmt.Sprintf("CREATE DATABASE %s %s", name, options)); err != nil {
		return "", nil, fmt.Errorf("create database: %w", err)
	}
	drop = func() {
		c, err := pgx.Connect(context.Background(), base)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		_, _ = c.Exec(context.Background(), fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", name))
	}
	return withDB(base, name), drop, nil
}

// NewDB creates a fresh database with every migration applied and returns
// its URL; the database is dropped when the test ends.
func NewDB(tb testing.TB) string {
	tb.Helper()
	url, drop, err := CreateDB()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(drop)
	return url
}

// NewStore opens a store on a fresh database.
func NewStore(tb testing.TB) *store.Store {
	tb.Helper()
	s, err := store.Open(context.Background(), NewDB(tb))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Close)
	return s
}

// templateDB makes (once per set of migrations) a migrated template database.
func templateDB(base string) (string, error) {
	ctx := context.Background()
	name := "paymentsd_tmpl_" + migrationsHash()[:12]
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return "", fmt.Errorf("connect %s: %w", base, err)
	}
	defer conn.Close(ctx)
	// Serialize template creation across test processes.
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock(727274)"); err != nil {
		return "", err
	}
	defer conn.Exec(ctx, "SELECT pg_advisory_unlock(727274)")
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return "", err
	}
	if exists {
		return name, nil
	}
	building := name + "_build"
	_, _ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+building+" WITH (FORCE)")
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+building); err != nil {
		return "", err
	}
	if err := store.Migrate(ctx, withDB(base, building)); err != nil {
		return "", err
	}
	if _, err := conn.Exec(ctx, "ALTER DATABASE "+building+" RENAME TO "+name); err != nil {
		return "", err
	}
	return name, nil
}

func migrationsHash() string {
	h := sha256.New()
	_ = fs.WalkDir(store.Migrations, ".", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := fs.ReadFile(store.Migrations, path)
			h.Write([]byte(path))
			h.Write(b)
		}
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))
}

func withDB(base, name string) string {
	u, err := url.Parse(base)
	if err != nil {
		panic(err)
	}
	u.Path = "/" + name
	return u.String()
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Migrations opens the database at url and returns it with a provider of
// the engine's migrations over it, for tests that migrate step by step;
// both are closed when the test ends.
func Migrations(tb testing.TB, url string) (*sql.DB, *goose.Provider) {
	tb.Helper()
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		tb.Fatal(err)
	}
	db := stdlib.OpenDB(*cfg)
	tb.Cleanup(func() { db.Close() })
	migrations, err := fs.Sub(store.Migrations, "migrations")
	if err != nil {
		tb.Fatal(err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, migrations, goose.WithAllowOutofOrder(true))
	if err != nil {
		tb.Fatal(err)
	}
	return db, p
}

// WithPoolConns returns url with the pool's size set to n connections
// (pgxpool's pool_max_conns).
func WithPoolConns(url string, n int) string {
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	return url + sep + fmt.Sprintf("pool_max_conns=%d", n)
}
