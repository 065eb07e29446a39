package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"

	"go.temporal.io/sdk/client"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service"
	"github.com/paymentsd/paymentsd/store"
)

const adminUsage = `usage: paymentsd admin create-project --name NAME [--json]
       paymentsd admin set-deposit-key --project ID --env sandbox|live --xpub XPUB [--bitcoin [--address-type p2wpkh|p2tr]]
       paymentsd admin deposit-addresses --project ID --env sandbox|live [--chain evm|bitcoin] [--format csv|json]
       paymentsd admin resume-transaction --chain-id ID --hash 0x…
       paymentsd admin rescan --network KEY --from B --to B
       paymentsd admin reseal-webhook-secrets [--batch N]
       paymentsd admin reconcile [--project ID] [--repair] [--json]
       paymentsd admin create-user --email E [--owner-of proj_…]   (the password from stdin)
       paymentsd admin worker-deployment [--set-current BUILD_ID]`

// runAdmin runs the admin command args name; each lives in a file of its
// own (admin_*.go).
func runAdmin(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New(adminUsage)
	}
	switch cmd, args := args[0], args[1:]; cmd {
	case "create-project":
		return runCreateProject(ctx, args)
	case "set-deposit-key":
		return runSetDepositKey(ctx, args)
	case "deposit-addresses":
		return runDepositAddresses(ctx, os.Stdout, args)
	case "resume-transaction":
		return runResumeTransaction(ctx, args)
	case "rescan":
		return runRescan(ctx, args)
	case "reconcile":
		return runReconcile(ctx, os.Stdout, args)
	case "create-user":
		return runCreateUser(ctx, os.Stdin, os.Stdout, args)
	case "reseal-webhook-secrets":
		return runResealWebhookSecrets(ctx, os.Stdout, args)
	case "worker-deployment":
		return runWorkerDeployment(ctx, os.Stdout, args)
	default:
		return errors.New(adminUsage)
	}
}

// adminService is the service of the admin commands: the database only, the
// dev stack's (in .data/) when DATABASE_URL is unset.
func adminService(ctx context.Context) (*service.Service, func(), error) {
	c, err := loadProductionConfig()
	if err != nil {
		return nil, nil, err
	}
	d, closeDeps, err := adminDeps(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	return service.New(d), closeDeps, nil
}

// adminDeps are the service's dependencies for adminService: the store and
// the catalog.
func adminDeps(ctx context.Context, c config) (service.Deps, func(), error) {
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

// checkEnv refuses an --env that names no environment.
func checkEnv(env string) error {
	if env != "sandbox" && env != "live" {
		return errors.New("--env must be sandbox or live")
	}
	return nil
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

// adminTemporalService is adminService with a Temporal client, for the admin
// commands that start workflows.
func adminTemporalService(ctx context.Context) (*service.Service, func(), error) {
	c, err := loadProductionConfig()
	if err != nil {
		return nil, nil, err
	}
	d, closeDeps, err := adminTemporalDeps(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	return service.New(d), closeDeps, nil
}

// adminChainService is adminTemporalService with the configured networks
// connected as the worker and the API connect them, for the admin commands
// that read the chains.
func adminChainService(ctx context.Context) (*service.Service, func(), error) {
	c, err := loadProductionConfig()
	if err != nil {
		return nil, nil, err
	}
	d, closeDeps, err := adminTemporalDeps(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	if d.Chains, err = connectChains(ctx, c); err != nil {
		closeDeps()
		return nil, nil, err
	}
	return service.New(d), closeDeps, nil
}

// dialTemporal connects the admin commands to Temporal.
var dialTemporal = client.Dial

// dialAdminTemporal connects an admin command to the configured Temporal.
func dialAdminTemporal(c config) (client.Client, error) {
	opts, err := c.Temporal.Options(client.Options{Logger: slogAdapter{}})
	if err != nil {
		return nil, err
	}
	tc, err := dialTemporal(opts)
	if err != nil {
		return nil, fmt.Errorf("temporal at %s: %w", c.Temporal.Address, err)
	}
	return tc, nil
}

// adminTemporalDeps are adminDeps with a Temporal client.
func adminTemporalDeps(ctx context.Context, c config) (service.Deps, func(), error) {
	d, closeStore, err := adminDeps(ctx, c)
	if err != nil {
		return service.Deps{}, nil, err
	}
	tc, err := dialAdminTemporal(c)
	if err != nil {
		closeStore()
		return service.Deps{}, nil, err
	}
	d.Temporal = tc
	return d, func() { tc.Close(); closeStore() }, nil
}
