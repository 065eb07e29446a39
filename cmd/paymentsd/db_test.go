package main

import (
	"context"
	"testing"

	"github.com/paymentsd/paymentsd/dev/devchain"
	"github.com/paymentsd/paymentsd/service"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/store/storetest"
)

// testStore opens a store over a fresh test database, closed when the
// test ends, and returns the database's URL with it.
func testStore(t *testing.T) (*store.Store, string) {
	t.Helper()
	url := storetest.NewDB(t)
	st, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st, url
}

// adminStore is testStore for the admin commands: DATABASE_URL names its
// database, as they read it.
func adminStore(t *testing.T) *store.Store {
	t.Helper()
	st, url := testStore(t)
	t.Setenv("DATABASE_URL", url)
	return st
}

// createProject creates a project named name.
func createProject(t *testing.T, e *service.Service, name string) service.CreatedProject {
	t.Helper()
	p, err := e.Checkout().CreateProject(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// startChain starts a dev chain, closed when the test ends.
func startChain(t *testing.T) *devchain.Chain {
	t.Helper()
	chain, err := devchain.Start(context.Background(), devchain.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = chain.Close() })
	return chain
}
