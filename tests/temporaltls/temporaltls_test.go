// Package temporaltls connects the engine's Temporal client, as the API
// and the worker configure it (internal/temporalconn), to an embedded
// Temporal server secured the ways a production cluster and Temporal
// Cloud are: TLS verifying the server, mutual TLS, an API key. Each mode
// connects with what it needs and is refused, saying why, without it.
package temporaltls

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/paymentsd/paymentsd/dev/devstack"
	"github.com/paymentsd/paymentsd/dev/freeport"
	"github.com/paymentsd/paymentsd/internal/temporalconn"
	"github.com/paymentsd/paymentsd/internal/testkit/testpki"
	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
	"github.com/paymentsd/paymentsd/store/storetest"
)

// server starts an embedded Temporal server with the frontend's TLS
// signed by p; mutual requires a client certificate p signed.
func server(t *testing.T, p *testpki.CA, mutual bool, apiKey string) *devstack.Temporal {
	t.Helper()
	cert, key := p.Issue(t, "localhost")
	sysCert, sysKey := p.Issue(t, "temporal-system")
	tls := &devstack.ServerTLS{CertFile: cert, KeyFile: key, CAFile: p.CAFile, SystemCertFile: sysCert, SystemKeyFile: sysKey}
	if mutual {
		tls.ClientCAFile = p.CAFile
	}
	srv, err := devstack.StartTemporal(devstack.TemporalConfig{TLS: tls, APIKey: apiKey})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return srv
}

// connect dials with c and checks the namespace as a starting process
// does.
func connect(t *testing.T, c temporalconn.Config) error {
	t.Helper()
	opts, err := c.Options(client.Options{})
	if err != nil {
		return err
	}
	tc, err := client.NewLazyClient(opts)
	if err != nil {
		return err
	}
	defer tc.Close()
	return temporalconn.Check(context.Background(), tc, c, 3*time.Second)
}

func wantRefused(t *testing.T, what string, err error, says ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: connected", what)
	}
	for _, s := range says {
		if !strings.Contains(err.Error(), s) {
			t.Fatalf("%s: %v; want it to say %q", what, err, s)
		}
	}
	t.Logf("%s: %v", what, err)
}

// TLS verifying the server: with the cluster's CA the client connects;
// without it (the system's authorities), in plaintext, or checking
// another name, it is refused at once with the reason.
func TestTLSVerifiesTheServer(t *testing.T) {
	p := testpki.New(t, "cluster")
	srv := server(t, p, false, "")
	base := temporalconn.Config{Address: srv.Address, Namespace: srv.Namespace}

	ok := base
	ok.CAFile = p.CAFile
	if err := connect(t, ok); err != nil {
		t.Fatalf("TLS with the cluster's CA: %v", err)
	}
	system := base
	system.TLS = true
	wantRefused(t, "TLS with the system's authorities", connect(t, system), "TLS handshake failed", "certificate")
	otherName := ok
	otherName.ServerName = "temporal.example.com"
	wantRefused(t, "TLS checking another name", connect(t, otherName), "TLS handshake failed")
	wantRefused(t, "plaintext to a TLS server", connect(t, base), "cannot be reached")
	missing := ok
	missing.Namespace = "nowhere"
	wantRefused(t, "a namespace that does not exist", connect(t, missing), `namespace "nowhere" does not exist`)
}

// Mutual TLS: a client certificate the cluster's CA signed connects; none,
// or one another CA signed, is refused.
func TestMutualTLS(t *testing.T) {
	p := testpki.New(t, "cluster")
	srv := server(t, p, true, "")
	base := temporalconn.Config{Address: srv.Address, Namespace: srv.Namespace, CAFile: p.CAFile}

	ok := base
	ok.CertFile, ok.KeyFile = p.Issue(t, "paymentsd")
	if err := connect(t, ok); err != nil {
		t.Fatalf("mutual TLS with the cluster's certificate: %v", err)
	}
	wantRefused(t, "no client certificate", connect(t, base))
	stranger := base
	stranger.CertFile, stranger.KeyFile = testpki.New(t, "stranger").Issue(t, "paymentsd")
	wantRefused(t, "a certificate another CA signed", connect(t, stranger))
}

// An API key (Temporal Cloud's): sent over TLS with every call; a wrong
// key or none is refused, saying the credentials were.
func TestAPIKey(t *testing.T) {
	p := testpki.New(t, "cloud")
	srv := server(t, p, false, "tcld-key-of-the-engine")
	base := temporalconn.Config{Address: srv.Address, Namespace: srv.Namespace, CAFile: p.CAFile}

	ok := base
	ok.APIKey = "tcld-key-of-the-engine"
	if err := connect(t, ok); err != nil {
		t.Fatalf("the API key: %v", err)
	}
	wrong := base
	wrong.APIKey = "tcld-key-of-someone-else"
	wantRefused(t, "a wrong API key", connect(t, wrong), "refused this client's credentials")
	wantRefused(t, "no API key", connect(t, base), "refused this client's credentials")
}

// `paymentsd api` as an operator starts it against a cluster with mutual
// TLS: without its client certificate it stops at once and says why;
// with it, it serves, and /readyz finds Temporal.
func TestTheAPIProcessOverMutualTLS(t *testing.T) {
	dbURL, drop, err := storetest.CreateDB()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(drop)
	p := testpki.New(t, "cluster")
	srv := server(t, p, true, "")
	bin := filepath.Join(t.TempDir(), "paymentsd")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/paymentsd").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", freeport.Pick())
	env := append(os.Environ(), "DATABASE_URL="+dbURL, "HTTP_ADDR="+addr, "TEMPORAL_ADDRESS="+srv.Address,
		"TEMPORAL_NAMESPACE="+srv.Namespace, "TEMPORAL_TLS_CA_FILE="+p.CAFile)

	refused := exec.Command(bin, "api")
	refused.Env = env
	started := time.Now()
	out, err := refused.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "the TLS handshake failed (TLS)") || time.Since(started) > 20*time.Second {
		t.Fatalf("paymentsd api without its client certificate: %v after %s\n%s", err, time.Since(started).Round(time.Second), out)
	}

	cert, key := p.Issue(t, "paymentsd")
	api := exec.Command(bin, "api")
	api.Env = append(env, "TEMPORAL_TLS_CERT_FILE="+cert, "TEMPORAL_TLS_KEY_FILE="+key)
	var logs strings.Builder
	api.Stdout, api.Stderr = &logs, &logs
	if err := api.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = api.Process.Kill(); _, _ = api.Process.Wait() }()
	testwait.Until(t, 60*time.Second, func() (bool, string) {
		res, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			return false, fmt.Sprintf("/readyz: %v\n%s", err, logs.String())
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		return res.StatusCode == http.StatusOK, fmt.Sprintf("/readyz: %d %s\n%s", res.StatusCode, body, logs.String())
	})
}
