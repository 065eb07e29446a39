// Command paymentsd is the payment engine: one binary whose subcommands run
// the API, the Temporal worker, the database migrations, admin tasks and,
// in the dev build, the whole system on embedded defaults.
package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"os/user"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/sethvargo/go-limiter"
	"go.temporal.io/sdk/client"

	"github.com/paymentsd/paymentsd/activities"
	"github.com/paymentsd/paymentsd/api"
	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/internal/observability"
	"github.com/paymentsd/paymentsd/internal/ratelimit"
	"github.com/paymentsd/paymentsd/internal/sessionstart"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/webhook"
	"github.com/paymentsd/paymentsd/worker"
)

const usage = `usage: paymentsd <command> [flags]

commands:
  api                          serve the REST and Connect API
  worker                       run the Temporal worker
  migrate                      apply database migrations
  admin create-project --name NAME [--json]
                               create a project with a live and a sandbox API key
  admin set-deposit-key --project ID --env sandbox|live --xpub XPUB
                               set the key deposit addresses are derived from
  admin deposit-addresses --project ID --env sandbox|live [--format csv|json]
                               list every used deposit address (index, address,
                               session), for the merchant's wallet to find them all
  admin resume-transaction --chain-id ID --hash 0x…
                               start again the workflow of a recorded transaction
                               that is not running (it failed, or was terminated)
  admin rescan --network KEY --from B --to B
                               scan blocks B..B of a network again for transfers
                               to deposit addresses (safe to run twice)
  admin create-user --email E [--owner-of proj_…]
                               make a merchant account (the password read from
                               stdin), optionally the owner of a project
  admin reseal-webhook-secrets [--batch N]
                               seal every webhook secret again under the newest
                               key of WEBHOOK_SECRET_KEY, so older keys can go
                               (docs/operations.md; safe to run twice)
  sweep --project ID --network KEY --rpc URL --to ADDRESS --key-file FILE [--execute]
                               move the funds of the deposit addresses to one
                               address, signing here with the deposit key's xprv
                               (PAYMENTSD_API_KEY; a dry run without --execute;
                               docs/operations.md)
  devchain                     run the development EVM chain alone
  dev                          run everything on embedded defaults (dev build)
  dev listen --forward-to URL  receive webhooks and forward them unchanged to URL

Configuration comes from the environment; see README.md.
`

func main() {
	slog.SetDefault(slog.New(slog.NewJSONHandler(os.Stderr, nil)))
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "api":
		err = runAPI(ctx)
	case "worker":
		err = runWorker(ctx)
	case "migrate":
		err = runMigrate(ctx)
	case "admin":
		err = runAdmin(ctx, args)
	case "dev":
		err = runDev(ctx, args)
	case "devchain":
		err = runDevchain(ctx, args)
	case "sweep":
		err = runSweep(ctx, args, os.Stdin, os.Stdout)
	case "help", "-h", "--help":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "paymentsd: unknown command %q\n\n%s", cmd, usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "paymentsd: %v\n", err)
		os.Exit(1)
	}
}

// runCreateUser is `paymentsd admin create-user`: an account for
// deployments with sign-up switched off. The password is read from stdin
// (its first line), never from a flag.
func runCreateUser(ctx context.Context, stdin io.Reader, out io.Writer, args []string) error {
	fs := flag.NewFlagSet("create-user", flag.ContinueOnError)
	email := fs.String("email", "", "the account's email")
	ownerOf := fs.String("owner-of", "", "a project the account owns")
	if err := fs.Parse(args); err != nil {
		return err
	}
	line, err := bufio.NewReader(io.LimitReader(stdin, 4096)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	e, closeStore, err := adminEngine(ctx)
	if err != nil {
		return err
	}
	defer closeStore()
	u, err := e.CreateUser(ctx, *email, strings.TrimRight(line, "\r\n"))
	if err != nil {
		return err
	}
	if *ownerOf != "" {
		if err := e.AddOwner(ctx, *ownerOf, u.ID); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "user %s (%s) created\n", u.ID, u.Email)
	return nil
}

func needDatabase(c config) error {
	if c.DatabaseURL == "" {
		return errors.New("DATABASE_URL is not set")
	}
	return nil
}

func runMigrate(ctx context.Context) error {
	c, err := loadConfig()
	if err != nil {
		return err
	}
	if err := needDatabase(c); err != nil {
		return err
	}
	if err := store.Migrate(ctx, c.DatabaseURL); err != nil {
		return err
	}
	fmt.Println("migrations applied")
	return nil
}

// deps are a process's connections: Postgres, Temporal and the chains.
type deps struct {
	store    *store.Store
	temporal client.Client
	chains   chainwatch.Chains
}

func (d deps) Close() {
	d.temporal.Close()
	d.store.Close()
}

// open connects to Postgres, Temporal (with tel's metrics and traces) and
// the configured chains.
func open(ctx context.Context, c config, tel *observability.Telemetry) (deps, error) {
	if err := needDatabase(c); err != nil {
		return deps{}, err
	}
	st, err := store.Open(ctx, c.DatabaseURL)
	if err != nil {
		return deps{}, err
	}
	tc, err := client.NewLazyClient(tel.Temporal(client.Options{HostPort: c.TemporalAddress, Namespace: c.TemporalNamespace,
		Logger: slogAdapter{}}))
	if err != nil {
		st.Close()
		return deps{}, fmt.Errorf("temporal client: %w", err)
	}
	chains, err := chainwatch.Connect(ctx, c.Networks, c.Catalog, nil)
	if err != nil {
		tc.Close()
		st.Close()
		return deps{}, err
	}
	return deps{st, tc, chains}, nil
}

func newEngine(c config, st *store.Store, tc client.Client, chains chainwatch.Chains) *service.Service {
	return service.New(service.Deps{Store: st, Temporal: tc, Catalog: c.Catalog, Chains: chains, Sealer: sealer(c),
		SessionLifetime: c.SessionLifetime, MaxOpenHolds: c.MaxOpenHolds})
}

// sealer is the webhook secrets' sealer, nil when no key is configured.
func sealer(c config) *webhook.Sealer {
	if c.WebhookKeys == nil {
		return nil
	}
	s, err := webhook.NewKeyring(c.WebhookKeys)
	if err != nil {
		panic(err) // ParseKeys checked the IDs and sizes
	}
	return s
}

// newActivities wires the activities.
func newActivities(c config, st *store.Store, tc client.Client, chains chainwatch.Chains) *activities.Activities {
	return &activities.Activities{Store: st, Chains: chains, Webhooks: activities.Webhooks{Temporal: tc, Sealer: sealer(c),
		Client: webhook.NewClient(webhook.ClientOptions{AllowPrivate: c.WebhookAllowPrivate}), DisableAfter: c.WebhookDisableAfter,
		Shape: c.Shape}}
}

// networkKeys lists the configured networks.
func networkKeys(chains chainwatch.Chains) []string {
	keys := make([]string, 0, len(chains))
	for k := range chains {
		keys = append(keys, k)
	}
	return keys
}

func runAPI(ctx context.Context) error {
	c, err := loadConfig()
	if err != nil {
		return err
	}
	tel, err := startTelemetry(ctx, "paymentsd-api")
	if err != nil {
		return err
	}
	defer closeTelemetry(tel)
	d, err := open(ctx, c, tel)
	if err != nil {
		return err
	}
	defer d.Close()
	cfg := api.Config{Limits: c.Limits, PublicURL: c.PublicURL, TrustedProxies: c.TrustedProxies, SignupDisabled: c.SignupDisabled,
		Shape: c.Shape, ReauthWindow: c.ReauthWindow}
	if c.RedisURL != "" {
		client, err := openRedis(ctx, c.RedisURL)
		if err != nil {
			return err
		}
		defer client.Close()
		cfg.LimitStore = func(tier api.Tier, perMinute uint64) (limiter.Store, error) {
			return ratelimit.NewRedis(client, ratelimit.RedisConfig{Tokens: perMinute, Interval: time.Minute,
				Prefix: "paymentsd:ratelimit:" + string(tier) + ":"})
		}
	}
	srv, err := api.New(newEngine(c, d.store, d.temporal, d.chains), cfg)
	if err != nil {
		return err
	}
	defer srv.Close()
	return serveHTTP(ctx, c.HTTPAddr, tel.HTTP(srv.Handler(), "paymentsd-api"))
}

// startTelemetry starts the process's metrics and traces (docs/observability.md).
func startTelemetry(ctx context.Context, service string) (*observability.Telemetry, error) {
	tel, err := observability.Start(ctx, service)
	if err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	if observability.TracingConfigured() {
		slog.Info("exporting traces over OTLP", "service", service)
	}
	return tel, nil
}

// closeTelemetry flushes the spans still buffered.
func closeTelemetry(tel *observability.Telemetry) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := tel.Close(ctx); err != nil {
		slog.Warn("telemetry shutdown", "err", err)
	}
}

// openRedis connects to the Redis server of REDIS_URL and checks that it
// answers, so that a wrong URL stops the start instead of leaving every
// process counting alone. Later outages let requests through (api.Server
// logs them).
func openRedis(ctx context.Context, rawURL string) (redis.UniversalClient, error) {
	client, err := ratelimit.NewRedisClient(rawURL)
	if err != nil {
		return nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	ping, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := client.Ping(ping).Err(); err != nil {
		_ = client.Close()
		return nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	return client, nil
}

// serveHTTP serves h on addr until ctx is done, then shuts down gracefully.
func serveHTTP(ctx context.Context, addr string, h http.Handler) error {
	hs := &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 60 * time.Second, IdleTimeout: 120 * time.Second}
	// gRPC clients speak HTTP/2 without TLS (h2c) to a plain listener.
	hs.Protocols = new(http.Protocols)
	hs.Protocols.SetHTTP1(true)
	hs.Protocols.SetUnencryptedHTTP2(true)
	errc := make(chan error, 1)
	go func() { errc <- hs.ListenAndServe() }()
	slog.Info("listening", "addr", addr)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	return hs.Shutdown(shutdown)
}

func runWorker(ctx context.Context) error {
	c, err := loadConfig()
	if err != nil {
		return err
	}
	tel, err := startTelemetry(ctx, "paymentsd-worker")
	if err != nil {
		return err
	}
	defer closeTelemetry(tel)
	d, err := open(ctx, c, tel)
	if err != nil {
		return err
	}
	defer d.Close()
	st, tc, chains := d.store, d.temporal, d.chains
	if err := worker.RegisterSearchAttributes(ctx, tc, c.TemporalNamespace); err != nil {
		slog.Warn("search attributes not registered; register them with the Temporal operator CLI", "err", err)
	}
	w := worker.New(tc, newActivities(c, st, tc, chains))
	if err := w.Start(); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	if err := worker.StartScanners(ctx, tc, networkKeys(chains)); err != nil {
		return err
	}
	if err := worker.StartDispatcher(ctx, tc); err != nil {
		return err
	}
	// Sessions whose workflow's start an API process did not make (it
	// died, Temporal was unreachable) are started here once due.
	go sessionstart.New(st, tc).RunSweeper(ctx, time.Second)
	if err := observability.RegisterRecords(st.CountByStatus, time.Minute); err != nil {
		return err
	}
	if c.MetricsAddr != "" {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", observability.Handler())
		mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
		go func() {
			if err := serveHTTP(ctx, c.MetricsAddr, mux); err != nil {
				slog.Error("metrics listener stopped", "addr", c.MetricsAddr, "err", err)
			}
		}()
	}
	slog.Info("worker running", "temporal", c.TemporalAddress, "namespace", c.TemporalNamespace)
	<-ctx.Done()
	w.Stop()
	return nil
}

const adminUsage = `usage: paymentsd admin create-project --name NAME [--json]
       paymentsd admin set-deposit-key --project ID --env sandbox|live --xpub XPUB
       paymentsd admin deposit-addresses --project ID --env sandbox|live [--format csv|json]
       paymentsd admin resume-transaction --chain-id ID --hash 0x…
       paymentsd admin rescan --network KEY --from B --to B
       paymentsd admin reseal-webhook-secrets [--batch N]
       paymentsd admin reconcile [--project ID] [--repair] [--json]
       paymentsd admin create-user --email E [--owner-of proj_…]   (the password from stdin)`

func runAdmin(ctx context.Context, args []string) error {
	if len(args) > 0 && args[0] == "set-deposit-key" {
		return runSetDepositKey(ctx, args[1:])
	}
	if len(args) > 0 && args[0] == "deposit-addresses" {
		return runDepositAddresses(ctx, os.Stdout, args[1:])
	}
	if len(args) > 0 && args[0] == "resume-transaction" {
		return runResumeTransaction(ctx, args[1:])
	}
	if len(args) > 0 && args[0] == "rescan" {
		return runRescan(ctx, args[1:])
	}
	if len(args) > 0 && args[0] == "reconcile" {
		return runReconcile(ctx, os.Stdout, args[1:])
	}
	if len(args) > 0 && args[0] == "create-user" {
		return runCreateUser(ctx, os.Stdin, os.Stdout, args[1:])
	}
	if len(args) > 0 && args[0] == "reseal-webhook-secrets" {
		return runResealWebhookSecrets(ctx, os.Stdout, args[1:])
	}
	if len(args) == 0 || args[0] != "create-project" {
		return errors.New(adminUsage)
	}
	fs := flag.NewFlagSet("create-project", flag.ContinueOnError)
	name := fs.String("name", "", "project name")
	asJSON := fs.Bool("json", false, "print one JSON object")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	e, closeStore, err := adminEngine(ctx)
	if err != nil {
		return err
	}
	defer closeStore()
	p, err := e.CreateProject(ctx, *name)
	if err != nil {
		return err
	}
	printProject(p, *asJSON)
	return nil
}

// adminEngine is the engine of the admin commands: the database only, the
// dev stack's (in .data/) when DATABASE_URL is unset.
func adminEngine(ctx context.Context) (*service.Service, func(), error) {
	d, closeDeps, err := adminDeps(ctx)
	if err != nil {
		return nil, nil, err
	}
	return service.New(d), closeDeps, nil
}

// adminDeps are the service's dependencies for adminEngine: the store and
// the catalog.
func adminDeps(ctx context.Context) (service.Deps, func(), error) {
	c, err := loadConfig()
	if err != nil {
		return service.Deps{}, nil, err
	}
	stopDev := func() {}
	if c.DatabaseURL == "" {
		dbURL, stop, ok, err := devDatabaseFromData(ctx)
		if err != nil {
			return service.Deps{}, nil, err
		}
		if ok {
			c.DatabaseURL, stopDev = dbURL, stop
		}
	}
	if c.DatabaseURL == "" {
		return service.Deps{}, nil, errors.New("DATABASE_URL is not set, and this folder has no dev stack data (.data/postgres) to use instead")
	}
	st, err := store.Open(ctx, c.DatabaseURL)
	if err != nil {
		stopDev()
		return service.Deps{}, nil, err
	}
	return service.Deps{Store: st, Catalog: c.Catalog, Sealer: sealer(c)}, func() { st.Close(); stopDev() }, nil
}

func printProject(p service.CreatedProject, asJSON bool) {
	if asJSON {
		_ = json.NewEncoder(os.Stdout).Encode(map[string]string{
			"projectId": p.Project.ID, "liveKey": p.LiveKey, "sandboxKey": p.SandboxKey})
		return
	}
	fmt.Printf("project:     %s (%s)\nlive key:    %s\nsandbox key: %s\nThe keys are shown once; store them now.\n",
		p.Project.ID, p.Project.Name, p.LiveKey, p.SandboxKey)
}

func runSetDepositKey(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("set-deposit-key", flag.ContinueOnError)
	project := fs.String("project", "", "project ID")
	env := fs.String("env", "sandbox", "environment: sandbox or live")
	xpub := fs.String("xpub", "", "extended public key (xpub…) of the account, e.g. m/44'/60'/0'")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *env != "sandbox" && *env != "live" {
		return errors.New("--env must be sandbox or live")
	}
	e, closeStore, err := adminEngine(ctx)
	if err != nil {
		return err
	}
	defer closeStore()
	if err := e.SetDepositKey(adminOrigin(ctx), *project, *env == "live", *xpub); err != nil {
		return err
	}
	fmt.Printf("deposit key set for %s (%s)\n", *project, *env)
	return nil
}

// runDepositAddresses prints every used deposit index of a project's
// environment, in index order, with the largest run of unused indexes
// before a used one: a wallet needs a gap limit above it.
func runDepositAddresses(ctx context.Context, out io.Writer, args []string) error {
	fs := flag.NewFlagSet("deposit-addresses", flag.ContinueOnError)
	project := fs.String("project", "", "project ID")
	env := fs.String("env", "sandbox", "environment: sandbox or live")
	format := fs.String("format", "csv", "csv or json (one object per line)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *env != "sandbox" && *env != "live" {
		return errors.New("--env must be sandbox or live")
	}
	if *format != "csv" && *format != "json" {
		return errors.New("--format must be csv or json")
	}
	e, closeStore, err := adminEngine(ctx)
	if err != nil {
		return err
	}
	defer closeStore()
	p := payment.Principal{ProjectID: *project, IsLive: *env == "live"}
	w := csv.NewWriter(out)
	if *format == "csv" {
		_ = w.Write([]string{"index", "derivation_path", "address", "checkout_session_id", "session_status", "created_at", "gap_before"})
	}
	enc := json.NewEncoder(out)
	var count, largestGap int64
	for page := 1; ; page++ {
		q := payment.DepositQuery{ListQuery: payment.ListQuery{Page: page, Limit: payment.MaxLimit}}
		items, err := e.ListDepositAddresses(ctx, p, *project, q)
		if err != nil {
			return err
		}
		for _, d := range items.Items {
			count++
			largestGap = max(largestGap, d.GapBefore)
			path := fmt.Sprintf("0/%d", d.Index)
			if *format == "json" {
				err = enc.Encode(map[string]any{"index": d.Index, "derivationPath": path, "address": d.Address,
					"checkoutSessionId": d.SessionID, "sessionStatus": d.Status, "createdAt": d.CreatedAt, "gapBefore": d.GapBefore})
			} else {
				err = w.Write([]string{strconv.FormatInt(d.Index, 10), path, d.Address, d.SessionID, string(d.Status),
					d.CreatedAt.Format(time.RFC3339), strconv.FormatInt(d.GapBefore, 10)})
			}
			if err != nil {
				return err
			}
		}
		if len(items.Items) < q.Limit {
			break
		}
	}
	w.Flush()
	fmt.Fprintf(os.Stderr, "%d used deposit addresses; largest run of unused indexes before a used one: %d (a wallet's gap limit must be above it)\n", count, largestGap)
	return w.Error()
}

// adminOrigin marks the changes an admin command makes for the audit log:
// made by the operator's OS user, on this host.
func adminOrigin(ctx context.Context) context.Context {
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	host, _ := os.Hostname()
	return payment.WithOrigin(ctx, payment.Origin{ActorKind: payment.AuditActorAdmin, ActorID: name, IP: host,
		UserAgent: "paymentsd admin"})
}

func runResumeTransaction(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("resume-transaction", flag.ContinueOnError)
	chainID := fs.Int64("chain-id", 0, "the transaction's chain ID")
	hash := fs.String("hash", "", "the transaction's hash")
	if err := fs.Parse(args); err != nil {
		return err
	}
	e, closeEngine, err := adminTemporalEngine(ctx)
	if err != nil {
		return err
	}
	defer closeEngine()
	id, err := e.ResumeTransaction(ctx, *chainID, *hash)
	if err != nil {
		return err
	}
	fmt.Printf("workflow %s is running\n", id)
	return nil
}

// runReconcile compares the records with the workflows after a restore
// and, with --repair, repairs what is safe to (docs/operations.md, "Backups
// and restores"). It exits non-zero while findings are left unrepaired.
func runReconcile(ctx context.Context, out io.Writer, args []string) error {
	fs := flag.NewFlagSet("reconcile", flag.ContinueOnError)
	project := fs.String("project", "", "only this project's records and workflows")
	repair := fs.Bool("repair", false, "make the safe repairs; without it nothing changes")
	asJSON := fs.Bool("json", false, "print the findings as one JSON array")
	if err := fs.Parse(args); err != nil {
		return err
	}
	e, closeEngine, err := adminTemporalEngine(ctx)
	if err != nil {
		return err
	}
	defer closeEngine()
	findings, err := e.Reconcile(ctx, service.ReconcileOptions{ProjectID: *project, Repair: *repair})
	if err != nil {
		return err
	}
	left := 0
	for _, f := range findings {
		if !f.Repaired {
			left++
		}
	}
	if *asJSON {
		if findings == nil {
			findings = []service.Finding{}
		}
		b, _ := json.MarshalIndent(findings, "", "  ")
		fmt.Fprintln(out, string(b))
	} else {
		for _, f := range findings {
			state := "found"
			switch {
			case f.Repaired:
				state = "repaired"
			case f.Error != "":
				state = "left: " + f.Error
			}
			fmt.Fprintf(out, "%-29s %s  %s  (%s)\n", f.Kind, f.ObjectID, f.Detail, state)
		}
		fmt.Fprintf(out, "%d findings, %d repaired, %d left\n", len(findings), len(findings)-left, left)
	}
	if left > 0 {
		return fmt.Errorf("%d findings left: see docs/operations.md, Backups and restores", left)
	}
	return nil
}

func runRescan(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("rescan", flag.ContinueOnError)
	network := fs.String("network", "", "the network's key")
	from := fs.Uint64("from", 0, "the first block to scan")
	to := fs.Uint64("to", 0, "the last block to scan")
	if err := fs.Parse(args); err != nil {
		return err
	}
	e, closeEngine, err := adminTemporalEngine(ctx)
	if err != nil {
		return err
	}
	defer closeEngine()
	res, err := e.Rescan(ctx, *network, *from, *to)
	if err != nil {
		return err
	}
	fmt.Printf("%s: blocks %d to %d scanned, %d transfers to deposit addresses handed to their sessions\n",
		*network, *from, *to, res.Transfers)
	return nil
}

// adminTemporalEngine is adminEngine with a Temporal client, for the admin
// commands that start workflows.
func adminTemporalEngine(ctx context.Context) (*service.Service, func(), error) {
	d, closeStore, err := adminDeps(ctx)
	if err != nil {
		return nil, nil, err
	}
	c, err := loadConfig()
	if err != nil {
		closeStore()
		return nil, nil, err
	}
	tc, err := client.Dial(client.Options{HostPort: c.TemporalAddress, Namespace: c.TemporalNamespace, Logger: slogAdapter{}})
	if err != nil {
		closeStore()
		return nil, nil, fmt.Errorf("temporal at %s: %w", c.TemporalAddress, err)
	}
	d.Temporal = tc
	return service.New(d), func() { tc.Close(); closeStore() }, nil
}

// runResealWebhookSecrets seals every webhook secret again under the
// newest key, reporting each batch, and fails when any secret did not open
// (its key is missing, or the value is damaged): an older key must not be
// retired then.
func runResealWebhookSecrets(ctx context.Context, out io.Writer, args []string) error {
	fs := flag.NewFlagSet("reseal-webhook-secrets", flag.ContinueOnError)
	batch := fs.Int("batch", service.ResealBatchSize, "endpoints per database transaction")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *batch < 1 || *batch > 10_000 {
		return errors.New("--batch must be from 1 to 10000")
	}
	e, closeStore, err := adminEngine(ctx)
	if err != nil {
		return err
	}
	defer closeStore()
	r, err := e.ResealWebhookSecrets(adminOrigin(ctx), *batch, func(r service.ResealReport) {
		fmt.Fprintf(out, "%d endpoints so far: %d resealed, %d failed\n", r.Endpoints, r.Resealed, len(r.Failed))
	})
	if err != nil {
		return err
	}
	for _, f := range r.Failed {
		fmt.Fprintf(out, "%s: %v\n", f.EndpointID, f.Err)
	}
	fmt.Fprintf(out, "%d endpoints: %d resealed under key %q, %d current already, %d failed\n",
		r.Endpoints, r.Resealed, r.KeyID, r.Endpoints-r.Resealed-len(r.Failed), len(r.Failed))
	if len(r.Failed) > 0 {
		return fmt.Errorf("%d endpoints' secrets did not open (listed above); keep the keys they name until they are resealed", len(r.Failed))
	}
	return nil
}
