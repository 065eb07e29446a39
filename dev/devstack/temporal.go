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
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/log"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/schema/sqlite"
	"go.temporal.io/server/temporal"

	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uioptions "github.com/temporalio/ui-server/v2/server/server_options"
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
	if cfg.Port == 0 {
		cfg.Port = freePort()
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

	addr := fmt.Sprintf("127.0.0.1:%d", cfg.Port)
	service := func(port int) config.Service {
		return config.Service{RPC: config.RPC{GRPCPort: port, MembershipPort: freeMembershipPort(), BindOnIP: "127.0.0.1"}}
	}
	conf := &config.Config{
		Global: config.Global{
			Membership: config.Membership{MaxJoinDuration: 30 * time.Second, BroadcastAddress: "127.0.0.1"},
			PProf:      config.PProf{Port: 0},
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
			"frontend": service(cfg.Port), "history": service(freePort()),
			"matching": service(freePort()), "worker": service(freePort()),
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
	srv, err := temporal.NewServer(
		temporal.WithConfig(conf),
		temporal.ForServices(temporal.DefaultServices),
		temporal.WithLogger(log.NewNoopLogger()),
		temporal.WithDynamicConfigClient(dynamicconfig.StaticClient{
			dynamicconfig.ForceSearchAttributesCacheRefreshOnRead.Key(): []dynamicconfig.ConstrainedValue{{Value: true}},
		}),
	)
	if err != nil {
		return nil, fmt.Errorf("temporal server: %w", err)
	}
	if err := srv.Start(); err != nil {
		return nil, fmt.Errorf("start temporal server: %w", err)
	}
	t := &Temporal{Address: addr, Namespace: cfg.Namespace, server: srv}
	if cfg.UIPort != 0 {
		t.ui = uiserver.NewServer(uioptions.WithConfigProvider(&uiconfig.Config{
			Host: "127.0.0.1", Port: cfg.UIPort, TemporalGRPCAddress: addr, EnableUI: true,
			DefaultNamespace: cfg.Namespace, DisableNewsFetch: true, HideLogs: true,
		}))
		go func() { _ = t.ui.Start() }()
		t.UIURL = fmt.Sprintf("http://127.0.0.1:%d", cfg.UIPort)
	}
	return t, nil
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

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// freeMembershipPort picks a free port for a service's membership (ringpop)
// listener below 32768: the server records it in the cluster_membership
// table, whose Postgres schema keeps it in a smallint, and the kernel's
// ephemeral ports that freePort gets are above that.
func freeMembershipPort() int {
	for {
		port := 20000 + rand.IntN(32768-20000)
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			l.Close()
			return port
		}
	}
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
