package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/jackc/pgx/v5"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"github.com/paymentsd/paymentsd/dev/btcnode"
	"github.com/paymentsd/paymentsd/dev/devchain"
	"github.com/paymentsd/paymentsd/tests/chaos/reconcile"
)

// errReported is a scenario error already recorded as a problem.
var errReported = errors.New("reported")

// run is one reconciliation run in progress.
type run struct {
	o     Options
	s     *stack
	start time.Time
	logf  func(string, ...any)

	// chainMu is held for reading by every send and for writing by a
	// reorg.
	chainMu  sync.RWMutex
	accounts chan devchain.Account
	// minerMu is held by whoever pauses the interval miner (a reorg, the
	// clock keeper), so that one does not resume it under the other.
	minerMu sync.Mutex

	mu       sync.Mutex
	sessions map[string]*session
	txs      []sentTx
	btcTxs   []*sentBTC
	refunds  []sentRefund
	payouts  []sentPayout
	// ownerCookie is the owner's session, which approves payout batches
	// and proves the treasuries they pay from.
	ownerCookie string
	// proven are the treasuries the project has proven it controls.
	proven map[common.Address]bool
	// outSeq numbers the refunds and payouts paid, for the money-out
	// faults to take in turn; outStats counts what those faults did.
	outSeq   atomic.Int64
	outStats moneyOutStats
	// secondMu is held while the second project's treasury sends.
	secondMu sync.Mutex
	// refundWaits are, per refund, how long after its payment was sent
	// the engine had recorded it (zero: before the first look) and the
	// API took a refund of it (the payment final).
	refundWaits [][2]time.Duration
	submits     map[string]int
	problems    []reconcile.Discrepancy // the API's failures and leaks
	faults      faultLog
}

func (r *run) problem(kind, session, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.problems = append(r.problems, reconcile.Discrepancy{Kind: kind, SessionID: session, Detail: fmt.Sprintf(format, args...)})
}

// Report is a run's outcome.
type Report struct {
	Options   Options
	Dir       string
	Scenarios []*scenario
	Sessions  map[string]*session
	Sent      []sentTx
	SentBTC   []*sentBTC
	Submits   map[string]int
	// RefundWaits are the refund scenarios' waits after their payment:
	// until the engine recorded it, and until it was final.
	RefundWaits [][2]time.Duration
	// MoneyOut counts what the money-out faults did.
	MoneyOut *moneyOutStats
	Result   *reconcile.Result
	Chain    *reconcile.Chain
	// Problems are the harness's own findings: API failures, answers that
	// show another session's data, and scenario errors.
	Problems []reconcile.Discrepancy
	Faults   *faultLog
	Proxy    proxyStats
	Worker   workerStats
	// Settled says how the wait for the engine ended.
	Settled             string
	Started             time.Time
	PayPhase, SettleFor time.Duration
	ReconcileFor, Total time.Duration
	// Dropped counts the reorged transactions that are not on the chain
	// in the end.
	Dropped int
	// BitcoinPayments counts the engine's bitcoin payment records;
	// FromMempool those first seen in the mempool (pending before a block
	// mined them), BitcoinFailed those that failed (replaced or
	// double-spent).
	BitcoinPayments, FromMempool, BitcoinFailed int
	// PhaseStart is when the payment phase began, which the faults'
	// timeline counts from; APIRetries how many API requests were tried
	// again (apiClient.postWith).
	PhaseStart time.Time
	APIRetries int64
	// Drift is how far the chain's clock ran ahead of the wall clock;
	// BitcoinDrift the Bitcoin node's.
	Drift, BitcoinDrift time.Duration
}

type proxyStats struct {
	Requests, Errors, Timeouts int64
	Outages                    int
	Down                       time.Duration
}

// Failed reports whether the run found anything wrong.
func (rep *Report) Failed() bool {
	return rep.Result == nil || len(rep.Result.Discrepancies) > 0 || len(rep.Problems) > 0
}

// Run runs the scenarios against a fresh stack, injects the faults,
// waits for the engine to settle, and reconciles. logf receives progress.
func Run(ctx context.Context, o Options, logf func(string, ...any)) (*Report, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	if o.Dir == "" {
		o.Dir = filepath.Join(".data", "chaos", time.Now().UTC().Format("20060102-150405"))
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, err
	}
	began := time.Now()
	logf("seed %d: %d scenarios of %v; faults %v; payment phase %s; logs in %s", o.Seed, o.N, o.Classes, o.Faults, o.PayPhase, o.Dir)
	s, err := startStack(ctx, o, logf)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	logf("stack ready in %s: chain %s behind proxy %s, Temporal %s, worker pid log %s",
		time.Since(began).Round(time.Second), s.chain.URL, s.proxy.URL, s.temporal.Address, filepath.Join(o.Dir, "worker.log"))

	rng := rand.New(rand.NewPCG(o.Seed, 0x5eed))
	r := &run{o: o, s: s, logf: logf, accounts: make(chan devchain.Account, len(s.chain.Accounts)),
		sessions: map[string]*session{}, submits: map[string]int{}}
	for _, a := range s.chain.Accounts[:o.Concurrency] {
		r.accounts <- a
	}
	if s.second != nil {
		if err := r.prove(ctx, s.second.projectID, s.second.treasury); err != nil {
			return nil, fmt.Errorf("the second project's treasury: %w", err)
		}
	}
	scenarios := plan(o, rng)
	// The set-up mined blocks faster than one a second, which put the
	// chain's clock ahead; expiry is judged by block times, so let the wall
	// clock catch up first, and keep it caught up.
	r.keepClock(ctx)
	keeperCtx, stopKeeper := context.WithCancel(ctx)
	defer stopKeeper()
	go func() {
		for sleep(keeperCtx, 5*time.Second) == nil {
			r.keepClock(keeperCtx)
		}
	}()
	r.start = time.Now()
	rep := &Report{Options: o, Dir: o.Dir, Scenarios: scenarios, Started: began, Faults: &r.faults, PhaseStart: r.start}

	// The scenarios and the faults run together; the run is bounded: the
	// phase, then the slowest scenario (a late payment after a short
	// session's expiry), then the settle wait.
	limit := o.PayPhase + o.ShortLifetime + o.Margin + 2*time.Minute
	playCtx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var wg sync.WaitGroup
	for _, sc := range scenarios {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := r.play(playCtx, sc); err != nil && !errors.Is(err, errReported) {
				r.problem("harness", "", "scenario %d (%s): %v", sc.N, sc.Class, err)
			}
		}()
	}
	faultsDone := make(chan struct{})
	go func() {
		defer close(faultsDone)
		r.injectFaults(playCtx, rng)
	}()
	progress := time.NewTicker(15 * time.Second)
	defer progress.Stop()
	allDone := make(chan struct{})
	go func() { wg.Wait(); <-faultsDone; close(allDone) }()
wait:
	for {
		select {
		case <-allDone:
			break wait
		case <-progress.C:
			r.mu.Lock()
			logf("%s: %d sessions opened, %d transactions sent", time.Since(r.start).Round(time.Second), len(r.sessions), len(r.txs))
			r.mu.Unlock()
		}
	}
	rep.PayPhase = time.Since(r.start)
	logf("payments done in %s: %d sessions, %d transactions; waiting for the engine to settle", rep.PayPhase.Round(time.Second),
		len(r.sessions), len(r.txs))

	settleStart := time.Now()
	rep.Settled = r.settle(ctx)
	rep.SettleFor = time.Since(settleStart)
	logf("settle: %s after %s", rep.Settled, rep.SettleFor.Round(time.Second))

	reconcileStart := time.Now()
	rec, err := reconcile.ReadRecords(ctx, s.db, s.projectID)
	if err != nil {
		return nil, err
	}
	readAt := time.Now()
	watched := make([]common.Address, 0, len(rec.Sessions)+len(rec.Refunds))
	for _, cs := range rec.Sessions {
		watched = append(watched, cs.DepositAddress)
	}
	for _, f := range append(rec.Refunds, rec.Payouts...) {
		watched = append(watched, f.To) // money out
	}
	// Money out: every transfer from the project's treasuries.
	r.mu.Lock()
	var treasuries []common.Address
	for a := range r.proven {
		treasuries = append(treasuries, a)
	}
	r.mu.Unlock()
	ch, err := reconcile.ReadChainOut(ctx, s.chain.URL, 0, watched, treasuries, []common.Address{s.chain.Token})
	if err != nil {
		return nil, err
	}
	if s.btc != nil {
		var addrs []string
		for _, cs := range rec.Sessions {
			if cs.BitcoinAddress != "" {
				addrs = append(addrs, cs.BitcoinAddress)
			}
		}
		// No block while the merchant's node, which has the network's
		// best block, is read.
		s.btcMu.Lock()
		err := s.btcEngine.WaitSynced(ctx, s.btc, time.Minute)
		if err == nil {
			ch.Bitcoin, err = reconcile.ReadBitcoin(ctx, s.btcEngine.URL(), btcnode.Params, 1, addrs)
		}
		s.btcMu.Unlock()
		if err != nil {
			return nil, err
		}
	}
	for _, t := range rec.Transactions {
		if t.ChainID != 0 {
			continue
		}
		rep.BitcoinPayments++
		if len(t.History) > 1 && t.History[0] == "pending" && t.History[1] != "failed" {
			rep.FromMempool++
		}
		if t.Status == "failed" {
			rep.BitcoinFailed++
		}
	}
	rep.Result = reconcile.Reconcile(ch, rec, reconcile.Settings{ChainID: s.chain.ChainID.Int64(), Now: readAt, Margin: o.Margin,
		NotMoneyOut: []common.Address{s.multisend}})
	rep.Chain = ch
	rep.ReconcileFor = time.Since(reconcileStart)

	r.mu.Lock()
	for id, cs := range r.sessions {
		if !hasSession(rec, id) {
			r.problems = append(r.problems, reconcile.Discrepancy{Kind: "api", SessionID: id,
				Detail: fmt.Sprintf("opened (%s) but not recorded", cs.Class)})
		}
	}
	// The engine cannot have seen a payment before the payer sent it:
	// when it first saw one decides whether the payment was in time.
	for _, t := range r.btcTxs {
		txid := t.Tx.TxHash().String()
		if seen, ok := rec.FirstSeen[txid]; ok && seen.Before(t.At.Add(-time.Second)) {
			r.problems = append(r.problems, reconcile.Discrepancy{Kind: "records", SessionID: t.Sessions[0].ID,
				Detail: fmt.Sprintf("%s is recorded first seen at %s, before it was sent at %s", txid, seen.Format(time.RFC3339Nano),
					t.At.Format(time.RFC3339Nano))})
		}
	}
	for _, f := range r.refunds {
		i := slices.IndexFunc(rec.Refunds, func(x reconcile.Refund) bool { return x.ID == f.ID })
		switch {
		case i < 0:
			r.problems = append(r.problems, reconcile.Discrepancy{Kind: reconcile.KindRefund, SessionID: f.SessionID,
				Detail: fmt.Sprintf("refund %s made but not recorded", f.ID)})
		case rec.Refunds[i].To != f.To || rec.Refunds[i].Token != f.Token || rec.Refunds[i].Amount.Cmp(f.Amount) != 0:
			r.problems = append(r.problems, reconcile.Discrepancy{Kind: reconcile.KindRefund, SessionID: f.SessionID,
				Detail: fmt.Sprintf("refund %s of %s to %s is recorded as %s to %s", f.ID, f.Amount, f.To.Hex(), rec.Refunds[i].Amount, rec.Refunds[i].To.Hex())})
		case f.Hash == (common.Hash{}) && rec.Refunds[i].Status != "canceled":
			// Canceled while stale, its transaction never sent.
			r.problems = append(r.problems, reconcile.Discrepancy{Kind: reconcile.KindRefund, SessionID: f.SessionID,
				Detail: fmt.Sprintf("refund %s, canceled while stale, is %s", f.ID, rec.Refunds[i].Status)})
		case f.Hash != (common.Hash{}) && rec.Refunds[i].Status != "finalized" &&
			slices.ContainsFunc(ch.Transfers, func(t reconcile.Transfer) bool { return t.TxHash == f.Hash }):
			// Paid on the canonical chain (reported, replaced or neither):
			// it must be followed to the end.
			r.problems = append(r.problems, reconcile.Discrepancy{Kind: reconcile.KindRefund, SessionID: f.SessionID,
				Detail: fmt.Sprintf("refund %s, paid by %s, is %s", f.ID, f.Hash.Hex(), rec.Refunds[i].Status)})
		}
	}
	for _, f := range r.payouts {
		i := slices.IndexFunc(rec.Payouts, func(x reconcile.Refund) bool { return x.ID == f.ID })
		switch {
		case i < 0:
			r.problems = append(r.problems, reconcile.Discrepancy{Kind: reconcile.KindRefund, SessionID: f.BatchID,
				Detail: fmt.Sprintf("payout %s made but not recorded", f.ID)})
		case rec.Payouts[i].To != f.To || rec.Payouts[i].Token != f.Token || rec.Payouts[i].Amount.Cmp(f.Amount) != 0:
			r.problems = append(r.problems, reconcile.Discrepancy{Kind: reconcile.KindRefund, SessionID: f.BatchID,
				Detail: fmt.Sprintf("payout %s of %s to %s is recorded as %s to %s", f.ID, f.Amount, f.To.Hex(), rec.Payouts[i].Amount, rec.Payouts[i].To.Hex())})
		case rec.Payouts[i].Status != "finalized" && slices.ContainsFunc(ch.Transfers, func(t reconcile.Transfer) bool { return t.TxHash == f.Hash }):
			// Paid on the canonical chain (not dropped by a reorg), but
			// not recorded so: reported or not, it must be followed.
			r.problems = append(r.problems, reconcile.Discrepancy{Kind: reconcile.KindRefund, SessionID: f.BatchID,
				Detail: fmt.Sprintf("payout %s, paid by %s, is %s", f.ID, f.Hash.Hex(), rec.Payouts[i].Status)})
		}
	}
	rep.Sessions, rep.Sent, rep.SentBTC, rep.Submits, rep.Problems = r.sessions, r.txs, r.btcTxs, r.submits, r.problems
	rep.RefundWaits = r.refundWaits
	rep.MoneyOut = &r.outStats
	r.mu.Unlock()
	rep.Problems = append(rep.Problems, r.failedWorkflows(ctx)...)
	for _, f := range r.faults.failures {
		rep.Problems = append(rep.Problems, reconcile.Discrepancy{Kind: "harness", Detail: "fault not injected: " + f})
	}
	ps := s.proxy.Stats()
	rep.Proxy = proxyStats{ps.Requests, ps.Errors, ps.Timeouts, ps.Outages, ps.Down}
	rep.Worker = s.worker.Stats()
	rep.APIRetries = s.api.retries.Load()
	rep.Dropped = r.dropped(ctx)
	if h, err := s.chain.Client().HeaderByNumber(ctx, nil); err == nil {
		rep.Drift = time.Until(time.Unix(int64(h.Time), 0)).Round(time.Second)
	}
	if s.btc != nil {
		if tip, err := s.btc.Client.GetBestBlockHash(); err == nil {
			if h, err := s.btc.Client.GetBlockHeader(tip); err == nil {
				rep.BitcoinDrift = time.Until(h.Timestamp).Round(time.Second)
			}
		}
	}
	rep.Total = time.Since(began)
	if rep.Failed() && s.pg != nil {
		s.pg.keep = true
		logf("the run's database is kept in %s (stopped; pg_ctl -D %s start, as the postgres user, reads it again)", s.pg.cluster.Dir, s.pg.cluster.Dir)
	}
	return rep, nil
}

// minedUnfollowedRefunds counts the refunds and payouts still recorded
// sent or stale whose transaction the chain has mined: the engine is yet
// to follow them.
func (r *run) minedUnfollowedRefunds(ctx context.Context) int64 {
	rows, err := r.s.db.Query(ctx, `SELECT tx_hash FROM refunds WHERE project_id = $1 AND status IN ('sent', 'stale')
		UNION ALL SELECT tx_hash FROM payouts WHERE project_id = $1 AND status IN ('sent', 'stale')`, r.s.projectID)
	if err != nil {
		return 1
	}
	hashes, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return 1
	}
	var n int64
	for _, h := range hashes {
		if _, err := r.s.chain.Client().TransactionReceipt(ctx, common.HexToHash(h)); err == nil {
			n++
		}
	}
	return n
}

// keepClock holds the interval miner while the chain's clock is ahead of
// the wall clock. Block times have one-second resolution and each block's
// must be later than its parent's, so every block mined off the interval
// (set-up, reorgs) moves the chain's clock a second ahead for good.
func (r *run) keepClock(ctx context.Context) {
	h, err := r.s.chain.Client().HeaderByNumber(ctx, nil)
	if err != nil {
		return
	}
	ahead := time.Until(time.Unix(int64(h.Time), 0))
	if ahead < 2*time.Second {
		return
	}
	r.minerMu.Lock()
	defer r.minerMu.Unlock()
	r.s.chain.Pause()
	defer r.s.chain.Resume()
	_ = sleep(ctx, ahead)
}

// failedWorkflows lists the engine's workflows that ended abnormally
// (failed, timed out, terminated): none should, whatever the chain or the
// worker did.
func (r *run) failedWorkflows(ctx context.Context) []reconcile.Discrepancy {
	var out []reconcile.Discrepancy
	var token []byte
	for {
		resp, err := r.s.tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: "ExecutionStatus = 'Failed' OR ExecutionStatus = 'TimedOut' OR ExecutionStatus = 'Terminated'", NextPageToken: token})
		if err != nil {
			return append(out, reconcile.Discrepancy{Kind: "harness", Detail: "list failed workflows: " + err.Error()})
		}
		for _, e := range resp.Executions {
			var session string
			if p := e.GetSearchAttributes().GetIndexedFields()["CheckoutSessionId"]; p != nil {
				_ = converter.GetDefaultDataConverter().FromPayload(p, &session)
			}
			id, runID := e.GetExecution().GetWorkflowId(), e.GetExecution().GetRunId()
			detail := fmt.Sprintf("%s ended %s", id, strings.ToLower(strings.TrimPrefix(e.GetStatus().String(), "WORKFLOW_EXECUTION_STATUS_")))
			if err := r.s.tc.GetWorkflow(ctx, id, runID).Get(ctx, nil); err != nil {
				if cause := errors.Unwrap(err); cause != nil {
					err = cause // the failure, without the execution's IDs
				}
				why := err.Error()
				if len(why) > 240 {
					why = why[:240] + "…"
				}
				detail += ": " + why
			}
			out = append(out, reconcile.Discrepancy{Kind: "workflow", SessionID: session, Detail: detail})
		}
		if token = resp.NextPageToken; len(token) == 0 {
			return out
		}
	}
}

func hasSession(rec *reconcile.Records, id string) bool {
	for _, s := range rec.Sessions {
		if s.ID == id {
			return true
		}
	}
	return false
}

// dropped counts the reorged transactions that never made it back.
func (r *run) dropped(ctx context.Context) int {
	n := 0
	for _, rg := range r.faults.reorgs {
		for _, h := range rg.Abandoned {
			if _, err := r.s.chain.Client().TransactionReceipt(ctx, h); err != nil {
				n++
			}
		}
	}
	return n
}

// settle waits until the engine has finished with the run's payments:
// every short session past its expiry and decided (not open or processing
// with nothing left to confirm), every transaction final, chainwatch at
// the head, and nothing recorded for a few seconds. It gives
// up when nothing has changed for Stall (something is stuck), or after
// Settle.
func (r *run) settle(ctx context.Context) string {
	var lastExpiry time.Time
	r.mu.Lock()
	for _, s := range r.sessions {
		if s.Short && s.ExpiresAt.After(lastExpiry) {
			lastExpiry = s.ExpiresAt
		}
	}
	r.mu.Unlock()
	lastExpiry = lastExpiry.Add(r.o.Margin)
	deadline := time.Now().Add(r.o.Settle)
	var lastMark int64 = -1
	lastChange := time.Now()
	quiet := 3*r.o.BlockInterval + 2*time.Second
	for {
		var open, undecided, mark int64
		err := r.s.db.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM transactions WHERE project_id = $1 AND status IN ('pending', 'confirmed'))
				+ (SELECT count(*) FROM refunds WHERE project_id = $1 AND status = 'confirmed')
				+ (SELECT count(*) FROM payouts WHERE project_id = $1 AND status = 'confirmed'),
			(SELECT count(*) FROM checkout_sessions WHERE project_id = $1 AND status IN ('open', 'processing')
				AND expires_at < $2),
			(SELECT count(*) FROM events WHERE project_id = $1) + (SELECT count(*) FROM transactions WHERE project_id = $1)`,
			r.s.projectID, lastExpiry).Scan(&open, &undecided, &mark)
		if err != nil {
			return "could not read the records: " + err.Error()
		}
		if mark != lastMark {
			lastMark, lastChange = mark, time.Now()
		}
		open += r.minedUnfollowedRefunds(ctx)
		head, scanned, known, _ := r.s.scanProgress(ctx)
		caughtUp := (!known || scanned+2 >= head) && r.s.bitcoinCaughtUp(ctx)
		now := time.Now()
		past := now.After(lastExpiry)
		switch {
		case past && open == 0 && undecided == 0 && caughtUp && now.Sub(lastChange) >= quiet:
			return "settled"
		case past && now.Sub(lastChange) >= r.o.Stall:
			return fmt.Sprintf("stalled: nothing recorded for %s, %d transactions not final", r.o.Stall, open)
		case now.After(deadline):
			return fmt.Sprintf("gave up after %s, %d transactions not final", r.o.Settle, open)
		}
		if err := sleep(ctx, time.Second); err != nil {
			return "canceled"
		}
	}
}
