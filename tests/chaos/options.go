// Package chaos is the randomized reconciliation run (docs/reconciliation.md): it runs N
// randomized payments against the engine while faults are injected (a flaky
// JSON-RPC proxy in front of the chain, node outages, reorgs, the worker
// killed with SIGKILL), waits for the engine to settle, then reconciles the
// engine's records against the chain (package reconcile) and reports every
// discrepancy.
//
// The worker runs as its own process (the production binary, `paymentsd
// worker`), so that killing it is the production failure; the API, the
// embedded Temporal server, the dev chain and the proxy run in this
// process; when a Bitcoin class runs, two btcd nodes in regtest run beside
// it. Everything listens on 127.0.0.1. See docs/reconciliation.md.
package chaos

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// Payment classes: what a scenario's payer does.
const (
	ClassFull             = "full"              // the amount due in one transfer
	ClassTopUp            = "topup"             // part of it, then the rest
	ClassOver             = "over"              // more than due
	ClassUnder            = "under"             // part of it, never topped up; the session expires
	ClassLate             = "late"              // in full after expiry, inside the late window
	ClassMulti            = "multi"             // several token transfers to the address in one transaction
	ClassSplit            = "split"             // one transaction paying two sessions
	ClassSubmitBefore     = "submit-before"     // the payer posts the hash before broadcasting
	ClassSubmitAfter      = "submit-after"      // the payer posts the hash right after broadcasting
	ClassWrongSession     = "wrong-session"     // another session's payment hash posted to a session
	ClassExpireConfirming = "expire-confirming" // mined shortly before expiry, confirmed after it
	ClassInternal         = "internal"          // native payments made by a contract's internal calls
	ClassRefund           = "refund"            // paid in full, then refunded in part or whole from a treasury, reported by hash
	ClassPayout           = "payout"            // a batch of 1 to 3 payouts from a treasury, approved by an owner, reported or left to the scanner

	// Bitcoin classes: sessions of a plan that accepts bitcoin alone, paid
	// on a btcd node in regtest. Every payment is seen in the mempool first.
	ClassBTCFull        = "btc-full"         // the amount due in one output
	ClassBTCTopUp       = "btc-topup"        // part of it, then the rest
	ClassBTCOver        = "btc-over"         // more than due
	ClassBTCUnder       = "btc-under"        // part of it, never topped up; the session expires
	ClassBTCMulti       = "btc-multi"        // one transaction's several outputs, to one session or two
	ClassBTCReplace     = "btc-rbf"          // paid, then replaced by fee (BIP125) before a block mines it
	ClassBTCDoubleSpend = "btc-double-spend" // paid, then the coin spent elsewhere before a block mines it
	ClassBTCLate        = "btc-late"         // in full after expiry, inside the late window
)

// Fault classes.
const (
	FaultRPCErrors   = "rpc-errors"   // a share of JSON-RPC requests answered with an error
	FaultRPCTimeouts = "rpc-timeouts" // a share of requests held until the caller gives up
	FaultOutage      = "outage"       // the node unreachable (connection refused) for a minute or more
	FaultReorg       = "reorg"        // blocks replaced by the simulated backend's Fork, some payments dropped
	FaultKill        = "kill"         // the worker process killed with SIGKILL and started again
	// Bitcoin faults, injected when a Bitcoin class runs.
	FaultBTCReorg   = "btc-reorg"   // the node's last blocks invalidated (invalidateblock) and a longer branch mined, some payments double-spent in between
	FaultBTCRestart = "btc-restart" // the node stopped and started again; its mempool is lost, and the payers' wallets send their unmined payments again
	// Money-out faults, on the refund and payout classes.
	FaultMadeUpHashes = "made-up-hashes" // a second project reports never-mined hashes against its own payouts and refunds
	FaultStuckTx      = "stuck-tx"       // refunds' and payouts' transactions held unmined, replaced at their nonce, or left to go stale and then canceled or replaced
	FaultUnreported   = "unreported"     // refunds and payouts paid on chain and never reported
	// The engine's own infrastructure.
	FaultTemporalRestart = "temporal-restart" // the Temporal server (frontend, history, all) killed with SIGKILL and started again on its address and its state
	FaultPostgresRestart = "postgres-restart" // the run's PostgreSQL cluster (its own, never the machine's) stopped and started again
	FaultWorkerCut       = "worker-cut"       // the worker's connections to Temporal dropped and refused for a while; the API still reaches Temporal
)

// AllClasses are the payment classes in their order of report; AllFaults
// the fault classes.
var (
	AllClasses = []string{ClassFull, ClassTopUp, ClassOver, ClassUnder, ClassLate, ClassMulti, ClassSplit,
		ClassSubmitBefore, ClassSubmitAfter, ClassWrongSession, ClassExpireConfirming, ClassInternal, ClassRefund, ClassPayout,
		ClassBTCFull, ClassBTCTopUp, ClassBTCOver, ClassBTCUnder, ClassBTCMulti, ClassBTCReplace, ClassBTCDoubleSpend, ClassBTCLate}
	AllFaults = []string{FaultRPCErrors, FaultRPCTimeouts, FaultOutage, FaultReorg, FaultKill, FaultBTCReorg, FaultBTCRestart,
		FaultMadeUpHashes, FaultStuckTx, FaultUnreported, FaultTemporalRestart, FaultPostgresRestart, FaultWorkerCut}
	bitcoinClasses = []string{ClassBTCFull, ClassBTCTopUp, ClassBTCOver, ClassBTCUnder, ClassBTCMulti, ClassBTCReplace,
		ClassBTCDoubleSpend, ClassBTCLate}
)

// Presets name sets of classes for -classes and -faults. "happy" is what
// today's engine gets right; "all" is every class and fault there is.
// Internal native payments are outside "all": the engine now reads them
// from the dev chain's call traces (tests/e2e), but the reconciliation
// does not yet match them to the engine's records by their call order.
var (
	classPresets = map[string][]string{
		"happy": {ClassFull, ClassTopUp, ClassOver, ClassUnder, ClassLate},
		"all": {ClassFull, ClassTopUp, ClassOver, ClassUnder, ClassLate, ClassMulti, ClassSplit,
			ClassSubmitBefore, ClassSubmitAfter, ClassWrongSession, ClassExpireConfirming, ClassRefund, ClassPayout,
			ClassBTCFull, ClassBTCTopUp, ClassBTCOver, ClassBTCUnder, ClassBTCMulti, ClassBTCReplace, ClassBTCDoubleSpend,
			ClassBTCLate},
		"evm": {ClassFull, ClassTopUp, ClassOver, ClassUnder, ClassLate, ClassMulti, ClassSplit,
			ClassSubmitBefore, ClassSubmitAfter, ClassWrongSession, ClassExpireConfirming, ClassRefund, ClassPayout},
		"bitcoin": bitcoinClasses,
	}
	faultPresets = map[string][]string{
		"none":  {},
		"happy": {FaultRPCErrors},
		"all": {FaultRPCErrors, FaultRPCTimeouts, FaultOutage, FaultReorg, FaultKill, FaultBTCReorg, FaultBTCRestart,
			FaultMadeUpHashes, FaultStuckTx, FaultUnreported, FaultTemporalRestart, FaultPostgresRestart, FaultWorkerCut},
		"bitcoin":   {FaultBTCReorg, FaultBTCRestart},
		"money-out": {FaultMadeUpHashes, FaultStuckTx, FaultUnreported},
		"infra":     {FaultTemporalRestart, FaultPostgresRestart, FaultWorkerCut},
	}
)

// Options configure a run.
type Options struct {
	N           int      // scenarios
	Seed        uint64   // randomness of the scenarios and the faults
	Classes     []string // payment classes drawn from
	Faults      []string // fault classes injected
	Concurrency int      // payer accounts, so scenarios paying at once

	// PayPhase is how long scenarios start and faults happen; 0 sizes it
	// from N (a second per scenario, at least long enough for an outage).
	PayPhase      time.Duration
	BlockInterval time.Duration
	Confirmations int
	// ShortLifetime is the lifetime of the sessions of the classes that
	// need an expiry during the run (under, late, expire-confirming); the
	// others' sessions outlive the run.
	ShortLifetime time.Duration
	// Margin is the uncertainty accepted between a block's time and a
	// session's expiry; the scenarios keep their payments further away.
	Margin         time.Duration
	PendingTimeout time.Duration

	RPCErrorRate   float64
	RPCTimeoutRate float64
	RPCHold        time.Duration // how long a held request is held
	Outages        int
	OutageLength   time.Duration
	Reorgs         int
	MaxReorgDepth  int
	Kills          int

	// The Bitcoin node's: a block every BitcoinInterval; final at
	// BitcoinFinality confirmations under 100 USD and one more above (a
	// speed policy); BitcoinReorgs reorgs of up to BitcoinMaxReorgDepth
	// blocks; BitcoinRestarts restarts, each down for BitcoinDown.
	BitcoinInterval      time.Duration
	BitcoinFinality      int
	BitcoinReorgs        int
	BitcoinMaxReorgDepth int
	BitcoinRestarts      int
	BitcoinDown          time.Duration

	// StaleAfter is the worker's MONEY_OUT_STALE_AFTER when stuck-tx is
	// injected: how long a refund's or payout's transaction may stay
	// unmined before it is stale. MadeUpHashes is how many items the
	// second project makes (made-up-hashes; 0: one per ten scenarios, at
	// least 4).
	StaleAfter   time.Duration
	MadeUpHashes int

	// The engine's infrastructure: TemporalRestarts kills of the Temporal
	// server, each started again TemporalDown later; PostgresRestarts
	// restarts of the run's PostgreSQL cluster, each down for
	// PostgresDown; WorkerCuts cuts of the worker from Temporal, each
	// WorkerCutLength long.
	TemporalRestarts int
	TemporalDown     time.Duration
	PostgresRestarts int
	PostgresDown     time.Duration
	WorkerCuts       int
	WorkerCutLength  time.Duration

	// Settle bounds the wait for the engine to finish after the payments;
	// Stall ends it early when nothing has changed for that long.
	Settle time.Duration
	Stall  time.Duration

	// Paymentsd is the production binary; empty builds it.
	Paymentsd string
	// Dir keeps the run's logs; empty makes one under .data/chaos.
	Dir     string
	Verbose bool
}

// DefaultOptions are the options of `make chaos`.
func DefaultOptions() Options {
	return Options{
		N: 50, Seed: uint64(time.Now().UnixNano()), Classes: classPresets["all"], Faults: faultPresets["all"],
		Concurrency: 12, BlockInterval: time.Second, Confirmations: 8, ShortLifetime: 40 * time.Second,
		Margin: 5 * time.Second, PendingTimeout: time.Minute,
		RPCErrorRate: 0.05, RPCTimeoutRate: 0.01, RPCHold: 20 * time.Second,
		Outages: 1, OutageLength: 70 * time.Second, Reorgs: 3, MaxReorgDepth: 3, Kills: 2,
		BitcoinInterval: 2 * time.Second, BitcoinFinality: 3, BitcoinReorgs: 2, BitcoinMaxReorgDepth: 2,
		BitcoinRestarts: 1, BitcoinDown: 5 * time.Second, StaleAfter: time.Minute,
		TemporalRestarts: 1, TemporalDown: 5 * time.Second, PostgresRestarts: 1, PostgresDown: 5 * time.Second,
		WorkerCuts: 1, WorkerCutLength: 30 * time.Second,
		Settle: 5 * time.Minute, Stall: 90 * time.Second,
	}
}

// ParseSet reads a comma-separated list of names from known, or a preset.
func ParseSet(s string, known []string, presets map[string][]string) ([]string, error) {
	var out []string
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		switch {
		case name == "":
		case presets[name] != nil:
			out = append(out, presets[name]...)
		case slices.Contains(known, name):
			out = append(out, name)
		default:
			names := slices.Clone(known)
			for p := range presets {
				names = append(names, p)
			}
			sort.Strings(names)
			return nil, fmt.Errorf("unknown %q; choose from %s", name, strings.Join(names, ", "))
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// ParseClasses reads -classes.
func ParseClasses(s string) ([]string, error) { return ParseSet(s, AllClasses, classPresets) }

// ParseFaults reads -faults.
func ParseFaults(s string) ([]string, error) { return ParseSet(s, AllFaults, faultPresets) }

func (o Options) has(fault string) bool { return slices.Contains(o.Faults, fault) }

// bitcoin says whether the run pays bitcoin: a Bitcoin class is chosen.
func (o Options) bitcoin() bool {
	return slices.ContainsFunc(o.Classes, func(c string) bool { return slices.Contains(bitcoinClasses, c) })
}

func (o *Options) check() error {
	switch {
	case o.N < 1:
		return fmt.Errorf("-n must be at least 1")
	case len(o.Classes) == 0:
		return fmt.Errorf("no payment class chosen")
	case o.Concurrency < 2:
		return fmt.Errorf("-concurrency must be at least 2")
	case o.BlockInterval < time.Second:
		// Block times have one-second resolution and must increase: faster
		// blocks make the chain's clock run ahead, and expiry is judged by it.
		return fmt.Errorf("-block-interval must be at least 1s")
	case o.Confirmations < 2:
		return fmt.Errorf("-confirmations must be at least 2")
	case o.MaxReorgDepth >= o.Confirmations:
		return fmt.Errorf("-max-reorg-depth must be under -confirmations: deeper reorgs undo final payments")
	case o.ShortLifetime < 4*o.Margin+10*time.Second:
		return fmt.Errorf("-short-lifetime must be at least 4 x -margin + 10s")
	case o.has(FaultStuckTx) && o.StaleAfter < time.Minute:
		return fmt.Errorf("-stale-after must be at least 1m (the engine's lower bound)")
	case o.bitcoin() && o.BitcoinInterval < time.Second:
		return fmt.Errorf("-bitcoin-interval must be at least 1s")
	case o.bitcoin() && o.BitcoinMaxReorgDepth >= o.BitcoinFinality:
		return fmt.Errorf("-bitcoin-max-reorg-depth must be under -bitcoin-finality: deeper reorgs undo final payments")
	}
	if o.MadeUpHashes == 0 {
		o.MadeUpHashes = max(4, o.N/10)
	}
	if o.PayPhase == 0 {
		o.PayPhase = max(time.Duration(o.N)*time.Second, time.Minute)
		if o.has(FaultOutage) {
			o.PayPhase = max(o.PayPhase, time.Duration(o.Outages)*(o.OutageLength+10*time.Second)+30*time.Second)
		}
	}
	return nil
}
