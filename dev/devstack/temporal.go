// Package devstack runs the engine's dependencies in-process for `paymentsd
// dev` and the end-to-end tests: an embedded Temporal server (on SQLite, or
// on Postgres) with the Temporal UI. It links the Temporal server, so only
// the dev build and end-to-end tests import it; the production api and
// worker do not.
package devstack

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/log/tag"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/schema/sqlite"
	"go.temporal.io/server/temporal"

	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uioptions "github.com/temporalio/ui-server/v2/server/server_options"

	"github.com/paymentsd/paymentsd/dev/freeport"
)

// SearchAttributes are the custom search attributes operators filter
// payments by in the Temporal UI.
var SearchAttributes = map[string]enumspb.IndexedValueType{
	"ProjectId":         enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	"CheckoutSessionId": enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	"PaymentStatus":     enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	"Network":           enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	"IsLive":            enumspb.INDEXED_VALUE_TYPE_BOOL,
}

// TemporalConfig configures the embedded Temporal server.
type TemporalConfig struct {
	// DBFile is the SQLite file that keeps history across restarts; empty
	// keeps everything in memory. It is unused when PostgresURL is set.
	DBFile string
	// PostgresURL, when set, keeps the server's state in Postgres in place
	// of SQLite: a postgres:// URL of the database that holds its history;
	// its visibility records go to the database of the same name with
	// "_visibility" appended, on the same server. Both are created when
	// missing and their schemas set up or brought up to date, so a restart
	// on the same databases keeps the history. One server at a time may use
	// them.
	PostgresURL string
	Namespace   string
	// Port is the frontend's gRPC port on 127.0.0.1; 0 picks a free one.
	Port int
	// UIPort serves the Temporal UI on 127.0.0.1; 0 disables it.
	UIPort int
	// TLS, when set, serves the frontend over TLS, as a production
	// cluster does; the tests of the clients' TLS, mutual TLS and API keys
	// run against it. The UI is then off.
	TLS *ServerTLS
	// APIKey, when set, is the one bearer token the frontend accepts
	// (Temporal Cloud's API keys): a call without it is refused. It needs
	// TLS.
	APIKey string
}

// ServerTLS is the frontend's TLS: its certificate and key (PEM files);
// with ClientCAFile, mutual TLS: a client must present a certificate that
// CA signed. SystemCertFile and SystemKeyFile are the certificate the
// server's own system worker presents to its frontend (signed by the CA
// in CAFile, which signed the server's too).
type ServerTLS struct {
	CertFile, KeyFile             string
	CAFile                        string
	ClientCAFile                  string
	SystemCertFile, SystemKeyFile string
}

// Temporal is a running embedded Temporal server.
type Temporal struct {
	Address   string
	Namespace string
	UIURL     string
	server    temporal.Server
	ui        *uiserver.Server
}

// StartTemporal starts an embedded Temporal server.
func StartTemporal(cfg TemporalConfig) (*Temporal, error) {
	if cfg.Namespace == "" {
		cfg.Namespace = "default"
	}
	var stores config.Persistence
	var err error
	if cfg.PostgresURL != "" {
		stores, err = postgresPersistence(cfg.PostgresURL, cfg.Namespace)
	} else {
		stores, err = sqlitePersistence(cfg.DBFile, cfg.Namespace)
	}
	if err != nil {
		return nil, err
	}

	// The services' ports are picked here, and the frontend's too unless
	// the caller names it; a port another process took before the server
	// bound it starts the server again on fresh ones.
	freeport.Reserve(cfg.Port, cfg.UIPort)
	var srv temporal.Server
	var addr string
	err = freeport.Retry(3, func(pick func() int) error {
		port := cfg.Port
		if port == 0 {
			port = pick()
		}
		addr = fmt.Sprintf("127.0.0.1:%d", port)
		service := func(port int) config.Service {
			return config.Service{RPC: config.RPC{GRPCPort: port, MembershipPort: pick(), BindOnIP: "127.0.0.1"}}
		}
		conf := &config.Config{
			Global: config.Global{
				Membership: config.Membership{MaxJoinDuration: 30 * time.Second, BroadcastAddress: "127.0.0.1"},
				PProf:      config.PProf{Port: 0},
				TLS:        rootTLS(cfg.TLS),
			},
			Persistence: stores,
			ClusterMetadata: &cluster.Config{
				FailoverVersionIncrement: 10, MasterClusterName: "active", CurrentClusterName: "active",
				ClusterInformation: map[string]cluster.ClusterInformation{
					"active": {Enabled: true, InitialFailoverVersion: 1, RPCAddress: addr},
				},
			},
			DCRedirectionPolicy: config.DCRedirectionPolicy{Policy: "noop"},
			Services: map[string]config.Service{
				"frontend": service(port), "history": service(pick()),
				"matching": service(pick()), "worker": service(pick()),
			},
			Archival: config.Archival{
				History:    config.HistoryArchival{State: "disabled"},
				Visibility: config.VisibilityArchival{State: "disabled"},
			},
			NamespaceDefaults: config.NamespaceDefaults{Archival: config.ArchivalNamespaceDefaults{
				History:    config.HistoryArchivalNamespaceDefaults{State: "disabled"},
				Visibility: config.VisibilityArchivalNamespaceDefaults{State: "disabled"},
			}},
			PublicClient: config.PublicClient{HostPort: addr},
		}
		if cfg.APIKey != "" {
			// The system worker reaches the server through an internal
			// frontend, which takes no API key (and then names no
			// public client).
			conf.Services["internal-frontend"] = service(pick())
			conf.PublicClient = config.PublicClient{}
		}
		var err error
		srv, err = startServer(conf, cfg.APIKey)
		return err
	})
	if err != nil {
		return nil, err
	}
	t := &Temporal{Address: addr, Namespace: cfg.Namespace, server: srv}
	if cfg.UIPort != 0 && cfg.TLS == nil {
		t.ui = uiserver.NewServer(uioptions.WithConfigProvider(&uiconfig.Config{
			Host: "127.0.0.1", Port: cfg.UIPort, TemporalGRPCAddress: addr, EnableUI: true,
			DefaultNamespace: cfg.Namespace, DisableNewsFetch: true, HideLogs: true,
		}))
		go func() { _ = t.ui.Start() }()
		t.UIURL = fmt.Sprintf("http://127.0.0.1:%d", cfg.UIPort)
	}
	return t, nil
}

// startServer builds and starts the server. The server reports what it
// cannot go on from (a port it cannot bind, above all) through its logger's
// Fatal and then carries on with what it lacks; the quiet logger here turns
// that report into the error returned, where the no-op logger would leave a
// nil-pointer crash in its place.
func startServer(conf *config.Config, apiKey string) (srv temporal.Server, err error) {
	defer func() {
		switch f := recover().(type) {
		case nil:
		case fatal:
			srv, err = nil, fmt.Errorf("start temporal server: %s", f)
		default:
			panic(f)
		}
	}()
	services := temporal.DefaultServices
	if _, ok := conf.Services["internal-frontend"]; ok {
		services = append(slices.Clone(services), "internal-frontend")
	}
	opts := []temporal.ServerOption{
		temporal.WithConfig(conf),
		temporal.ForServices(services),
		temporal.WithLogger(quietLogger{log.NewNoopLogger()}),
		temporal.WithDynamicConfigClient(dynamicconfig.StaticClient{
			dynamicconfig.ForceSearchAttributesCacheRefreshOnRead.Key(): []dynamicconfig.ConstrainedValue{{Value: true}},
			// A worker deployment version no longer current says it is
			// drained within seconds of its last pinned execution's end,
			// not the production server's minutes (3 of grace for
			// visibility, then a check every 3): the upgrade test waits
			// for it.
			dynamicconfig.VersionDrainageStatusVisibilityGracePeriod.Key(): []dynamicconfig.ConstrainedValue{{Value: 2 * time.Second}},
			dynamicconfig.VersionDrainageStatusRefreshInterval.Key():       []dynamicconfig.ConstrainedValue{{Value: 2 * time.Second}},
		}),
	}
	if apiKey != "" {
		opts = append(opts, temporal.WithAuthorizer(authorization.NewDefaultAuthorizer()),
			temporal.WithClaimMapper(func(*config.Config) authorization.ClaimMapper { return apiKeyClaims(apiKey) }))
	}
	srv, err = temporal.NewServer(opts...)
	if err != nil {
		return nil, fmt.Errorf("temporal server: %w", err)
	}
	if err := srv.Start(); err != nil {
		return nil, fmt.Errorf("start temporal server: %w", err)
	}
	return srv, nil
}

// rootTLS is the server's TLS configuration for t (none for nil).
func rootTLS(t *ServerTLS) config.RootTLS {
	if t == nil {
		return config.RootTLS{}
	}
	server := config.ServerTLS{CertFile: t.CertFile, KeyFile: t.KeyFile}
	if t.ClientCAFile != "" {
		server.ClientCAFiles, server.RequireClientAuth = []string{t.ClientCAFile}, true
	}
	return config.RootTLS{
		Frontend: config.GroupTLS{Server: server},
		SystemWorker: config.WorkerTLS{CertFile: t.SystemCertFile, KeyFile: t.SystemKeyFile,
			Client: config.ClientTLS{ServerName: "localhost", RootCAFiles: []string{t.CAFile}}},
	}
}

// apiKeyClaims lets in the calls that carry the API key; every other call
// to the frontend is refused.
type apiKeyClaims string

func (k apiKeyClaims) GetClaims(info *authorization.AuthInfo) (*authorization.Claims, error) {
	if info.AuthToken == "Bearer "+string(k) {
		return &authorization.Claims{System: authorization.RoleAdmin}, nil
	}
	return nil, errors.New("the API key is missing or wrong")
}

// quietLogger drops the server's logs but Fatal, which it raises as a
// fatal panic for startServer to return.
type quietLogger struct{ log.Logger }

type fatal string

func (quietLogger) Fatal(msg string, tags ...tag.Tag) {
	for _, t := range tags {
		msg += fmt.Sprintf(" %s=%v", t.Key(), t.Value())
	}
	panic(fatal(msg))
}

// Stop stops the UI and the server.
func (t *Temporal) Stop() {
	if t.ui != nil {
		t.ui.Stop()
	}
	_ = t.server.Stop()
}

// sqlitePersistence prepares the SQLite database of a server: in memory
// when dbFile is empty, else in that file, made on the first run.
func sqlitePersistence(dbFile, namespace string) (config.Persistence, error) {
	sqlCfg := &config.SQL{PluginName: sqliteplugin.PluginName, ConnectAttributes: map[string]string{}, DatabaseName: dbFile}
	if dbFile == "" {
		sqlCfg.ConnectAttributes["mode"] = "memory"
		sqlCfg.ConnectAttributes["cache"] = "shared"
		sqlCfg.DatabaseName = fmt.Sprintf("paymentsd-%d", time.Now().UnixNano())
	} else {
		sqlCfg.ConnectAttributes["mode"] = "rwc"
		// Attributes other than SQLite's URI parameters are pragmas, by
		// their own names. Without WAL every commit syncs the file, which
		// more than doubles the server's start (docs/scale-out.md); in WAL
		// mode, synchronous=normal still keeps every commit across a crash
		// of the process.
		sqlCfg.ConnectAttributes["journal_mode"] = "wal"
		sqlCfg.ConnectAttributes["synchronous"] = "normal"
		if err := os.MkdirAll(filepath.Dir(dbFile), 0o755); err != nil {
			return config.Persistence{}, err
		}
		if _, err := os.Stat(dbFile); errors.Is(err, os.ErrNotExist) {
			if err := sqlite.SetupSchema(sqlCfg); err != nil {
				return config.Persistence{}, fmt.Errorf("temporal schema: %w", err)
			}
		} else if err := forgetMembers(dbFile); err != nil {
			return config.Persistence{}, err
		}
	}
	if err := createNamespace(sqlCfg, namespace); err != nil {
		return config.Persistence{}, err
	}
	return config.Persistence{
		DefaultStore: sqliteplugin.PluginName, VisibilityStore: sqliteplugin.PluginName, NumHistoryShards: 1,
		DataStores: map[string]config.DataStore{sqliteplugin.PluginName: {SQL: sqlCfg}},
	}, nil
}

// createNamespace registers the namespace, with the custom search
// attributes, in the server's database unless it is there already. The SQL
// visibility stores keep custom attributes in pre-allocated columns; the
// namespace record maps each attribute to its column. The helper lives in
// the server's SQLite schema package but writes through the plugin
// interface every SQL store implements, so it serves Postgres as well.
func createNamespace(historyStore *config.SQL, namespace string) error {
	ns, err := sqlite.NewNamespaceConfig("active", namespace, false, SearchAttributes)
	if err != nil {
		return fmt.Errorf("temporal namespace: %w", err)
	}
	if err := sqlite.CreateNamespaces(historyStore, ns); err != nil {
		return fmt.Errorf("temporal namespace: %w", err)
	}
	return nil
}

// forgetMembers removes the cluster members a previous run of the server
// left in its database. The server is this process alone, so they are all
// gone; left there, the restarted server would wait for them to time out
// (most of a minute) before it dispatches tasks.
func forgetMembers(dbFile string) error {
	db, err := sql.Open("sqlite", "file:"+dbFile)
	if err != nil {
		return fmt.Errorf("temporal database: %w", err)
	}
	defer db.Close()
	if _, err := db.Exec(`DELETE FROM cluster_membership`); err != nil {
		return fmt.Errorf("temporal database: forget the previous run's members: %w", err)
	}
	return nil
}
