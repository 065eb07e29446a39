package main

import (
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/api"
	"github.com/paymentsd/paymentsd/worker"
)

func TestTrustedProxies(t *testing.T) {
	cases := []struct {
		env  string
		want []string // nil: refused
	}{
		{"", []string{}},
		{"10.0.0.0/8", []string{"10.0.0.0/8"}},
		{" 10.0.0.0/8 , fd00::/8,", []string{"10.0.0.0/8", "fd00::/8"}},
		{"192.0.2.10", []string{"192.0.2.10/32"}},
		{"2001:db8::1", []string{"2001:db8::1/128"}},
		{"10.1.2.3/8", []string{"10.0.0.0/8"}},
		{"::ffff:10.0.0.0/104", []string{"10.0.0.0/8"}},
		{"10.0.0.0/33", nil},
		{"proxy.internal", nil},
		{"10.0.0.0/8;172.16.0.0/12", nil},
	}
	for _, c := range cases {
		t.Setenv("TRUSTED_PROXIES", c.env)
		cfg, err := loadConfig()
		if c.want == nil {
			if err == nil || !strings.HasPrefix(err.Error(), "TRUSTED_PROXIES: ") {
				t.Errorf("TRUSTED_PROXIES=%q: error %v, want one naming the variable", c.env, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("TRUSTED_PROXIES=%q: %v", c.env, err)
			continue
		}
		got := []string{}
		for _, p := range cfg.TrustedProxies {
			got = append(got, p.String())
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("TRUSTED_PROXIES=%q: %v, want %v", c.env, got, c.want)
		}
	}
	// A proxy given as a mapped network trusts the IPv4 peers it names.
	ps, err := parseTrustedProxies("::ffff:10.0.0.0/104")
	if err != nil || !ps[0].Contains(netip.MustParseAddr("10.1.2.3")) {
		t.Errorf("mapped network: %v, %v", ps, err)
	}
}

// WEBHOOK_SECRET_KEY keeps taking one bare key (the legacy key, ID "0")
// and takes a rotation's list of ID:key entries, newest first; a bad
// value names the variable and never echoes key material.
func TestWebhookSecretKeyConfig(t *testing.T) {
	hexKey, other := strings.Repeat("ab", 32), strings.Repeat("cd", 32)
	for env, want := range map[string][]string{
		hexKey:                          {"0"},
		"k2:" + other + "," + hexKey:    {"k2", "0"},
		"k2:" + other + ",k1:" + hexKey: {"k2", "k1"},
	} {
		t.Setenv("WEBHOOK_SECRET_KEY", env)
		c, err := loadConfig()
		if err != nil {
			t.Errorf("%.12s…: %v", env, err)
			continue
		}
		var ids []string
		for _, k := range c.WebhookKeys {
			ids = append(ids, k.ID)
		}
		if !slices.Equal(ids, want) {
			t.Errorf("%.12s…: key IDs %v, want %v", env, ids, want)
		}
		if s := sealer(c); s == nil || s.NewestKeyID() != want[0] {
			t.Errorf("%.12s…: sealer %v", env, s)
		}
	}
	for _, env := range []string{hexKey[:40], "k1:" + hexKey + ",k1:" + other, hexKey + "," + other} {
		t.Setenv("WEBHOOK_SECRET_KEY", env)
		_, err := loadConfig()
		if err == nil || !strings.HasPrefix(err.Error(), "WEBHOOK_SECRET_KEY: ") || strings.Contains(err.Error(), hexKey[:40]) {
			t.Errorf("%.12s…: error %v", env, err)
		}
	}
}

// The secrets read from files, as Kubernetes and Docker mount them: the
// file's content (an editor's newline trimmed); a variable and its _FILE
// both set, or an empty or missing file, are refused by name.
func TestSecretsFromFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	t.Setenv("DATABASE_URL_FILE", write("db", "postgres://engine:s3cret@db.internal:5432/paymentsd?sslmode=verify-full\n"))
	t.Setenv("DATABASE_READ_URL_FILE", write("replica", "postgres://reader:s3cret@replica.internal:5432/paymentsd\n"))
	t.Setenv("REDIS_URL_FILE", write("redis", "rediss://:pw@redis.internal:6380/0"))
	t.Setenv("WEBHOOK_SECRET_KEY_FILE", write("webhook", strings.Repeat("ab", 32)+"\n"))
	c, err := loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	if c.DatabaseURL != "postgres://engine:s3cret@db.internal:5432/paymentsd?sslmode=verify-full" || c.RedisURL != "rediss://:pw@redis.internal:6380/0" ||
		len(c.WebhookKeys) != 1 || c.DatabaseReadURL != "postgres://reader:s3cret@replica.internal:5432/paymentsd" {
		t.Fatalf("config from files: %q %q %q %d webhook keys", c.DatabaseURL, c.DatabaseReadURL, c.RedisURL, len(c.WebhookKeys))
	}
	for _, bad := range []struct{ name, file, value, says string }{
		{"DATABASE_URL", write("db2", "postgres://x"), "postgres://y", "DATABASE_URL and DATABASE_URL_FILE: give one or the other"},
		{"REDIS_URL", write("empty", "\n"), "", "REDIS_URL_FILE: " + filepath.Join(dir, "empty") + " is empty"},
		{"WEBHOOK_SECRET_KEY", filepath.Join(dir, "missing"), "", "WEBHOOK_SECRET_KEY_FILE: open"},
	} {
		t.Run(bad.name, func(t *testing.T) {
			t.Setenv(bad.name+"_FILE", bad.file)
			t.Setenv(bad.name, bad.value)
			if _, err := loadConfig(); err == nil || !strings.Contains(err.Error(), bad.says) {
				t.Errorf("%v; want an error saying %q", err, bad.says)
			}
		})
	}
}

// A Bitcoin network in the configuration is checked, then refused at
// start, saying so: the engine does not serve Bitcoin yet, and a
// configuration that seemed to take it would leave payments unseen.
func TestABitcoinNetworkIsCheckedAtStart(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "networks.json")
	for body, want := range map[string]string{
		`[{"key": "bitcoin-regtest", "kind": "bitcoin", "chain": "regtest", "rpcUrls": ["http://u:p@127.0.0.1:18443"]}]`: ``,
		`[{"key": "bitcoin", "kind": "bitcoin", "chain": "mainnet", "rpcUrls": ["http://u:p@127.0.0.1:8332"]}]`:          `network "bitcoin": a Bitcoin network is live exactly when its chain is mainnet`,
	} {
		if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv("NETWORKS_FILE", file)
		c, err := loadConfig()
		switch {
		case want == "" && (err != nil || len(c.Networks) != 1 || c.Networks[0].Kind != "bitcoin"):
			t.Errorf("%s: %v; want it served", body, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: %v; want %q", body, err, want)
		}
	}
}

// A deployment's process refuses a database it would reach without
// verifying the server, off this machine, unless told so explicitly.
func TestADatabaseOffThisMachineMustBeVerified(t *testing.T) {
	t.Setenv("PGSSLMODE", "")
	for _, c := range []struct{ url, insecure, says string }{
		{"postgres://engine:pw@db.internal:5432/paymentsd?sslmode=require", "", "DATABASE_URL: the connection to db.internal does not verify the server's certificate (sslmode require)"},
		{"postgres://engine:pw@db.internal:5432/paymentsd", "", "(sslmode prefer, the default)"},
		{"postgres://engine:pw@db.internal:5432/paymentsd?sslmode=disable", "", "set DATABASE_INSECURE_TLS=true"},
		{"host=10.1.2.3 user=engine dbname=paymentsd sslmode=allow", "", "the connection to 10.1.2.3"},
		// Every host of a multi-host URL is verified.
		{"postgres://engine:pw@127.0.0.1:5432,db.internal:5432/paymentsd?sslmode=disable", "", "the connection to db.internal"},
		{"postgres://engine:pw@db.internal:5432/paymentsd?sslmode=require", "maybe", "DATABASE_INSECURE_TLS: want true or false"},
		{"postgres://engine:pw@db.internal:5432/paymentsd?sslmode=verify-full", "", ""},
		{"postgres://engine:pw@db.internal:5432/paymentsd?sslmode=verify-ca", "", ""},
		{"postgres://engine:pw@db.internal:5432/paymentsd?sslmode=require", "true", ""},
		{"postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "", ""},
		{"postgres://postgres@localhost:5432/postgres?sslmode=disable", "", ""},
		{"postgres://postgres@[::1]:5432/postgres?sslmode=disable", "", ""},
		{"host=/var/run/postgresql dbname=paymentsd sslmode=disable", "", ""},
	} {
		t.Run(c.url, func(t *testing.T) {
			t.Setenv("DATABASE_URL", c.url)
			t.Setenv("DATABASE_INSECURE_TLS", c.insecure)
			_, err := loadProductionConfig()
			switch {
			case c.says == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.says != "" && (err == nil || !strings.Contains(err.Error(), c.says)):
				t.Errorf("%v; want an error saying %q", err, c.says)
			case err != nil && strings.Contains(err.Error(), "pw@"):
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
	// The read replica is held to the same rule.
	t.Setenv("DATABASE_URL", "postgres://engine:pw@db.internal:5432/paymentsd?sslmode=verify-full")
	t.Setenv("DATABASE_READ_URL", "postgres://reader:pw@replica.internal:5432/paymentsd?sslmode=require")
	t.Setenv("DATABASE_INSECURE_TLS", "")
	if _, err := loadProductionConfig(); err == nil || !strings.Contains(err.Error(), "DATABASE_READ_URL: the connection to replica.internal") {
		t.Errorf("%v; want the replica refused", err)
	}
	// The dev stack does not ask it.
	t.Setenv("DATABASE_READ_URL", "")
	t.Setenv("DATABASE_URL", "postgres://engine:pw@db.internal:5432/paymentsd?sslmode=disable")
	if _, err := loadConfig(); err != nil {
		t.Errorf("the dev stack's configuration: %v", err)
	}
}

// A secret's file others can read is refused at start, naming the
// variable, as the CLI refuses its key files.
func TestASecretFileOthersCanReadIsRefused(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"DATABASE_URL", "DATABASE_READ_URL", "REDIS_URL", "WEBHOOK_SECRET_KEY", "TEMPORAL_API_KEY"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, []byte("postgres://x@127.0.0.1/db\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Setenv(name+"_FILE", path)
			want := name + "_FILE: " + path + " can be read by others (mode -rw-r--r--): chmod 600 it"
			if _, err := loadConfig(); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%v; want an error saying %q", err, want)
			}
		})
	}
}

// MAX_INFLIGHT_REQUESTS bounds an API process's requests at once: unset,
// the default; a number that bounds nothing or is not a number stops the
// start, naming the variable.
func TestMaxInflightRequests(t *testing.T) {
	c, err := loadConfig()
	if err != nil || c.MaxInflight != api.DefaultMaxInflight {
		t.Fatalf("unset: %d (%v), want %d", c.MaxInflight, err, api.DefaultMaxInflight)
	}
	t.Setenv("MAX_INFLIGHT_REQUESTS", "64")
	if c, err := loadConfig(); err != nil || c.MaxInflight != 64 || apiConfig(c).MaxInflight != 64 {
		t.Fatalf("64: %d (%v), want the API configured with 64", c.MaxInflight, err)
	}
	for _, v := range []string{"0", "-5", "many", "2000000"} {
		t.Setenv("MAX_INFLIGHT_REQUESTS", v)
		if _, err := loadConfig(); err == nil || !strings.HasPrefix(err.Error(), "MAX_INFLIGHT_REQUESTS: ") {
			t.Errorf("%q: error %v, want one naming MAX_INFLIGHT_REQUESTS", v, err)
		}
	}
}

// WORKER_WORKFLOW_CACHE_SIZE bounds the workflows a worker keeps in
// memory: unset, the default; a bad number stops the start by name.
func TestWorkerWorkflowCacheSize(t *testing.T) {
	c, err := loadConfig()
	if err != nil || c.WorkflowCacheSize != worker.DefaultWorkflowCacheSize {
		t.Fatalf("unset: %d (%v), want %d", c.WorkflowCacheSize, err, worker.DefaultWorkflowCacheSize)
	}
	t.Setenv("WORKER_WORKFLOW_CACHE_SIZE", "500")
	if c, err := loadConfig(); err != nil || c.WorkflowCacheSize != 500 {
		t.Fatalf("500: %d (%v)", c.WorkflowCacheSize, err)
	}
	for _, v := range []string{"0", "-1", "lots"} {
		t.Setenv("WORKER_WORKFLOW_CACHE_SIZE", v)
		if _, err := loadConfig(); err == nil || !strings.HasPrefix(err.Error(), "WORKER_WORKFLOW_CACHE_SIZE: ") {
			t.Errorf("%q: error %v, want one naming WORKER_WORKFLOW_CACHE_SIZE", v, err)
		}
	}
}
