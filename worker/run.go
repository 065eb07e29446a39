package worker

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"sync"
	"time"

	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/paymentsd/paymentsd/activities"
	"github.com/paymentsd/paymentsd/activities/sessionstart"
	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/internal/observability"
	"github.com/paymentsd/paymentsd/payment/views"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/webhook"
)

// DefaultWorkflowCacheSize is how many workflows a worker process keeps in
// memory between their tasks unless WORKER_WORKFLOW_CACHE_SIZE says
// otherwise. A checkout session's workflow waits for its late-payment
// window, a day by default, with nothing to do: kept, each costs the
// process memory for that whole day (docs/performance.md, "Soak"), where
// replaying its short history at its next task costs milliseconds.
const DefaultWorkflowCacheSize = 2000

// Deps are what a worker process runs on: its connections and settings.
// `paymentsd worker`, the dev stack and the tests' stacks all start the
// worker through Start or Run, so they run the same thing.
type Deps struct {
	Store *store.Store
	// Temporal is the worker's client; its options carry the SDK's metrics
	// and traces (observability.Telemetry.Temporal).
	Temporal client.Client
	Chains   chainwatch.Chains
	Webhooks Webhooks
	// Namespace, when set, is the namespace whose custom search attributes
	// Start registers (a failure is only logged: an operator can register
	// them). Empty: they are registered already, as on the dev stack's
	// embedded server.
	Namespace string
	// MetricsAddr, when set, is where the worker serves /metrics and
	// /healthz (METRICS_ADDR).
	MetricsAddr string
	// StopTimeout is how long Stop lets running activities finish
	// (WORKER_STOP_TIMEOUT): a delivery, a chain read or a database
	// write completes instead of being cancelled and retried elsewhere.
	// Zero cancels them at once.
	StopTimeout time.Duration
	// SweepInterval is how often the sweepers start the workflows of the
	// sessions, and of the refunds and payouts sent, whose start no API
	// process made; zero is a second.
	SweepInterval time.Duration
	// StaleAfter is how long a refund's or payout's transaction may stay
	// unmined before it is stale (MONEY_OUT_STALE_AFTER); zero is
	// payment.DefaultStaleAfter.
	StaleAfter time.Duration
	// WorkflowCacheSize bounds the workflows the process keeps in memory
	// between their tasks (WORKER_WORKFLOW_CACHE_SIZE); one evicted is
	// replayed from its history at its next task. Zero leaves the SDK's
	// bound. It applies to the whole process, from the first worker it
	// starts.
	WorkflowCacheSize int
	// BuildID names the worker's version in the engine's worker deployment
	// (DeploymentName); empty is BuildID(), the release and revision of
	// this binary. The dev stack names one for every build of a release.
	BuildID string
	// Promote, when set, makes the worker's version the deployment's
	// current one once it polls, unless a later release's is
	// (WORKER_PROMOTE=auto, the default; manual leaves that to `paymentsd
	// admin worker-deployment --set-current`).
	Promote bool
	// Logger logs the worker's start and its troubles; nil is slog's
	// default.
	Logger *slog.Logger
}

// Webhooks are the settings of webhook deliveries.
type Webhooks struct {
	// Sealer opens the endpoints' secrets; nil when no key is configured
	// (webhooks are off).
	Sealer *webhook.Sealer
	// Client delivers; nil is webhook.NewClient with AllowPrivate.
	Client *http.Client
	// AllowPrivate lets deliveries reach loopback and private addresses
	// (WEBHOOK_ALLOW_PRIVATE); only read when Client is nil.
	AllowPrivate bool
	// DisableAfter disables an endpoint that has failed every delivery for
	// this long (WEBHOOK_DISABLE_AFTER).
	DisableAfter time.Duration
	// Shape is the API's shape, which payloads follow.
	Shape views.Shape
}

// Activities builds the engine's activities over d.
func (d Deps) Activities() *activities.Activities {
	hooks := d.Webhooks.Client
	if hooks == nil {
		hooks = webhook.NewClient(webhook.ClientOptions{AllowPrivate: d.Webhooks.AllowPrivate})
	}
	acts := &activities.Activities{Store: d.Store, Chains: d.Chains, Temporal: d.Temporal, Webhooks: activities.Webhooks{
		Sealer: d.Webhooks.Sealer, Client: hooks, DisableAfter: d.Webhooks.DisableAfter, Shape: d.Webhooks.Shape},
		StaleAfter: d.StaleAfter}
	return acts
}

func (d Deps) logger() *slog.Logger {
	if d.Logger == nil {
		return slog.Default()
	}
	return d.Logger
}

// Running is a started worker; Stop stops it.
type Running struct {
	worker     sdkworker.Worker
	cancel     context.CancelFunc
	background sync.WaitGroup // the sweeper and the metrics listener
	unregister func()
	stopOnce   sync.Once
}

// Run starts the worker and runs it until ctx ends: see Start. A worker
// stopped while it starts stops without an error.
func Run(ctx context.Context, d Deps) error {
	r, err := Start(ctx, d)
	if err != nil && ctx.Err() != nil {
		return nil
	}
	if err != nil {
		return err
	}
	<-ctx.Done()
	r.Stop()
	return nil
}

// Start registers the search attributes (when d.Namespace is set), starts
// a worker with the engine's workflows and activities on the engine's
// task queue, chainwatch of each network and the webhook dispatcher
// (unless they run already), the sweeper of session starts, the records
// gauge and, when d.MetricsAddr is set, the metrics listener. They run
// until ctx ends or Stop is called; on an error nothing is left running.
func Start(ctx context.Context, d Deps) (_ *Running, err error) {
	log := d.logger()
	if d.Namespace != "" {
		if err := RegisterSearchAttributes(ctx, d.Temporal, d.Namespace); err != nil {
			log.Warn("search attributes not registered; register them with the Temporal operator CLI", "err", err)
		}
	}
	if d.WorkflowCacheSize > 0 {
		sdkworker.SetStickyWorkflowCacheSize(d.WorkflowCacheSize)
	}
	runCtx, cancel := context.WithCancel(ctx)
	buildID := d.BuildID
	if buildID == "" {
		buildID = BuildID()
	}
	r := &Running{worker: New(d.Temporal, d.Activities(), d.StopTimeout, buildID), cancel: cancel, unregister: func() {}}
	if err := r.worker.Start(); err != nil {
		cancel()
		return nil, fmt.Errorf("start worker: %w", err)
	}
	defer func() {
		if err != nil {
			r.Stop()
		}
	}()
	if d.Promote {
		// In the background: the version is registered by the worker's
		// first polls, and Temporal keeps the tasks meanwhile.
		r.goBackground(func() { promote(runCtx, d.Temporal, buildID, log) })
	}
	if err := StartChainwatch(ctx, d.Temporal, slices.Sorted(maps.Keys(d.Chains))); err != nil {
		return nil, err
	}
	if err := StartDispatcher(ctx, d.Temporal); err != nil {
		return nil, err
	}
	sweep := d.SweepInterval
	if sweep <= 0 {
		sweep = time.Second
	}
	r.goBackground(func() {
		// Sessions whose workflow's start an API process did not make (it
		// died, Temporal was unreachable) are started here once due.
		sessionstart.New(d.Store, d.Temporal).RunSweeper(runCtx, sweep)
	})
	r.goBackground(func() {
		// Refunds and payouts sent whose workflow no API process started
		// (the scan found their transfer; Temporal was unreachable).
		runFollowSweeper(runCtx, d.Store, d.Temporal, sweep)
	})
	unregister, err := observability.RegisterRecords(d.Store.CountByStatus, time.Minute)
	if err != nil {
		return nil, err
	}
	r.unregister = unregister
	if d.MetricsAddr != "" {
		r.goBackground(func() {
			if err := observability.ServeMetrics(runCtx, d.MetricsAddr); err != nil {
				log.Error("metrics listener stopped", "addr", d.MetricsAddr, "err", err)
			}
		})
	}
	log.Info("worker running", "namespace", d.Namespace, "networks", slices.Sorted(maps.Keys(d.Chains)),
		"deployment", DeploymentName, "buildId", buildID)
	return r, nil
}

func (r *Running) goBackground(f func()) {
	r.background.Add(1)
	go func() {
		defer r.background.Done()
		f()
	}()
}

// Stop stops the worker, which takes no new task and lets its running
// activities finish for Deps.StopTimeout, the sweeper and the metrics
// listener, and waits for them. Later calls do nothing.
func (r *Running) Stop() {
	r.stopOnce.Do(func() {
		r.cancel()
		r.worker.Stop()
		r.background.Wait()
		r.unregister()
	})
}
