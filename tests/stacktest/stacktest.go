// Package stacktest starts the whole engine for a test package: a fresh
// database, the embedded Temporal server, the dev chain with fast blocks,
// and the worker (devstack.Stack, as `paymentsd dev` runs it), plus a
// project with its deposit keys.
//
// The Temporal server keeps its state in memory (SQLite), or, when
// TEMPORAL_PERSISTENCE is postgres, in two fresh databases on the tests'
// Postgres server, dropped at the end.
package stacktest

import (
	"context"
	"crypto/ecdsa"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	sdklog "go.temporal.io/sdk/log"

	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/dev/devchain"
	"github.com/paymentsd/paymentsd/dev/devstack"
	"github.com/paymentsd/paymentsd/internal/keys"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/store/storetest"
)

// Start starts a stack on a fresh database; cfg's DatabaseURL, Chain and
// Devnet are filled in when unset. stop stops it and drops the database.
func Start(cfg devstack.StackConfig) (s *devstack.Stack, stop func(), err error) {
	url, drop, err := storetest.CreateDB()
	if err != nil {
		return nil, nil, err
	}
	cfg.DatabaseURL = url
	temporal, dropTemporal, err := Temporal(url)
	if err != nil {
		drop()
		return nil, nil, err
	}
	cfg.Temporal.PostgresURL = temporal.PostgresURL
	if cfg.Chain.BlockInterval == 0 {
		cfg.Chain.BlockInterval = 250 * time.Millisecond
	}
	if cfg.Devnet.Key == "" {
		cfg.Devnet = chainwatch.Network{Key: "devnet", Confirmations: 3, BlockTime: chainwatch.Duration(250 * time.Millisecond),
			PollInterval: chainwatch.Duration(100 * time.Millisecond), PendingTimeout: chainwatch.Duration(time.Minute)}
	}
	if cfg.Logger == nil {
		cfg.Logger = sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))
	}
	s, err = devstack.StartStack(context.Background(), cfg)
	if err != nil {
		dropTemporal()
		drop()
		return nil, nil, err
	}
	return s, func() { s.Close(); dropTemporal(); drop() }, nil
}

// Temporal is the configuration of a test's Temporal server whose engine
// database is engineURL: in memory, or, when TEMPORAL_PERSISTENCE is
// postgres, on the two databases devstack.TemporalDatabaseURL names beside
// the engine's (fresh, as the engine's is), which drop removes.
func Temporal(engineURL string) (cfg devstack.TemporalConfig, drop func(), err error) {
	switch p := os.Getenv("TEMPORAL_PERSISTENCE"); p {
	case "", "sqlite":
		return cfg, func() {}, nil
	case "postgres":
		if cfg.PostgresURL, err = devstack.TemporalDatabaseURL(engineURL); err != nil {
			return cfg, nil, err
		}
		return cfg, func() { _ = devstack.DropPostgres(context.Background(), cfg.PostgresURL) }, nil
	default:
		return cfg, nil, fmt.Errorf("TEMPORAL_PERSISTENCE: want sqlite or postgres, not %q", p)
	}
}

// Project creates a project with a deposit key for each environment.
func Project(svc *service.Service, name string) (service.CreatedProject, error) {
	ctx := context.Background()
	p, err := svc.Checkout().CreateProject(ctx, name)
	if err != nil {
		return p, err
	}
	for _, live := range []bool{false, true} {
		seed := sha256.Sum256([]byte(fmt.Sprintf("%s/%v", p.Project.ID, live)))
		_, xpub, err := keys.NewDevKey(seed[:])
		if err != nil {
			return p, err
		}
		if err := svc.Checkout().SetDepositKey(ctx, p.Project.ID, live, xpub); err != nil {
			return p, err
		}
	}
	return p, nil
}

// NewAccount makes an account of a new key, holding nothing.
func NewAccount(t testing.TB) devchain.Account {
	t.Helper()
	key, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return devchain.Account{Address: crypto.PubkeyToAddress(key.PublicKey), Key: key}
}

// PersonalSign signs msg with key as a wallet's personal_sign does (v
// 27/28).
func PersonalSign(t testing.TB, key *ecdsa.PrivateKey, msg string) string {
	t.Helper()
	sig, err := crypto.Sign(accounts.TextHash([]byte(msg)), key)
	if err != nil {
		t.Fatal(err)
	}
	sig[64] += 27
	return hexutil.Encode(sig)
}

// ProveAddress records address as a verified recipient of the project's
// sandbox, as its owner's signed challenge would: a proven address, which
// payout batches may pay from.
func ProveAddress(st *store.Store, projectID, address string) error {
	ctx := context.Background()
	now := time.Now().UTC()
	if _, err := st.Checkout().ClaimRecipient(ctx, payment.Recipient{ProjectID: projectID, Address: strings.ToLower(address), Challenge: "proof",
		ChallengeExpiresAt: now.Add(time.Hour), CreatedAt: now}); err != nil {
		return err
	}
	_, err := st.Checkout().VerifyRecipient(ctx, projectID, false, address, "proof", "eip191", now)
	return err
}
