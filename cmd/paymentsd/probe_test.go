package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// The health check of the compose file's containers: 2xx is healthy, an
// error status or a node without a chain ID is not.
func TestProbe(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/readyz":
			w.WriteHeader(http.StatusOK)
		case "/rpc":
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":"0x539"}`)
		case "/not-a-node":
			_, _ = io.WriteString(w, `{}`)
		default:
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	for _, c := range []struct {
		args    []string
		healthy bool
	}{
		{[]string{srv.URL + "/readyz"}, true},
		{[]string{srv.URL + "/starting"}, false},
		{[]string{"--jsonrpc", srv.URL + "/rpc"}, true},
		{[]string{"--jsonrpc", srv.URL + "/not-a-node"}, false},
		{[]string{"http://127.0.0.1:1/readyz"}, false},
		{nil, false},
	} {
		if err := runProbe(ctx, c.args, io.Discard); (err == nil) != c.healthy {
			t.Errorf("probe %v: %v; want healthy %v", c.args, err, c.healthy)
		}
	}
}
