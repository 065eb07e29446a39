package redact

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

func TestURLKeepsTheHostAndFingerprintsTheRest(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"https://eth-mainnet.g.alchemy.com/v2/k3yk3yk3yk3yk3yk3y", "https://eth-mainnet.g.alchemy.com/…#"},
		{"https://api.node.example:8545/?apikey=s3cr3ts3cr3t", "https://api.node.example:8545/…#"},
		{"http://rpcuser:pw@127.0.0.1:18443", "http://127.0.0.1:18443/…#"},
		{"http://127.0.0.1:8545", "http://127.0.0.1:8545"},
		{"http://127.0.0.1:8545/", "http://127.0.0.1:8545"},
	} {
		got := URL(c.in)
		if !strings.HasPrefix(got, c.want) || (strings.HasSuffix(c.want, "#") && len(got) != len(c.want)+8) {
			t.Errorf("URL(%q) = %q; want %q and a fingerprint", c.in, got, c.want)
		}
	}
	a, b := URL("https://h.example/v2/aaaaaaaaaaaa"), URL("https://h.example/v2/bbbbbbbbbbbb")
	if a == b || a != URL("https://h.example/v2/aaaaaaaaaaaa") {
		t.Errorf("two keys on one host read %q and %q; want different and stable", a, b)
	}
}

// A log line and an error wrapped by net/http, for every form in which a
// configured URL's secrets can appear, keep none of them.
func TestHandlerScrubsRegisteredSecrets(t *testing.T) {
	rpc := "https://eth-mainnet.g.alchemy.com/v2/alchemyKEY123456789?apikey=queryKEY98765&x=1"
	db := "postgres://payments:dbPassw0rd!@db.internal:5432/payments?sslmode=verify-full"
	RegisterURL(rpc)
	RegisterURL(db)
	Register("temporal-api-key-0123456789")
	var buf bytes.Buffer
	log := slog.New(Handler(slog.NewJSONHandler(&buf, nil)))
	_, dialErr := http.Get("http://user:hunter2hunter2@127.0.0.1:1/v3/pathKEY5555555")
	RegisterURL("http://user:hunter2hunter2@127.0.0.1:1/v3/pathKEY5555555")
	log.Error("rpc "+rpc+" failed", "err", fmt.Errorf("call: %w", dialErr), "db", db,
		slog.Group("temporal", "apiKey", "temporal-api-key-0123456789"),
		"urls", []string{rpc}, "detail", map[string]any{"dsn": db})
	log.With("endpoint", rpc).Warn("x")
	out := buf.String()
	for _, s := range []string{"alchemyKEY123456789", "queryKEY98765", "dbPassw0rd", "temporal-api-key-0123456789",
		"hunter2hunter2", "pathKEY5555555"} {
		if strings.Contains(out, s) {
			t.Errorf("the log holds %q:\n%s", s, out)
		}
	}
	if !strings.Contains(out, "https://eth-mainnet.g.alchemy.com/…#") || !strings.Contains(out, "db.internal:5432") {
		t.Errorf("the log no longer names the endpoints:\n%s", out)
	}
	err := Error(fmt.Errorf("dial: %w", dialErr))
	if strings.Contains(err.Error(), "hunter2hunter2") || !errors.Is(err, dialErr) {
		t.Errorf("Error(%v): want the password gone and the cause kept", err)
	}
}
