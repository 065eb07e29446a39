package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/internal/redact"
)

// A process configured with secret-looking values (an RPC URL with a key
// in its path and its query, a Bitcoin node's password, a database
// password, a Temporal API key, a webhook encryption key) writes none of
// them: not in the lines logged while it connects to nodes that refuse
// or do not answer, not in the errors those return (net/http's carry the
// whole URL), not in the error it exits with. Each endpoint is still
// named by its host.
func TestSecretsStayOutOfTheLogsAndErrors(t *testing.T) {
	// A node that answers every call with an HTTP 500, and one that is
	// not there at all.
	var calls int
	node := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		http.Error(w, "upstream trouble", http.StatusInternalServerError)
	}))
	defer node.Close()
	const (
		pathKey   = "alchemyPathKey0123456789abcdef"
		queryKey  = "infuraQueryKey9876543210"
		btcPass   = "btcNodePassw0rd42"
		dbPass    = "dbPassw0rdXYZ"
		temporal  = "temporal-cloud-api-key-abcdef0123456789"
		webhookKy = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	)
	answering := node.URL + "/v2/" + pathKey + "?apikey=" + queryKey
	absent := "http://127.0.0.1:1/v3/" + pathKey + "?apikey=" + queryKey
	bitcoin := "http://rpcuser:" + btcPass + "@127.0.0.1:1/wallet/" + pathKey
	t.Setenv("DATABASE_URL", "postgres://payments:"+dbPass+"@127.0.0.1:1/payments?sslmode=disable")
	t.Setenv("TEMPORAL_API_KEY", temporal)
	t.Setenv("TEMPORAL_ADDRESS", "127.0.0.1:1")
	t.Setenv("WEBHOOK_SECRET_KEY", webhookKy)
	t.Setenv("NETWORKS", fmt.Sprintf(`[{"key":"sepolia","chainId":11155111,"rpcUrls":[%q,%q]},
		{"key":"bitcoin-regtest","kind":"bitcoin","chain":"regtest","rpcUrls":[%q]}]`, answering, absent, bitcoin))
	var logs bytes.Buffer
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(newLogger(&logs))

	c, err := loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var errs []string
	chains, err := chainwatch.Connect(ctx, c.Networks, c.Catalog, nil)
	if err != nil {
		errs = append(errs, err.Error())
		slog.Error("connect", "err", err)
	} else {
		for _, key := range []string{"sepolia", "bitcoin-regtest"} {
			_, err := chains[key].Family().Head(ctx)
			if err == nil {
				t.Fatalf("%s answered; want the nodes to fail", key)
			}
			errs = append(errs, err.Error())
			slog.Error("network unreachable", "network", key, "err", err)
		}
	}
	if calls == 0 {
		t.Fatal("the answering node was never called")
	}
	// The database and Temporal are not there: the error the process
	// would exit with, as main writes it.
	_, err = open(ctx, c, nil)
	if err == nil {
		t.Fatal("open: want an error without a database")
	}
	exit := fmt.Sprintf("paymentsd: %v", redact.Error(err))
	slog.Error("start", "err", err, "config", fmt.Sprintf("%+v", c))

	out := logs.String() + strings.Join(errs, "\n") + "\n" + exit
	for _, s := range []string{pathKey, queryKey, btcPass, dbPass, temporal, webhookKy} {
		if strings.Contains(out, s) {
			i := strings.Index(out, s)
			t.Errorf("%.8s… is written: %s", s, out[max(0, i-200):min(len(out), i+100)])
		}
	}
	host := strings.TrimPrefix(node.URL, "http://")
	if !strings.Contains(out, host) {
		t.Errorf("the answering node's host %s is named nowhere:\n%s", host, out)
	}
	if len(logs.String()) == 0 {
		t.Error("nothing was logged: the test proves nothing")
	}
}
