package main

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"strconv"
	"testing"

	"github.com/paymentsd/paymentsd/api"
	"github.com/paymentsd/paymentsd/dev/devchain"
	"github.com/paymentsd/paymentsd/service"
)

// `paymentsd dev verify-recipient` signs in as the dev stack's user,
// claims a dev account's address (by index or by address) and verifies it
// with the account's key: the project then owns it. Again is a no-op; an
// address whose key is not a dev account's is refused.
func TestDevVerifyRecipient(t *testing.T) {
	ctx := context.Background()
	st, _ := testStore(t)
	e := service.New(service.Deps{Store: st})
	p := createProject(t, e, "Dev shop")
	u, err := e.Identity().CreateUser(ctx, "dev@example.com", "the dev user's password")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Access().AddOwner(ctx, p.Project.ID, u.ID); err != nil {
		t.Fatal(err)
	}
	a, err := api.New(e, api.Config{PublicURL: "http://dev.example"})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	dir := t.TempDir()
	raw, _ := json.Marshal(devState{ProjectID: p.Project.ID, UserEmail: "dev@example.com", UserPassword: "the dev user's password"})
	if err := os.WriteFile(devStateFile(dir), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	two, _ := devchain.DevAccount(2)
	for _, who := range []string{"1", two.Address.Hex(), "1"} {
		if err := runDevVerifyRecipient(ctx, []string{who, "--api", srv.URL, "--data", dir}); err != nil {
			t.Fatalf("verify-recipient %s: %v", who, err)
		}
	}
	for i := range 3 {
		acc, _ := devchain.DevAccount(i)
		r, err := st.Checkout().GetRecipient(ctx, p.Project.ID, false, acc.Address.Hex())
		if verified := err == nil && r.Verified(); verified != (i > 0) {
			t.Errorf("dev account %d verified: %v (%+v, %v)", i, verified, r, err)
		}
	}
	if err := runDevVerifyRecipient(ctx, []string{"0x000000000000000000000000000000000000dEaD", "--api", srv.URL, "--data", dir}); err == nil {
		t.Error("an address without a dev account's key was verified")
	}
	if err := runDevVerifyRecipient(ctx, []string{strconv.Itoa(3), "--api", srv.URL, "--data", t.TempDir()}); err == nil {
		t.Error("verified without the dev stack's state")
	}
}
