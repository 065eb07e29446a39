package devstack

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/persistence/sql/sqlplugin/postgresql"
	"go.temporal.io/server/tools/common/schema"
	sqltool "go.temporal.io/server/tools/sql"
)

// VisibilitySuffix names the database of a Temporal server's visibility
// records after the database of its history.
const VisibilitySuffix = "_visibility"

// The schemas of the server's two Postgres databases, in the schema files
// embedded in the server module (go.temporal.io/server/schema).
const (
	historySchema    = "postgresql/v12/temporal"
	visibilitySchema = "postgresql/v12/visibility"
)

// postgresPersistence prepares the two Postgres databases of a server (see
// TemporalConfig.PostgresURL) and returns the persistence configuration
// that uses them.
func postgresPersistence(dbURL, namespace string) (config.Persistence, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	u, name, err := parsePostgresURL(dbURL)
	if err != nil {
		return config.Persistence{}, err
	}
	history, visibility := postgresStore(u, name), postgresStore(u, name+VisibilitySuffix)
	for _, s := range []struct {
		store  *config.SQL
		schema string
	}{{history, historySchema}, {visibility, visibilitySchema}} {
		if err := createDatabase(ctx, u, s.store.DatabaseName); err != nil {
			return config.Persistence{}, err
		}
		if err := setupSchema(s.store, s.schema); err != nil {
			return config.Persistence{}, err
		}
	}
	if err := forgetPostgresMembers(ctx, u, name); err != nil {
		return config.Persistence{}, err
	}
	if err := createNamespace(history, namespace); err != nil {
		return config.Persistence{}, err
	}
	return config.Persistence{
		DefaultStore: "default", VisibilityStore: "visibility", NumHistoryShards: 1,
		DataStores: map[string]config.DataStore{"default": {SQL: history}, "visibility": {SQL: visibility}},
	}, nil
}

// parsePostgresURL checks a postgres:// URL and returns it with the name
// of its database.
func parsePostgresURL(dbURL string) (*url.URL, string, error) {
	u, err := url.Parse(dbURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Hostname() == "" {
		return nil, "", errors.New("temporal database: want a URL such as postgres://user@host:5432/temporal")
	}
	name := strings.TrimPrefix(u.Path, "/")
	if name == "" || strings.Contains(name, "/") {
		return nil, "", fmt.Errorf("temporal database: the URL %s names no database", u.Redacted())
	}
	return u, name, nil
}

// postgresStore is the server's configuration of database name on the
// server of u. The URL's query parameters (sslmode and the like) are the
// connection's attributes.
func postgresStore(u *url.URL, name string) *config.SQL {
	port := u.Port()
	if port == "" {
		port = "5432"
	}
	attrs := map[string]string{}
	for k, v := range u.Query() {
		attrs[k] = v[0]
	}
	password, _ := u.User.Password()
	// Each of the server's four services opens its own pool on each store:
	// a small cap keeps a test server within a shared server's
	// max_connections.
	return &config.SQL{
		PluginName: postgresql.PluginNamePGX, DatabaseName: name,
		ConnectAddr: net.JoinHostPort(u.Hostname(), port), ConnectProtocol: "tcp",
		User: u.User.Username(), Password: password, ConnectAttributes: attrs,
		MaxConns: 8, MaxIdleConns: 8, MaxConnLifetime: time.Hour,
	}
}

// createDatabase creates database name on the server of u unless it
// exists, through the server's maintenance database (postgres).
func createDatabase(ctx context.Context, u *url.URL, name string) error {
	conn, err := pgx.Connect(ctx, withDatabase(u, "postgres"))
	if err != nil {
		return fmt.Errorf("temporal database: connect to %s: %w", u.Redacted(), err)
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return fmt.Errorf("temporal database: %w", err)
	}
	if exists {
		return nil
	}
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	if pgErr := (*pgconn.PgError)(nil); errors.As(err, &pgErr) && pgErr.Code == "42P04" {
		return nil // created meanwhile by another process
	}
	if err != nil {
		return fmt.Errorf("temporal database: create %s: %w", name, err)
	}
	return nil
}

// setupSchema sets a database's schema up, or brings it up to the
// server's version, as `temporal-sql-tool setup-schema -v 0.0` followed by
// `update-schema` do: the first creates the version tables and records
// version 0.0 on a new database, the second applies every versioned change
// past the recorded version, which on a current database is none.
func setupSchema(store *config.SQL, schemaName string) error {
	logger := log.NewNoopLogger()
	conn, err := sqltool.NewConnection(store, logger)
	if err != nil {
		return fmt.Errorf("temporal schema of %s: %w", store.DatabaseName, err)
	}
	defer conn.Close()
	if err := schema.NewSetupSchemaTask(conn, &schema.SetupConfig{InitialVersion: "0.0"}, logger).Run(); err != nil {
		return fmt.Errorf("temporal schema of %s: %w", store.DatabaseName, err)
	}
	update := &schema.UpdateConfig{DBName: store.DatabaseName, SchemaName: schemaName}
	if err := schema.NewUpdateSchemaTask(conn, update, logger).Run(); err != nil {
		return fmt.Errorf("temporal schema of %s: %w", store.DatabaseName, err)
	}
	return nil
}

// forgetPostgresMembers is forgetMembers for a server on Postgres.
func forgetPostgresMembers(ctx context.Context, u *url.URL, name string) error {
	conn, err := pgx.Connect(ctx, withDatabase(u, name))
	if err != nil {
		return fmt.Errorf("temporal database: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `DELETE FROM cluster_membership`); err != nil {
		return fmt.Errorf("temporal database: forget the previous run's members: %w", err)
	}
	return nil
}

// DropPostgres drops the two databases of a server on Postgres (see
// TemporalConfig.PostgresURL), closing their connections; databases that
// do not exist are fine.
func DropPostgres(ctx context.Context, dbURL string) error {
	u, name, err := parsePostgresURL(dbURL)
	if err != nil {
		return err
	}
	conn, err := pgx.Connect(ctx, withDatabase(u, "postgres"))
	if err != nil {
		return fmt.Errorf("temporal database: connect to %s: %w", u.Redacted(), err)
	}
	defer conn.Close(ctx)
	for _, db := range []string{name, name + VisibilitySuffix} {
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{db}.Sanitize()+" WITH (FORCE)"); err != nil {
			return fmt.Errorf("temporal database: drop %s: %w", db, err)
		}
	}
	return nil
}

// TemporalDatabaseURL returns the URL of a Temporal database on the server
// of the engine's database engineURL, with its credentials, named after
// the engine's database with "_temporal" appended: the dev stack and the
// tests keep Temporal on the Postgres they already run, beside the
// engine's own database, and a fresh engine database gets fresh Temporal
// databases.
func TemporalDatabaseURL(engineURL string) (string, error) {
	u, name, err := parsePostgresURL(engineURL)
	if err != nil {
		return "", fmt.Errorf("engine database: %w", err)
	}
	return withDatabase(u, name+"_temporal"), nil
}

// withDatabase is u naming database name.
func withDatabase(u *url.URL, name string) string {
	c := *u
	c.Path = "/" + name
	c.RawPath = ""
	return c.String()
}
