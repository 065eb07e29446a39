// Package postgrestls connects the engine to a Postgres that serves TLS,
// as a managed server does: verify-full with the server's CA connects
// encrypted, another CA is refused, and `paymentsd migrate` runs with the
// URL read from a file (DATABASE_URL_FILE), as a mounted secret gives it.
package postgrestls

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/dev/freeport"
	"github.com/paymentsd/paymentsd/internal/postgres"
	"github.com/paymentsd/paymentsd/internal/testkit/testpki"
	"github.com/paymentsd/paymentsd/store"
)

func TestVerifyFullAgainstAManagedStylePostgres(t *testing.T) {
	ctx := context.Background()
	ca := testpki.New(t, "database")
	certFile, keyFile := ca.Issue(t, "localhost")
	cert, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatal(err)
	}
	key, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "pg")
	cluster, err := postgres.StartWith(ctx, dir, freeport.Pick(), postgres.Options{
		Settings: map[string]string{"ssl": "on", "ssl_cert_file": "server.crt", "ssl_key_file": "server.key"},
		Files:    map[string][]byte{"server.crt": cert, "server.key": key},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cluster.Stop(context.Background())
		// Under root the cluster lives where the postgres user reaches it
		// (internal/postgres): that goes too.
		if target, err := os.Readlink(dir); err == nil {
			os.RemoveAll(target)
		}
	})
	url := func(host, rootCert string) string {
		return fmt.Sprintf("postgres://postgres@%s:%d/postgres?sslmode=verify-full&sslrootcert=%s", host, cluster.Port, rootCert)
	}

	st, err := store.Open(ctx, url("localhost", ca.CAFile))
	if err != nil {
		t.Fatalf("verify-full with the server's CA: %v", err)
	}
	var encrypted bool
	if err := st.Pool().QueryRow(ctx, `SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()`).Scan(&encrypted); err != nil || !encrypted {
		t.Fatalf("the connection is not encrypted: %v %v", encrypted, err)
	}
	st.Close()

	if _, err := store.Open(ctx, url("localhost", testpki.New(t, "impostor").CAFile)); err == nil ||
		!strings.Contains(err.Error(), "certificate signed by unknown authority") {
		t.Fatalf("verify-full with another CA: %v", err)
	}

	// The engine's migrations, the URL read from a file.
	urlFile := filepath.Join(t.TempDir(), "database-url")
	if err := os.WriteFile(urlFile, []byte(url("localhost", ca.CAFile)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "paymentsd")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/paymentsd").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	migrate := exec.Command(bin, "migrate")
	migrate.Env = append(os.Environ(), "DATABASE_URL=", "DATABASE_URL_FILE="+urlFile)
	if out, err := migrate.CombinedOutput(); err != nil {
		t.Fatalf("paymentsd migrate over verify-full: %v\n%s", err, out)
	}
	st, err = store.Open(ctx, url("localhost", ca.CAFile))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var tables int
	if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_name IN ('payout_batches', 'checkout_sessions')`).Scan(&tables); err != nil || tables != 2 {
		t.Fatalf("after the migrations: %d of the engine's tables (%v)", tables, err)
	}
}
