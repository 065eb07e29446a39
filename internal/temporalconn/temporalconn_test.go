package temporalconn

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/sdk/client"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// The environment's settings: defaults, the mode they make, and a clear
// error for each that cannot work, before anything is dialled.
func TestFromEnv(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "api-key")
	if err := os.WriteFile(keyFile, []byte("tcld-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	notPEM := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	openKey := filepath.Join(dir, "client-key.pem") // a private key others can read
	if err := os.WriteFile(openKey, []byte("not a key"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := FromEnv(envOf(nil))
	if err != nil || c.Address != "127.0.0.1:7233" || c.Namespace != "default" || c.Mode() != "plaintext" {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	if opts, err := c.Options(client.Options{}); err != nil || opts.ConnectionOptions.TLS != nil || opts.Credentials != nil {
		t.Fatalf("plaintext options: %+v %v", opts, err)
	}
	c, err = FromEnv(envOf(map[string]string{"TEMPORAL_ADDRESS": "ns.acct.tmprl.cloud:7233", "TEMPORAL_NAMESPACE": "ns.acct",
		"TEMPORAL_API_KEY_FILE": keyFile}))
	if err != nil || c.APIKey != "tcld-secret" || c.Mode() != "TLS and API key" {
		t.Fatalf("an API key from a file: %+v %v", c, err)
	}
	opts, err := c.Options(client.Options{})
	if err != nil || opts.ConnectionOptions.TLS == nil || opts.Credentials == nil || opts.HostPort != "ns.acct.tmprl.cloud:7233" {
		t.Fatalf("an API key's options: TLS %v, credentials %v, %v", opts.ConnectionOptions.TLS, opts.Credentials, err)
	}
	for _, bad := range []struct {
		env  map[string]string
		says string
	}{
		{map[string]string{"TEMPORAL_TLS": "yes"}, "TEMPORAL_TLS: want true or false"},
		{map[string]string{"TEMPORAL_TLS_CERT_FILE": "client.pem"}, "mutual TLS needs both"},
		{map[string]string{"TEMPORAL_TLS_CA_FILE": notPEM}, "holds no PEM certificate"},
		{map[string]string{"TEMPORAL_TLS_CA_FILE": filepath.Join(dir, "missing.pem")}, "TEMPORAL_TLS_CA_FILE: open"},
		{map[string]string{"TEMPORAL_TLS_CERT_FILE": notPEM, "TEMPORAL_TLS_KEY_FILE": notPEM}, "TEMPORAL_TLS_CERT_FILE and TEMPORAL_TLS_KEY_FILE"},
		{map[string]string{"TEMPORAL_API_KEY": "k", "TEMPORAL_API_KEY_FILE": keyFile}, "give one or the other"},
		{map[string]string{"TEMPORAL_TLS_CERT_FILE": notPEM, "TEMPORAL_TLS_KEY_FILE": openKey}, "TEMPORAL_TLS_KEY_FILE: " + openKey},
	} {
		if _, err := FromEnv(envOf(bad.env)); err == nil || !strings.Contains(err.Error(), bad.says) {
			t.Errorf("%v: %v; want an error saying %q", bad.env, err, bad.says)
		}
	}
}
