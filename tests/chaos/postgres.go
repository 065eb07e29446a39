package chaos

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/dev/freeport"
	"github.com/paymentsd/paymentsd/internal/postgres"
	"github.com/paymentsd/paymentsd/store"
)

// privatePostgres is a PostgreSQL cluster the run owns (postgres-restart):
// started from the machine's binaries in the run's folder, so that
// restarting it restarts nobody else's database. The machine's own
// PostgreSQL service is never touched.
type privatePostgres struct {
	dir     string
	port    int
	cluster *postgres.Cluster
	// keep leaves the cluster's files after the run, for a failed run's
	// records to be read.
	keep bool
}

// startPrivatePostgres starts a new cluster in dir and returns it with the
// URL of a migrated database on it.
func startPrivatePostgres(ctx context.Context, dir string) (*privatePostgres, string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, "", err
	}
	p := &privatePostgres{dir: dir, port: freeport.Pick()}
	if p.cluster, err = postgres.Start(ctx, dir, p.port); err != nil {
		return nil, "", err
	}
	if !p.cluster.Started || p.cluster.Port != p.port {
		return nil, "", fmt.Errorf("a cluster already runs in %s: not the run's own", dir)
	}
	conn, err := pgx.Connect(ctx, p.cluster.URL())
	if err != nil {
		p.Close()
		return nil, "", err
	}
	_, err = conn.Exec(ctx, "CREATE DATABASE paymentsd")
	conn.Close(ctx)
	if err != nil {
		p.Close()
		return nil, "", err
	}
	url := strings.Replace(p.cluster.URL(), "/postgres?", "/paymentsd?", 1)
	if err := store.Migrate(ctx, url); err != nil {
		p.Close()
		return nil, "", fmt.Errorf("migrate the run's database: %w", err)
	}
	return p, url, nil
}

// Restart stops the cluster (a fast shutdown: every connection is closed,
// as in a restart by a service manager or a failover), waits pause, and
// starts it again on the same port and data.
func (p *privatePostgres) Restart(ctx context.Context, pause time.Duration) error {
	if err := p.cluster.Stop(ctx); err != nil {
		return err
	}
	if err := sleep(ctx, pause); err != nil {
		return err
	}
	c, err := postgres.Start(ctx, p.dir, p.port)
	if err != nil {
		return err
	}
	p.cluster = c
	return nil
}

// Close stops the cluster and removes its files (the relocated folder
// too, when it runs as the postgres user), keeping its log in the run's
// folder.
func (p *privatePostgres) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_ = p.cluster.Stop(ctx)
	if log, err := os.ReadFile(filepath.Join(p.cluster.Dir, "postgres.log")); err == nil {
		_ = os.WriteFile(p.dir+".log", log, 0o644)
	}
	if p.keep {
		return
	}
	if p.cluster.Dir != p.dir {
		_ = os.RemoveAll(p.cluster.Dir)
	}
	_ = os.RemoveAll(p.dir)
	_ = os.Remove(p.dir + ".lock")
}
