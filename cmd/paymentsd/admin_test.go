package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/engine"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/store/storetest"
)

// `paymentsd admin create-project --json` prints one JSON object whose
// keys work: the live key acts in live mode, the sandbox key in sandbox.
func TestAdminCreateProjectJSON(t *testing.T) {
	url := storetest.NewDB(t)
	t.Setenv("DATABASE_URL", url)
	r, w, _ := os.Pipe()
	stdout := os.Stdout
	os.Stdout = w
	err := runAdmin(context.Background(), []string{"create-project", "--name", "Scripted shop", "--json"})
	w.Close()
	os.Stdout = stdout
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(r)
	var got struct{ ProjectID, LiveKey, SandboxKey string }
	if err := json.Unmarshal(out, &got); err != nil || strings.Count(string(out), "\n") != 1 {
		t.Fatalf("output is not one JSON object: %q (%v)", out, err)
	}
	st, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	e := &engine.Engine{Store: st}
	for key, live := range map[string]bool{got.LiveKey: true, got.SandboxKey: false} {
		p, err := e.Authenticate(context.Background(), key)
		if err != nil || p.ProjectID != got.ProjectID || p.IsLive != live {
			t.Errorf("key %.14s…: %+v %v", key, p, err)
		}
	}
	if !strings.HasPrefix(got.LiveKey, "svc_live_") || !strings.HasPrefix(got.SandboxKey, "svc_test_") {
		t.Errorf("key prefixes: %q %q", got.LiveKey, got.SandboxKey)
	}
	if err := runAdmin(context.Background(), []string{"create-project", "--name", ""}); err == nil {
		t.Error("an empty name must be refused")
	}
}

func TestCheckAssetsNamesTheBadEntry(t *testing.T) {
	if err := checkAssets(defaultAssets); err != nil {
		t.Fatalf("default catalog: %v", err)
	}
	bad := append(defaultAssets[:1:1], defaultAssets[0])
	if err := checkAssets(bad); err == nil || !strings.Contains(err.Error(), "listed twice") {
		t.Errorf("duplicate id: %v", err)
	}
	wrong := defaultAssets[0]
	wrong.ID, wrong.TokenAddress = "usdc-x", "0x123"
	if err := checkAssets([]payment.Asset{wrong}); err == nil || !strings.Contains(err.Error(), `"usdc-x"`) {
		t.Errorf("bad token address: %v", err)
	}
}
