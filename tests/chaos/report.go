package chaos

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/paymentsd/paymentsd/tests/chaos/reconcile"
)

// faultsMet tells, for each session, the faults its payments met: a node
// outage or a dead worker while a payment was in flight or in the minute
// after (the engine catching up), or while the session expired; a reorg
// that replaced its payment's block.
func (rep *Report) faultsMet() map[string][]string {
	o := rep.Options
	inFlight := time.Duration(o.Confirmations)*o.BlockInterval + 10*time.Second
	const catchUp = time.Minute
	abandoned := map[common.Hash]bool{}
	for _, rg := range rep.Faults.reorgs {
		for _, h := range rg.Abandoned {
			abandoned[h] = true
		}
	}
	met := map[string]map[string]bool{}
	tag := func(id, fault string) {
		if met[id] == nil {
			met[id] = map[string]bool{}
		}
		met[id][fault] = true
	}
	// The faults that touch each chain: the EVM node's outages, the
	// Bitcoin node's restarts, the worker's kills both.
	evmWindows := map[string][]window{FaultOutage: rep.Faults.outages, FaultKill: rep.Faults.workerDown}
	btcWindows := map[string][]window{FaultBTCRestart: rep.Faults.btcDown, FaultKill: rep.Faults.workerDown}
	// The engine's infrastructure stands behind both chains.
	for fault, ws := range map[string][]window{FaultTemporalRestart: rep.Faults.temporalDown,
		FaultPostgresRestart: rep.Faults.postgresDown, FaultWorkerCut: rep.Faults.workerCut} {
		evmWindows[fault], btcWindows[fault] = ws, ws
	}
	sent := func(at time.Time, sessions []*session, windows map[string][]window, inFlight time.Duration) {
		for fault, ws := range windows {
			for _, w := range ws {
				if (window{w.From.Add(-inFlight), w.To.Add(catchUp)}).contains(at) {
					for _, s := range sessions {
						tag(s.ID, fault)
					}
				}
			}
		}
	}
	for _, tx := range rep.Sent {
		sent(tx.At, tx.Sessions, evmWindows, inFlight)
		if abandoned[tx.Hash] {
			for _, s := range tx.Sessions {
				tag(s.ID, FaultReorg)
			}
		}
	}
	btcInFlight := time.Duration(o.BitcoinFinality+1)*o.BitcoinInterval + 10*time.Second
	btcAbandoned := map[string]bool{}
	for _, rg := range rep.Faults.btcReorgs {
		for _, id := range rg.Abandoned {
			btcAbandoned[id] = true
		}
	}
	for _, tx := range rep.SentBTC {
		sent(tx.At, tx.Sessions, btcWindows, btcInFlight)
		if btcAbandoned[tx.Tx.TxHash().String()] {
			for _, s := range tx.Sessions {
				tag(s.ID, FaultBTCReorg)
			}
		}
	}
	for id, s := range rep.Sessions {
		if !s.Short {
			continue
		}
		windows := evmWindows
		if _, ok := s.Options[assetBTC]; ok {
			windows = btcWindows
		}
		for fault, ws := range windows {
			for _, w := range ws {
				if (window{w.From, w.To.Add(catchUp)}).contains(s.ExpiresAt) {
					tag(id, fault)
				}
			}
		}
	}
	out := map[string][]string{}
	for id, faults := range met {
		out[id] = slices.Sorted(maps.Keys(faults))
	}
	return out
}

// All returns every discrepancy: the reconciler's and the harness's.
func (rep *Report) All() []reconcile.Discrepancy {
	var all []reconcile.Discrepancy
	if rep.Result != nil {
		all = append(all, rep.Result.Discrepancies...)
	}
	return append(all, rep.Problems...)
}

// Print writes the report: counts, then every discrepancy.
func (rep *Report) Print(w io.Writer) {
	o := rep.Options
	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	p("")
	p("reconciliation run: seed %d, %d scenarios", o.Seed, o.N)
	p("  classes: %s", strings.Join(o.Classes, ", "))
	p("  faults:  %s", strings.Join(append([]string{}, o.Faults...), ", "))
	stackFor := rep.Total - rep.PayPhase - rep.SettleFor - rep.ReconcileFor
	p("duration: %s (start-up %s, payments %s, settle %s: %s, reconcile %s)", rep.Total.Round(time.Second),
		stackFor.Round(time.Second), rep.PayPhase.Round(time.Second), rep.SettleFor.Round(time.Second), rep.Settled,
		rep.ReconcileFor.Round(time.Second))

	submits := []string{}
	for _, k := range slices.Sorted(maps.Keys(rep.Submits)) {
		submits = append(submits, fmt.Sprintf("%s %d", k, rep.Submits[k]))
	}
	p("payments: %d scenarios, %d sessions, %d transactions sent on the dev chain; hashes posted: %s", len(rep.Scenarios), len(rep.Sessions),
		len(rep.Sent), orNone(strings.Join(submits, ", ")))
	if rep.Chain != nil && rep.Result != nil {
		p("chain: blocks %d..%d read, %d transfers to deposit addresses (%d by internal calls); chain clock %s ahead",
			rep.Chain.From, rep.Chain.Head, rep.Result.Transfers, rep.Result.Internal, rep.Drift)
		p("money out: %d refunds recorded, %d paid on the canonical chain%s; %d payouts recorded, %d paid on the canonical chain",
			rep.Result.Refunds, rep.Result.RefundsPaid, refundWaits(rep.RefundWaits), rep.Result.Payouts, rep.Result.PayoutsPaid)
		p("money out on the chain: %d transfers out of the project's %d treasuries (each must pay one refund or payout)", rep.Result.Outgoing, len(rep.Chain.Treasuries))
	}
	if m := rep.MoneyOut; m != nil {
		p("money-out faults: %d made-up hashes reported by a second project (%d taken); %d paid and never reported; %d held and sped up; "+
			"%d held until stale (%d then canceled, %d replaced), %d not stale by the run's end and replaced; %d replacements left to the scan",
			m.MadeUp.Load(), m.MadeUpTaken.Load(), m.Unreported.Load(), m.SpedUp.Load(), m.Stale.Load(), m.Canceled.Load(), m.Replaced.Load(),
			m.NotStale.Load(), m.ScanFound.Load())
	}
	f := rep.Faults
	down := total(f.outages)
	depths, drops, abandoned := []string{}, 0, 0
	for _, rg := range f.reorgs {
		depths = append(depths, fmt.Sprint(rg.Depth))
		if rg.Drop {
			drops++
		}
		abandoned += len(rg.Abandoned)
	}
	p("faults: %d RPC errors and %d held requests of %d requests; %d node outages (%s down); %d reorgs (depths %s; %d dropping; %d transactions replaced, %d never mined again); %d worker kills, %d restarts after the worker exited by itself",
		rep.Proxy.Errors, rep.Proxy.Timeouts, rep.Proxy.Requests, len(f.outages), down.Round(time.Second), len(f.reorgs),
		orNone(strings.Join(depths, ",")), drops, abandoned, rep.Dropped, rep.Worker.Kills, rep.Worker.Crashes)
	if rep.Options.bitcoin() {
		replaced, doubles := 0, 0
		for _, t := range rep.SentBTC {
			switch {
			case t.ReplacedBy != "" && t.DoubleSpend:
				doubles++
			case t.ReplacedBy != "":
				replaced++
			}
		}
		depths, back, dropped := []string{}, 0, 0
		for _, rg := range f.btcReorgs {
			depths = append(depths, fmt.Sprint(rg.Depth))
			back += len(rg.Abandoned)
			dropped += len(rg.Dropped)
		}
		if rep.Chain != nil && rep.Chain.Bitcoin != nil && rep.Result != nil {
			p("bitcoin: blocks %d..%d read, %d outputs to deposit addresses; %d transactions sent (%d replaced by fee, %d double-spent); chain clock %s ahead",
				rep.Chain.Bitcoin.From, rep.Chain.Bitcoin.Head, rep.Result.BitcoinOutputs, len(rep.SentBTC), replaced, doubles, rep.BitcoinDrift)
			p("bitcoin payments recorded: %d, %d of them seen in the mempool before a block, %d failed (replaced or double-spent)",
				rep.BitcoinPayments, rep.FromMempool, rep.BitcoinFailed)
		}
		var synced []string
		for _, d := range f.btcSync {
			synced = append(synced, d.Round(100*time.Millisecond).String())
		}
		p("bitcoin faults: %d reorgs (depths %s; %d transactions back to the mempool, %d of them double-spent there); %d restarts of the merchant's node (%s down, the chain taken again from the network in %s)",
			len(f.btcReorgs), orNone(strings.Join(depths, ",")), back, dropped, len(f.btcDown), total(f.btcDown).Round(time.Second),
			orNone(strings.Join(synced, ", ")))
	}
	if o.has(FaultTemporalRestart) || o.has(FaultPostgresRestart) || o.has(FaultWorkerCut) {
		p("infrastructure faults: %d Temporal server restarts (%s down), %d PostgreSQL restarts (%s down), %d cuts of the worker from Temporal (%s cut); %d API requests retried (a refused connection, a 502/503/504, a 409 still being processed)",
			len(f.temporalDown), total(f.temporalDown).Round(100*time.Millisecond), len(f.postgresDown),
			total(f.postgresDown).Round(100*time.Millisecond), len(f.workerCut), total(f.workerCut).Round(time.Second), rep.APIRetries)
	}
	if len(f.timeline) > 0 {
		p("fault timeline (from the payment phase's start at %s):", rep.PhaseStart.Format("15:04:05"))
		for _, e := range f.timeline {
			lasted := "instant"
			if e.For > 0 {
				lasted = e.For.Round(100 * time.Millisecond).String()
			}
			p("  +%-8s %s  %-17s %-8s %s", clock(e.At.Sub(rep.PhaseStart)), e.At.Format("15:04:05.0"), e.Fault, lasted, e.Detail)
			if e.InFlight != "" {
				p("  %-30s in flight: %s", "", e.InFlight)
			}
		}
	}
	if len(f.resumed) > 0 {
		var took []string
		for _, d := range f.resumed {
			if d < 0 {
				took = append(took, "not within 2m")
			} else {
				took = append(took, d.Round(100*time.Millisecond).String())
			}
		}
		p("after each worker kill, the new worker followed the chain again after: %s", strings.Join(took, ", "))
	}
	if rep.Result != nil {
		p("sessions by expected outcome: %s", counts(rep.Result.Expected))
		p("sessions by engine's outcome: %s", counts(rep.Result.Actual))
		if rep.Result.Ambiguous > 0 {
			p("  (%d sessions had a payment within %s of expiry; both outcomes accepted)", rep.Result.Ambiguous, o.Margin)
		}
	}

	all := rep.All()
	classOf := map[string]string{}
	for id, s := range rep.Sessions {
		classOf[id] = s.Class
	}
	met := rep.faultsMet()
	type tally struct{ scenarios, sessions, wrong, discrepancies int }
	byClass := map[string]*tally{}
	byFault := map[string]*tally{}
	for _, c := range o.Classes {
		byClass[c] = &tally{}
	}
	for _, sc := range rep.Scenarios {
		byClass[sc.Class].scenarios++
	}
	wrongSessions := map[string]bool{}
	for _, d := range all {
		if d.SessionID != "" {
			wrongSessions[d.SessionID] = true
		}
	}
	for id, s := range rep.Sessions {
		byClass[s.Class].sessions++
		faults := met[id]
		if len(faults) == 0 {
			faults = []string{"none"}
		}
		for _, fault := range faults {
			if byFault[fault] == nil {
				byFault[fault] = &tally{}
			}
			byFault[fault].sessions++
			if wrongSessions[id] {
				byFault[fault].wrong++
			}
		}
		if wrongSessions[id] {
			byClass[s.Class].wrong++
		}
	}
	for _, d := range all {
		if c, ok := byClass[classOf[d.SessionID]]; ok {
			c.discrepancies++
		}
		for _, fault := range met[d.SessionID] {
			byFault[fault].discrepancies++
		}
		if d.SessionID != "" && len(met[d.SessionID]) == 0 && byFault["none"] != nil {
			byFault["none"].discrepancies++
		}
	}
	p("")
	p("%-18s %9s %9s %15s %14s", "class", "scenarios", "sessions", "sessions wrong", "discrepancies")
	for _, c := range o.Classes {
		t := byClass[c]
		p("%-18s %9d %9d %15d %14d", c, t.scenarios, t.sessions, t.wrong, t.discrepancies)
	}
	p("")
	p("%-18s %9s %15s %14s", "fault met", "sessions", "sessions wrong", "discrepancies")
	for _, fault := range slices.Sorted(maps.Keys(byFault)) {
		t := byFault[fault]
		p("%-18s %9d %15d %14d", fault, t.sessions, t.wrong, t.discrepancies)
	}
	p("")
	if len(all) == 0 {
		p("discrepancies: 0")
		return
	}
	kinds := map[string]int{}
	for _, d := range all {
		kinds[d.Kind]++
	}
	p("discrepancies: %d (%s)", len(all), counts(kinds))
	for _, d := range all {
		class := classOf[d.SessionID]
		if class == "" {
			class = "-"
		}
		tags := ""
		if f := met[d.SessionID]; len(f) > 0 {
			tags = " [" + strings.Join(f, ",") + "]"
		}
		p("  %-17s %s%s", class, d, tags)
	}
}

func counts(m map[string]int) string {
	parts := []string{}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return orNone(strings.Join(parts, ", "))
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// refundWaits says how long the refund scenarios waited after paying: for
// the engine to record the payment, and for it to be final (a refund
// possible), as median and longest.
func refundWaits(waits [][2]time.Duration) string {
	if len(waits) == 0 {
		return ""
	}
	median := func(i int) (time.Duration, time.Duration) {
		d := make([]time.Duration, len(waits))
		for k, w := range waits {
			d[k] = w[i]
		}
		slices.Sort(d)
		return d[len(d)/2].Round(time.Second), d[len(d)-1].Round(time.Second)
	}
	rm, rx := median(0)
	fm, fx := median(1)
	return fmt.Sprintf("; after its payment a refund's session had it recorded in %s (longest %s) and final in %s (longest %s)", rm, rx, fm, fx)
}

// clock writes an offset as minutes and seconds: 4:07.
func clock(d time.Duration) string {
	d = d.Round(time.Second)
	return fmt.Sprintf("%d:%02d", int(d.Minutes()), int(d.Seconds())%60)
}
