// Package temporalconn is how the API, the worker and the admin commands
// reach Temporal: its address and namespace, and the security a
// production cluster or Temporal Cloud asks for — TLS verifying the
// server, mutual TLS with a client certificate, an API key — read from
// the environment, and checked at start.
package temporalconn

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/paymentsd/paymentsd/internal/secretfile"
)

// Config says where Temporal is and how to reach it.
type Config struct {
	Address   string // TEMPORAL_ADDRESS, host:port
	Namespace string // TEMPORAL_NAMESPACE
	// TLS (TEMPORAL_TLS=true) verifies the server against the system's
	// certificate authorities, or CAFile's. Every setting below implies it.
	TLS bool
	// CAFile (TEMPORAL_TLS_CA_FILE) holds the PEM certificates of the
	// authorities the server's certificate is verified against, instead of
	// the system's: a cluster's own CA.
	CAFile string
	// CertFile and KeyFile (TEMPORAL_TLS_CERT_FILE, TEMPORAL_TLS_KEY_FILE)
	// are the client's certificate and key for mutual TLS.
	CertFile, KeyFile string
	// ServerName (TEMPORAL_TLS_SERVER_NAME) is the name the server's
	// certificate is verified for, when it is not the address's host.
	ServerName string
	// APIKey (TEMPORAL_API_KEY, or TEMPORAL_API_KEY_FILE) is sent with
	// every call as a bearer token: Temporal Cloud's API keys.
	APIKey string
}

// FromEnv reads the configuration from the environment (getenv); a
// secret's _FILE variable names a file holding it.
func FromEnv(getenv func(string) string) (Config, error) {
	c := Config{Address: getenv("TEMPORAL_ADDRESS"), Namespace: getenv("TEMPORAL_NAMESPACE"),
		CAFile: getenv("TEMPORAL_TLS_CA_FILE"), CertFile: getenv("TEMPORAL_TLS_CERT_FILE"), KeyFile: getenv("TEMPORAL_TLS_KEY_FILE"),
		ServerName: getenv("TEMPORAL_TLS_SERVER_NAME"), APIKey: getenv("TEMPORAL_API_KEY")}
	if c.Address == "" {
		c.Address = "127.0.0.1:7233"
	}
	if c.Namespace == "" {
		c.Namespace = "default"
	}
	switch v := getenv("TEMPORAL_TLS"); v {
	case "", "false":
	case "true":
		c.TLS = true
	default:
		return c, fmt.Errorf("TEMPORAL_TLS: want true or false, not %q", v)
	}
	if path := getenv("TEMPORAL_API_KEY_FILE"); path != "" {
		if c.APIKey != "" {
			return c, errors.New("TEMPORAL_API_KEY and TEMPORAL_API_KEY_FILE: give one or the other")
		}
		var err error
		if c.APIKey, err = secretfile.Read("TEMPORAL_API_KEY_FILE", path); err != nil {
			return c, err
		}
	}
	if (c.CertFile == "") != (c.KeyFile == "") {
		return c, errors.New("TEMPORAL_TLS_CERT_FILE and TEMPORAL_TLS_KEY_FILE: mutual TLS needs both the certificate and its key")
	}
	if _, err := c.tlsConfig(); err != nil {
		return c, err
	}
	return c, nil
}

// Secure tells whether the connection uses TLS: asked for, or implied by
// a CA, a client certificate, a server name or an API key (which is never
// sent in the clear).
func (c Config) Secure() bool {
	return c.TLS || c.CAFile != "" || c.CertFile != "" || c.ServerName != "" || c.APIKey != ""
}

// Mode names the connection's security, for the logs.
func (c Config) Mode() string {
	switch {
	case c.CertFile != "" && c.APIKey != "":
		return "mutual TLS and API key"
	case c.CertFile != "":
		return "mutual TLS"
	case c.APIKey != "":
		return "TLS and API key"
	case c.Secure():
		return "TLS"
	}
	return "plaintext"
}

// tlsConfig loads the certificates; nil for a plaintext connection.
func (c Config) tlsConfig() (*tls.Config, error) {
	if !c.Secure() {
		return nil, nil
	}
	t := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.ServerName}
	if c.CAFile != "" {
		pem, err := os.ReadFile(c.CAFile)
		if err != nil {
			return nil, fmt.Errorf("TEMPORAL_TLS_CA_FILE: %w", err)
		}
		t.RootCAs = x509.NewCertPool()
		if !t.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("TEMPORAL_TLS_CA_FILE: %s holds no PEM certificate", c.CAFile)
		}
	}
	if c.CertFile != "" {
		// The client's private key is a secret file: refused if others
		// can read it, as every *_FILE secret is.
		if err := secretfile.Check("TEMPORAL_TLS_KEY_FILE", c.KeyFile); err != nil {
			return nil, err
		}
		cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("TEMPORAL_TLS_CERT_FILE and TEMPORAL_TLS_KEY_FILE: %w", err)
		}
		t.Certificates = []tls.Certificate{cert}
	}
	return t, nil
}

// Options are the client options of the connection, over base (its
// logger, interceptors, metrics).
func (c Config) Options(base client.Options) (client.Options, error) {
	base.HostPort, base.Namespace = c.Address, c.Namespace
	t, err := c.tlsConfig()
	if err != nil {
		return base, err
	}
	base.ConnectionOptions.TLS = t
	if c.APIKey != "" {
		base.Credentials = client.NewAPIKeyStaticCredentials(c.APIKey)
	}
	return base, nil
}

// Check asks Temporal for the namespace, for up to wait while the server
// cannot be reached, and says plainly what is wrong: an unreachable
// server or a TLS handshake that failed, credentials refused, a namespace
// that does not exist. Each ask has a few seconds of its own, so an ask
// that hangs on a connection the server dropped (a busy machine, a
// handshake refused after it seemed done) leaves time for the next, and
// the error given at the end is the last one the server gave, not the
// deadline's.
func Check(ctx context.Context, tc client.Client, c Config, wait time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var last error
	for {
		ask, cancelAsk := context.WithTimeout(ctx, checkAttempt)
		_, err := tc.WorkflowService().DescribeNamespace(ask, &workflowservice.DescribeNamespaceRequest{Namespace: c.Namespace})
		cancelAsk()
		var unavailable *serviceerror.Unavailable
		var notFound *serviceerror.NamespaceNotFound
		var denied *serviceerror.PermissionDenied
		switch {
		case err == nil:
			return nil
		case errors.As(err, &notFound):
			return fmt.Errorf("temporal at %s: the namespace %q does not exist (TEMPORAL_NAMESPACE)", c.Address, c.Namespace)
		case errors.As(err, &denied), strings.Contains(err.Error(), "Unauthenticated"), strings.Contains(err.Error(), "Request unauthorized"):
			return fmt.Errorf("temporal at %s: the namespace %q refused this client's credentials (%s): %v", c.Address, c.Namespace, c.Mode(), err)
		case tlsFailure(err):
			return fmt.Errorf("temporal at %s: the TLS handshake failed (%s): %v", c.Address, c.Mode(), err)
		case ctx.Err() == nil && (errors.As(err, &unavailable) || ask.Err() != nil):
			if ask.Err() == nil {
				last = err
			}
			select {
			case <-ctx.Done():
			case <-time.After(500 * time.Millisecond):
			}
			continue
		}
		if last != nil {
			err = last
		}
		return fmt.Errorf("temporal at %s (namespace %q, %s) cannot be reached: %v", c.Address, c.Namespace, c.Mode(), err)
	}
}

// checkAttempt bounds one ask of Check.
const checkAttempt = 5 * time.Second

// tlsFailure tells an error of a TLS handshake (a certificate refused,
// a server that speaks no TLS) from one of a server not reached.
func tlsFailure(err error) bool {
	var unavailable *serviceerror.Unavailable
	if !errors.As(err, &unavailable) {
		return false
	}
	m := err.Error()
	return strings.Contains(m, "certificate") || strings.Contains(m, "handshake") || strings.Contains(m, "tls")
}
