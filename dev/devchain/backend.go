package devchain

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/eth"
	"github.com/ethereum/go-ethereum/eth/catalyst"
	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/eth/filters"
	"github.com/ethereum/go-ethereum/eth/tracers"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/node"
	"github.com/ethereum/go-ethereum/p2p"
	"github.com/ethereum/go-ethereum/params"
	"github.com/ethereum/go-ethereum/rpc"

	// The native tracers (callTracer, prestateTracer, ...) register
	// themselves with the tracing API on import.
	_ "github.com/ethereum/go-ethereum/eth/tracers/native"
)

// startBackend starts the chain's node serving HTTP JSON-RPC on addr and
// returns it with the endpoint's URL. With port 0 the node picks a free
// port itself and the URL names the one it bound.
func startBackend(addr string, alloc types.GenesisAlloc) (*backend, string, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, "", fmt.Errorf("devchain: listen address %q: %w", addr, err)
	}
	if host == "" {
		host = "127.0.0.1" // the node serves no HTTP at all with an empty host
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return nil, "", fmt.Errorf("devchain: listen address %q: bad port", addr)
	}
	urlHost := host
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		urlHost = "127.0.0.1"
	}
	if port != 0 {
		if err := checkPort(host, port); err != nil {
			return nil, "", err
		}
	}
	b, err := newBackend(host, port, alloc)
	if err != nil {
		return nil, "", fmt.Errorf("devchain: start backend: %w", err)
	}
	_, bound, err := net.SplitHostPort(strings.TrimPrefix(b.node.HTTPEndpoint(), "http://"))
	if err != nil {
		b.Close()
		return nil, "", fmt.Errorf("devchain: read the bound port: %w", err)
	}
	return b, "http://" + net.JoinHostPort(urlHost, bound), nil
}

// backend is go-ethereum's simulated backend (ethclient/simulated) built
// here rather than by simulated.NewBackend, which hides its node: the same
// in-memory node and Ethereum service, mined by a simulated beacon, with
// go-ethereum's tracing API (debug_traceTransaction,
// debug_traceBlockByNumber and the rest, with the native tracers such as
// callTracer) registered and served over HTTP beside eth, net and web3.
type backend struct {
	node   *node.Node
	beacon *catalyst.SimulatedBeacon
	client *ethclient.Client
}

// newBackend builds and starts the chain's node on host:port (port 0 picks
// a free port). A port that cannot be bound comes back as an error that
// wraps the listen error, and so does a panic while building, since
// go-ethereum's constructors assume that little can fail.
func newBackend(host string, port int, alloc types.GenesisAlloc) (b *backend, err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				err = e
			} else {
				err = fmt.Errorf("%v", r)
			}
		}
	}()

	// As simulated.NewBackend configures the node and the service.
	nc := node.DefaultConfig
	nc.DataDir = ""
	nc.P2P = p2p.Config{NoDiscovery: true}
	nc.HTTPHost = host
	nc.HTTPPort = port
	// debug brings the tracing API, but also the rest of go-ethereum's
	// debug namespace (profiling, setHead, ...): fine on a dev chain,
	// which must never be reachable from anywhere untrusted.
	nc.HTTPModules = []string{"eth", "net", "web3", "debug"}
	// Any Host header and origin: it is a dev chain, reached as
	// localhost, 127.0.0.1 or a compose service name, and from browser
	// checkouts.
	nc.HTTPVirtualHosts = []string{"*"}
	nc.HTTPCors = []string{"*"}

	// Every fork is active from genesis, so the system contracts those
	// forks call into must be there too; the caller's alloc wins.
	genesisAlloc := core.SystemContractAllocs()
	maps.Copy(genesisAlloc, alloc)
	ec := ethconfig.Defaults
	ec.Genesis = &core.Genesis{
		Config:   params.AllDevChainProtocolChanges,
		GasLimit: gasLimit,
		Alloc:    genesisAlloc,
		// A genesis at the epoch would make the first block look
		// decades stale to anything checking block age.
		Timestamp: uint64(time.Now().Unix()),
	}
	ec.SyncMode = ethconfig.FullSync
	ec.TxPool.NoLocals = true
	ec.LogNoHistory = true // unindexed log search, as the simulated backend
	ec.Miner.GasCeil = gasLimit

	stack, err := node.New(&nc)
	if err != nil {
		return nil, err
	}
	svc, err := eth.New(stack, &ec)
	if err != nil {
		stack.Close()
		return nil, err
	}
	stack.RegisterAPIs([]rpc.API{{
		Namespace: "eth",
		Service:   filters.NewFilterAPI(filters.NewFilterSystem(svc.APIBackend, filters.Config{})),
	}})
	stack.RegisterAPIs(tracers.APIs(svc.APIBackend))
	// A failed start (the HTTP port taken) closes the node itself.
	if err := stack.Start(); err != nil {
		return nil, err
	}
	beacon, err := catalyst.NewSimulatedBeacon(0, common.Address{}, svc)
	if err != nil {
		stack.Close()
		return nil, err
	}
	// As simulated.NewBackend: reorg back to genesis, so that the beacon's
	// view of the head is the chain's.
	if err := beacon.Fork(svc.BlockChain().GetCanonicalHash(0)); err != nil {
		beacon.Stop()
		stack.Close()
		return nil, err
	}
	return &backend{node: stack, beacon: beacon, client: ethclient.NewClient(stack.Attach())}, nil
}

// Close stops the node, and with it the HTTP endpoint.
func (b *backend) Close() error {
	b.client.Close()
	return errors.Join(b.beacon.Stop(), b.node.Close())
}

// checkPort fails early and clearly on a taken port, before the backend
// has allocated a whole chain only to fail binding it.
func checkPort(host string, port int) error {
	l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("devchain: listen: %w", err)
	}
	return l.Close()
}
