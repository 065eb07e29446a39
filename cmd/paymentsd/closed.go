package main

import (
	"fmt"
	"net/netip"
	"os"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/paymentsd/paymentsd/internal/secretfile"
)

// readSecretFile reads the secret a _FILE variable (setting) names,
// refusing a file others can read, as the CLI refuses its key files.
func readSecretFile(setting, path string) (string, error) {
	return secretfile.Read(setting, path)
}

// loadProductionConfig is loadConfig for the processes that run a
// deployment (api, worker, migrate, admin): they refuse a database they
// would reach without verifying it is the server (docs/security.md).
// The dev stack, on its own machine, does not ask it.
func loadProductionConfig() (config, error) {
	c, err := loadConfig()
	if err != nil {
		return c, err
	}
	insecure := false
	switch v := os.Getenv("DATABASE_INSECURE_TLS"); v {
	case "", "false":
	case "true":
		insecure = true
	default:
		return c, fmt.Errorf("DATABASE_INSECURE_TLS: want true or false, not %q", v)
	}
	if insecure {
		return c, nil
	}
	for _, db := range []struct{ name, url string }{{"DATABASE_URL", c.DatabaseURL}, {"DATABASE_READ_URL", c.DatabaseReadURL}} {
		if err := checkDatabaseTLS(db.name, db.url); err != nil {
			return c, err
		}
	}
	return c, nil
}

var sslmodeParam = regexp.MustCompile(`sslmode=([a-z-]+)`)

// checkDatabaseTLS refuses a database URL whose connection, to a host off
// this machine, does not verify the server's certificate (sslmode other
// than verify-full or verify-ca, or a fallback host without TLS): an
// attacker on the path could otherwise read and write the engine's books.
func checkDatabaseTLS(setting, dbURL string) error {
	if dbURL == "" {
		return nil
	}
	cfg, err := pgconn.ParseConfig(dbURL)
	if err != nil {
		return fmt.Errorf("%s: %w", setting, err)
	}
	targets := []*pgconn.FallbackConfig{{Host: cfg.Host, Port: cfg.Port, TLSConfig: cfg.TLSConfig}}
	targets = append(targets, cfg.Fallbacks...)
	for _, t := range targets {
		if localHost(t.Host) {
			continue
		}
		if t.TLSConfig != nil && (!t.TLSConfig.InsecureSkipVerify || t.TLSConfig.VerifyPeerCertificate != nil) {
			continue
		}
		mode := "prefer, the default"
		if m := sslmodeParam.FindStringSubmatch(dbURL); m != nil {
			mode = m[1]
		} else if m := os.Getenv("PGSSLMODE"); m != "" {
			mode = m + ", from PGSSLMODE"
		}
		return fmt.Errorf("%s: the connection to %s does not verify the server's certificate (sslmode %s): "+
			"use sslmode=verify-full (with sslrootcert=<the server's CA> unless the system's CAs sign it), "+
			"or set DATABASE_INSECURE_TLS=true to accept it knowingly", setting, t.Host, mode)
	}
	return nil
}

// localHost tells whether host is this machine: a Unix socket's folder,
// localhost, or a loopback address.
func localHost(host string) bool {
	if strings.HasPrefix(host, "/") || host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback()
}
