package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/internal/keys"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/store/storetest"
)

// keyVariant is xpub serialized again with another depth, parent
// fingerprint and child number: another string, the same key.
func keyVariant(t *testing.T, xpub string, n uint8) string {
	t.Helper()
	k, err := hdkeychain.NewKeyFromString(xpub)
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := k.ECPubKey()
	return hdkeychain.NewExtendedKey(k.Version(), pub.SerializeCompressed(), k.ChainCode(), []byte{n, n, n, n}, n, uint32(n), false).String()
}

func devKey(t *testing.T, seed string) (xpub, identity string) {
	t.Helper()
	_, xpub, err := keys.NewDevKey([]byte(fmt.Sprintf("%-32s", seed)))
	if err != nil {
		t.Fatal(err)
	}
	k, err := keys.ParseKey(xpub)
	if err != nil {
		t.Fatal(err)
	}
	return xpub, k.Identity()
}

func identityOf(t *testing.T, xpub string) string {
	t.Helper()
	k, err := keys.ParseKey(xpub)
	if err != nil {
		t.Fatal(err)
	}
	return k.Identity()
}

// A key's identity (its public key and chain code) serves one project
// environment for good: another project, in either environment, and the
// project's other environment are refused it under any of its strings,
// even after the project replaced it; the project may set it again.
func TestDepositKeyIdentityServesOneProjectEnvironment(t *testing.T) {
	s := storetest.NewStore(t)
	ctx := context.Background()
	now := time.Now()
	a, b := newProject(t, s).ProjectID, newProject(t, s).ProjectID
	xpub, id := devKey(t, "tenant a")
	if err := s.Chains().SetDepositKey(ctx, a, false, xpub, id, now); err != nil {
		t.Fatal(err)
	}
	variant := keyVariant(t, xpub, 7)
	if variant == xpub || identityOf(t, variant) != id {
		t.Fatal("not a variant")
	}
	for _, c := range []struct {
		project string
		live    bool
		xpub    string
	}{{b, false, variant}, {b, true, variant}, {b, false, xpub}, {b, true, xpub}, {a, true, variant}, {a, true, xpub}} {
		if err := s.Chains().SetDepositKey(ctx, c.project, c.live, c.xpub, id, now); !errors.Is(err, payment.ErrConflict) {
			t.Fatalf("project %s live=%v set the key of project %s's sandbox: %v", c.project, c.live, a, err)
		}
	}
	if got, _, _ := s.Chains().DepositKey(ctx, b, false); got != "" {
		t.Fatalf("the refused key was stored: %s", got)
	}
	// The project's own environment may set it again, in any form.
	if err := s.Chains().SetDepositKey(ctx, a, false, variant, id, now); err != nil {
		t.Fatal(err)
	}
	// Replaced, it stays the project's: its sessions keep its addresses.
	other, otherID := devKey(t, "tenant a, another account")
	if err := s.Chains().SetDepositKey(ctx, a, false, other, otherID, now); err != nil {
		t.Fatal(err)
	}
	if err := s.Chains().SetDepositKey(ctx, b, false, xpub, id, now); !errors.Is(err, payment.ErrConflict) {
		t.Fatalf("a key the project replaced went to another: %v", err)
	}
	if err := s.Chains().SetDepositKey(ctx, a, false, xpub, id, now); err != nil {
		t.Fatalf("the project set its former key again: %v", err)
	}
	claims, err := s.Chains().DepositKeyClaims(ctx, []string{id, otherID, "unknown"})
	if err != nil || len(claims) != 2 || claims[id] != (store.DepositKeyClaim{ProjectID: a}) || claims[otherID] != (store.DepositKeyClaim{ProjectID: a}) {
		t.Fatalf("claims = %v, %v", claims, err)
	}
}

// Projects setting variants of one key at once: exactly one wins.
func TestDepositKeyVariantsRaceOneWinner(t *testing.T) {
	s := storetest.NewStore(t)
	ctx := context.Background()
	xpub, id := devKey(t, "raced key")
	const n = 8
	errs := make([]error, n)
	projects, variants := make([]string, n), make([]string, n)
	for i := range projects {
		projects[i], variants[i] = newProject(t, s).ProjectID, keyVariant(t, xpub, uint8(i+1))
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = s.Chains().SetDepositKey(ctx, projects[i], i%2 == 1, variants[i], id, time.Now())
		}()
	}
	close(start)
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, payment.ErrConflict):
			t.Fatalf("project %d: %v", i, err)
		}
	}
	var rows int
	if err := s.Pool().QueryRow(ctx, `SELECT count(*) FROM project_deposit_keys WHERE key_identity = $1`, id).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if won != 1 || rows != 1 {
		t.Fatalf("%d won, %d stored; want exactly one", won, rows)
	}
}

// Migration 00022 gives the keys stored before it their identity, computed
// in SQL as keys.Key.Identity does, and binds each identity to the
// environment that set it first; a collision already stored keeps both
// rows (neither's sessions stop) and is refused from then on.
func TestDepositKeyIdentityMigration(t *testing.T) {
	ctx := context.Background()
	url := storetest.NewEmptyDB(t)
	_, p := storetest.Migrations(t, url)
	if _, err := p.UpTo(ctx, 21); err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a, b, c := newProject(t, s).ProjectID, newProject(t, s).ProjectID, newProject(t, s).ProjectID
	shared, sharedID := devKey(t, "shared before the check")
	own, ownID := devKey(t, "a key of its own")
	t0 := time.Now().Add(-time.Hour)
	for _, r := range []struct {
		project string
		live    bool
		xpub    string
		at      time.Time
	}{{a, false, shared, t0}, {b, true, keyVariant(t, shared, 3), t0.Add(time.Minute)}, {c, false, own, t0}} {
		if _, err := s.Pool().Exec(ctx, `INSERT INTO project_deposit_keys (project_id, is_live, xpub, created_at) VALUES ($1,$2,$3,$4)`,
			r.project, r.live, r.xpub, r.at); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
	rows, err := s.Pool().Query(ctx, `SELECT xpub, coalesce(key_identity, '') FROM project_deposit_keys`)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	var xpub, stored string
	if _, err := pgx.ForEachRow(rows, []any{&xpub, &stored}, func() error {
		n++
		if want := identityOf(t, xpub); stored != want {
			t.Errorf("%s: migrated identity %q, want %q", xpub, stored, want)
		}
		return nil
	}); err != nil || n != 3 {
		t.Fatalf("%d rows, %v", n, err)
	}
	claims, err := s.Chains().DepositKeyClaims(ctx, []string{sharedID, ownID})
	if err != nil || claims[sharedID] != (store.DepositKeyClaim{ProjectID: a}) || claims[ownID] != (store.DepositKeyClaim{ProjectID: c}) {
		t.Fatalf("claims = %v, %v", claims, err)
	}
	if err := s.Chains().SetDepositKey(ctx, b, true, keyVariant(t, shared, 3), sharedID, time.Now()); !errors.Is(err, payment.ErrConflict) {
		t.Fatalf("the later of a stored collision set the key again: %v", err)
	}
	if err := s.Chains().SetDepositKey(ctx, a, false, shared, sharedID, time.Now()); err != nil {
		t.Fatalf("the first of a stored collision: %v", err)
	}
	if got, _, _ := s.Chains().DepositKey(ctx, b, true); got == "" {
		t.Fatal("the later of a stored collision lost its key")
	}
	// Down and up again.
	if _, err := p.ApplyVersion(ctx, 22, false); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
}

// A session paid on EVM and Bitcoin takes an index of each key in one
// trip, or neither: a project without its Bitcoin key is refused, and its
// deposit key's next address is still the next one handed out, so a
// wallet scanning up to its gap limit finds no hole.
func TestASessionTakesBothIndexesOrNeither(t *testing.T) {
	s := storetest.NewStore(t)
	ctx := context.Background()
	project := newProject(t, s).ProjectID
	xpub, id := devKey(t, "both or neither")
	if err := s.Chains().SetDepositKey(ctx, project, false, xpub, id, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Chains().TakeIndexes(ctx, project, false, true, true); !errors.Is(err, store.ErrNoBitcoinKey) {
		t.Fatalf("a missing Bitcoin key: %v, want ErrNoBitcoinKey", err)
	}
	if _, issued, _ := s.Chains().DepositKey(ctx, project, false); issued != 0 {
		t.Fatalf("the refused session took deposit index %d", issued-1)
	}
	taken, err := s.Chains().TakeIndexes(ctx, project, false, true, false)
	if err != nil || taken.DepositKey != xpub || taken.DepositIndex != 0 {
		t.Fatalf("the next session took %+v, %v; want index 0 of its key", taken, err)
	}
	if _, err := s.Chains().TakeIndexes(ctx, newProject(t, s).ProjectID, false, true, false); !errors.Is(err, store.ErrNoDepositKey) {
		t.Fatalf("a project without a deposit key: %v, want ErrNoDepositKey", err)
	}
}
