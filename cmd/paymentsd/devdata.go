package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/internal/postgres"
)

// The dev stack's data folder and its database, which the admin commands
// find by themselves when DATABASE_URL is unset.
const (
	devDataDir      = ".data"
	devPostgresPort = 54329
	devDatabase     = "paymentsd"
)

// devState is what `paymentsd dev` keeps between runs in its data folder.
type devState struct {
	ProjectID  string `json:"projectId"`
	SandboxKey string `json:"sandboxKey"`
	LiveKey    string `json:"liveKey"`
	PlanID     string `json:"planId"`
	// The sandbox deposit wallet: the engine holds the public half only;
	// the private half is kept here so dev funds can be recovered.
	DepositXpub string `json:"depositXpub"`
	DepositXprv string `json:"depositXprv"`
	// The endpoint of the built-in receiver, which logs what it gets.
	WebhookID     string `json:"webhookId"`
	WebhookSecret string `json:"webhookSecret"`
	// ChainURL is the dev chain's JSON-RPC URL of the latest run, where
	// `paymentsd dev pay` sends from.
	ChainURL string `json:"chainUrl"`
	// The sandbox's Bitcoin account (its key, and the private half to
	// recover dev funds), the sample plan in bitcoin, and the Bitcoin
	// node's URL of the latest run, where `paymentsd dev pay` pays a
	// bitcoin session from.
	BitcoinKey    string `json:"bitcoinKey,omitempty"`
	BitcoinXprv   string `json:"bitcoinXprv,omitempty"`
	BitcoinPlanID string `json:"bitcoinPlanId,omitempty"`
	BitcoinURL    string `json:"bitcoinUrl,omitempty"`
	// The dev user, owner of the project: sign in with it (POST
	// /api/v1/auth/login).
	UserEmail    string `json:"userEmail"`
	UserPassword string `json:"userPassword"`
}

// devStateFile is where a data folder keeps its devState.
func devStateFile(dataDir string) string { return filepath.Join(dataDir, "dev.json") }

// readDevState reads a data folder's devState.
func readDevState(dataDir string) (devState, error) {
	var s devState
	b, err := os.ReadFile(devStateFile(dataDir))
	if err != nil {
		return s, err
	}
	return s, json.Unmarshal(b, &s)
}

// devDatabaseURL starts the private cluster of a data folder, or finds it
// running, makes sure it has the engine's database and returns that
// database's URL; stop stops the cluster if this call started it.
func devDatabaseURL(ctx context.Context, dataDir string, port int) (dbURL string, stop func(), err error) {
	cluster, err := postgres.Start(ctx, filepath.Join(dataDir, "postgres"), port)
	if err != nil {
		return "", nil, err
	}
	stop = func() {}
	if cluster.Started {
		stop = func() { _ = cluster.Stop(context.WithoutCancel(ctx)) }
	}
	if dbURL, err = ensureDatabase(ctx, cluster.URL(), devDatabase); err != nil {
		stop()
		return "", nil, err
	}
	return dbURL, stop, nil
}

// devDatabaseFromData returns the dev stack's database when DATABASE_URL is
// unset and this folder has the dev stack's data; ok is false otherwise.
func devDatabaseFromData(ctx context.Context) (dbURL string, stop func(), ok bool, err error) {
	if _, err := os.Lstat(filepath.Join(devDataDir, "postgres")); err != nil {
		return "", nil, false, nil
	}
	dbURL, stop, err = devDatabaseURL(ctx, devDataDir, devPostgresPort)
	if err != nil {
		return "", nil, false, fmt.Errorf("the dev stack's database in %s: %w", devDataDir, err)
	}
	fmt.Fprintf(os.Stderr, "DATABASE_URL is not set: using the dev stack's database %s\n", printableURL(dbURL))
	return dbURL, stop, true, nil
}

// ensureDatabase creates database name on the cluster if it is missing.
func ensureDatabase(ctx context.Context, adminURL, name string) (string, error) {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return "", err
	}
	if !exists {
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
			return "", err
		}
	}
	cfg, err := pgx.ParseConfig(adminURL)
	if err != nil {
		return "", errors.New("bad admin url")
	}
	return fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", cfg.User, cfg.Host, cfg.Port, name), nil
}

// printableURL is a database URL that can be pasted as DATABASE_URL, with
// its password (if any) masked.
func printableURL(dbURL string) string {
	u, err := url.Parse(dbURL)
	if err != nil || u.Scheme == "" {
		return "(set)"
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}
