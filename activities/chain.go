package activities

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"golang.org/x/sync/errgroup"

	"github.com/paymentsd/paymentsd/activities/sessionstart"
	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/internal/observability"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/workflows"
)

func (a *Activities) chain(key string) (*chainwatch.Chain, error) {
	c, ok := a.Chains[key]
	if !ok {
		return nil, temporal.NewNonRetryableApplicationError("unknown network "+key, "invalid", nil)
	}
	return c, nil
}

// ScanNetwork polls a network for payments to watched deposit addresses:
// the blocks after the cursor, or a wait at the head for the next one, as
// the network's family reads them (chainFamily.scan), then hands them to
// their sessions (handOver). It does not move the cursor itself:
// chainwatch does, with the result, so a retried scan rescans the same
// range.
func (a *Activities) ScanNetwork(ctx context.Context, in workflows.ScanInput) (workflows.ScanOutput, error) {
	c, err := a.chain(in.Network)
	if err != nil {
		return workflows.ScanOutput{}, err
	}
	defer heartbeat(ctx, 2*time.Second)()
	cursor := chainwatch.Cursor{Number: in.Cursor.Number, Hash: common.HexToHash(in.Cursor.Hash), Time: in.Cursor.Time}
	if in.Cursor.Time > 0 {
		// Chainwatch scans again only once it has handed the
		// previous scan's transfers to their sessions.
		if err := a.Store.Chains().RecordScanProgress(ctx, in.Network, in.Cursor.Number, time.Unix(int64(in.Cursor.Time), 0),
			time.Now()); err != nil {
			return workflows.ScanOutput{Cursor: in.Cursor}, err
		}
	}
	f, err := a.family(c)
	if err != nil {
		return workflows.ScanOutput{}, err
	}
	out, handed, err := f.scan(ctx, a, c, in.Network, cursor)
	if err != nil {
		return out, err
	}
	if err := a.handOver(ctx, in, &out, handed.untraced); err != nil {
		return out, err
	}
	if handed.after != nil {
		handed.after()
	}
	return out, nil
}

// attachTxTransfers gives each transfer whose transaction pays its session
// alone (PaysSessionAlone, marked) every transfer of that transaction the scan found
// (SessionTransfer.TxTransfers): the session's first look then reads the
// receipt, not the transaction and its trace again. Not for a transaction
// of a block the scan could not trace.
func attachTxTransfers(ts []workflows.SessionTransfer, untraced map[string]bool) {
	byTx := map[string][]payment.Transfer{}
	for _, p := range ts {
		if p.PaysSessionAlone && !untraced[p.TxHash] {
			byTx[p.TxHash] = append(byTx[p.TxHash], payment.Transfer{LogIndex: p.LogIndex, From: p.From, To: p.To,
				AssetID: p.AssetID, AmountBaseUnits: p.AmountBaseUnits})
		}
	}
	for i := range ts {
		ts[i].TxTransfers = byTx[ts[i].TxHash]
	}
}

// handOver ends a scan: it marks the transfers that pay one session alone
// (with their transaction's transfers, for an EVM scan, which names the
// transactions it could not trace in untraced), finds the sessions due,
// and, when asked, hands the transfers and the progress to the sessions
// itself (signalSessions).
func (a *Activities) handOver(ctx context.Context, in workflows.ScanInput, out *workflows.ScanOutput, untraced map[string]bool) error {
	workflows.MarkPaysSessionAlone(out.Transfers)
	if untraced != nil {
		attachTxTransfers(out.Transfers, untraced)
	}
	var err error
	if out.Due, out.DueUntil, err = a.due(ctx, in.Network, in.SessionsToldUntil, out.Cursor.Time); err != nil {
		return classify(err)
	}
	if !in.SignalSessions {
		return nil
	}
	if a.Temporal == nil {
		// Chainwatch gives what is left to the transactions' workflows:
		// a session whose start is pending would miss its transfer.
		return temporal.NewNonRetryableApplicationError("the scan hands its transfers to their sessions with a Temporal client, and has none",
			"invalid", nil)
	}
	return a.signalSessions(ctx, in.Network, out)
}

// signalsAtOnce bounds the signals one scan has in flight.
const signalsAtOnce = 16

// signalSessions hands a scan's transfers to their sessions' workflows
// with the client. A session whose workflow's start is still pending (it
// was recorded a moment ago, package sessionstart) gets its transfer by a
// signal-with-start that carries the recorded start, so the same call
// starts the workflow and hands it the transfer; the pending start is then
// done. Every other session's workflow gets a plain signal. Once every
// transfer is handed over, it tells the due sessions the scan's progress.
//
// It leaves in out what cannot be handed over: a transfer that is no
// session's, or a session's whose workflow has ended (the plain signal
// finds no running workflow, or the start is refused as a duplicate),
// and, unless all were handed over, the sessions still to tell: chainwatch
// gives those transfers to their transactions' workflows. Any other
// failure fails the scan, which is retried: a session ignores a transfer
// it has heard already, and the progress only grows.
func (a *Activities) signalSessions(ctx context.Context, network string, out *workflows.ScanOutput) error {
	var ids []string
	for _, p := range out.Transfers {
		if p.SessionID != "" && !slices.Contains(ids, p.SessionID) {
			ids = append(ids, p.SessionID)
		}
	}
	var starts map[string]store.SessionStart
	if len(ids) > 0 {
		pending, err := a.Store.Checkout().PendingSessionStarts(ctx, ids)
		if err != nil {
			return err
		}
		starts = make(map[string]store.SessionStart, len(pending))
		for _, st := range pending {
			starts[st.SessionID] = st
		}
	}
	// undelivered marks the transfers no running workflow takes.
	undelivered := make([]bool, len(out.Transfers))
	var mu sync.Mutex
	var started []string
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(signalsAtOnce)
	for i, p := range out.Transfers {
		if p.SessionID == "" {
			undelivered[i] = true
			continue
		}
		g.Go(func() error {
			var err error
			st, pending := starts[p.SessionID]
			if pending {
				err = sessionstart.SignalWithStart(gctx, a.Temporal, st, workflows.SignalTransfer, p)
			} else {
				err = a.Temporal.SignalWorkflow(gctx, workflows.CheckoutSessionWorkflowID(p.SessionID), "", workflows.SignalTransfer, p)
			}
			ended := temporal.IsWorkflowExecutionAlreadyStartedError(err) || isNotFound(err)
			if err != nil && !ended {
				return fmt.Errorf("hand a transfer to session %s: %w", p.SessionID, err)
			}
			undelivered[i] = ended
			if pending {
				// Started now, or ran and ended: no start is due.
				mu.Lock()
				if !slices.Contains(started, p.SessionID) {
					started = append(started, p.SessionID)
				}
				mu.Unlock()
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if err := a.Store.Checkout().SessionsStarted(ctx, started); err != nil {
		// The sweep would start them again, finding them started: no harm.
		slog.WarnContext(ctx, "pending starts of sessions started by their transfers not deleted", "sessions", started, "err", err)
	}
	var rest []workflows.SessionTransfer
	for i, p := range out.Transfers {
		if undelivered[i] {
			rest = append(rest, p)
		}
	}
	if out.Transfers = rest; len(rest) > 0 {
		return nil
	}
	word := workflows.ScanProgress{Network: network, BlockTime: out.Cursor.Time}
	tell := &errgroup.Group{}
	tell.SetLimit(signalsAtOnce)
	for _, id := range out.Due {
		tell.Go(func() error {
			// A session whose workflow has ended or not started yet
			// does not hear it, as from chainwatch: it reads the
			// progress for itself if it waits.
			_ = a.Temporal.SignalWorkflow(ctx, workflows.CheckoutSessionWorkflowID(id), "", workflows.SignalScanned, word)
			return ctx.Err()
		})
	}
	if err := tell.Wait(); err != nil {
		return err
	}
	out.Due = nil
	return nil
}

// isNotFound tells a signal that found no running workflow: the session's
// workflow has ended (or was never started).
func isNotFound(err error) bool {
	var nf *serviceerror.NotFound
	return errors.As(err, &nf)
}

// maxDue bounds how many sessions of each kind (expiry, late-payment
// window) one scan tells that it passed their time: the rest are told by
// the next scans, or read the scan's progress themselves (a session waits
// for the word a minute at most before it looks).
const maxDue = 200

// due returns the sessions on network whose expiry or late-payment window
// ends after told and no later than the scan's new cursor (block time
// cursor): chainwatch tells them once it has handed over the transfers the
// scan found. A first scan (told 0) tells none: it starts where the
// sessions read the progress for themselves.
func (a *Activities) due(ctx context.Context, network string, told, cursor uint64) ([]string, uint64, error) {
	if cursor == 0 || told == 0 || told >= cursor {
		return nil, max(told, cursor), nil
	}
	ids, until, err := a.Store.Chains().SessionsDue(ctx, network, time.Unix(int64(told), 0), time.Unix(int64(cursor), 0), maxDue)
	// More than maxDue sessions of one second: the rest read for
	// themselves, and the next scan goes on from the next second.
	return ids, max(uint64(until.Unix()), told+1), err
}

// ScanRange scans a range of blocks for transfers to deposit addresses,
// for an operator's rescan: the network's chainwatch and its cursor are left
// as they are.
func (a *Activities) ScanRange(ctx context.Context, in workflows.ScanRangeInput) (workflows.ScanOutput, error) {
	c, err := a.chain(in.Network)
	if err != nil {
		return workflows.ScanOutput{}, err
	}
	f, err := a.family(c)
	if err != nil {
		return workflows.ScanOutput{}, err
	}
	if !c.Family().Capabilities().Rescan {
		return workflows.ScanOutput{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("a %s network is not rescanned: its scan keeps every payment it saw", c.Family().Kind()), "invalid", nil)
	}
	defer heartbeat(ctx, 2*time.Second)()
	head, err := c.Family().Head(ctx)
	if err != nil {
		return workflows.ScanOutput{}, err
	}
	if in.From > in.To || in.To > head {
		return workflows.ScanOutput{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("blocks %d to %d are not on the chain (its head is %d)", in.From, in.To, head), "invalid", nil)
	}
	transfers, err := f.rescan(ctx, a, c, in.From, in.To)
	if err != nil {
		return workflows.ScanOutput{}, err
	}
	workflows.MarkPaysSessionAlone(transfers)
	for i := range transfers {
		transfers[i].Source = workflows.SourceRescan
	}
	return workflows.ScanOutput{Transfers: transfers}, nil
}

// transfers are the transfers of the chain's assets, for their sessions: a
// transfer to a shared recipient goes to the session holding its exact
// amount (payment.Recipients), or to none (SessionID ""; its
// transaction's workflow records it as unmatched).
func (d *depositSessions) transfers(ctx context.Context, c *chainwatch.Chain, transfers []chainwatch.Transfer) ([]workflows.SessionTransfer, error) {
	var out []workflows.SessionTransfer
	var shared []int // the payments to shared recipients, by index in out
	for _, t := range transfers {
		asset, ok := c.AssetOf(t)
		if !ok {
			continue
		}
		session := d.byAddress[chainwatch.Normalize(t.To)]
		if session.SessionID == "" && d.shared[chainwatch.Normalize(t.To)] {
			shared = append(shared, len(out))
		}
		out = append(out, workflows.SessionTransfer{
			SessionID: session.SessionID, ProjectID: session.ProjectID, IsLive: session.IsLive, Network: c.Network.Key,
			ChainID: c.Network.ChainID, TxHash: hashString(t.TxHash), LogIndex: t.LogIndex, From: t.From.Hex(),
			To: t.To.Hex(), AssetID: asset.ID, AmountBaseUnits: t.Amount.String(), BlockNumber: t.BlockNumber,
			BlockHash: t.BlockHash.Hex(), BlockTime: t.BlockTime, Source: "chainwatch",
		})
	}
	if len(shared) == 0 {
		return out, nil
	}
	sent := make([]payment.Transfer, len(shared))
	for i, k := range shared {
		sent[i] = payment.Transfer{To: out[k].To, AssetID: out[k].AssetID, AmountBaseUnits: out[k].AmountBaseUnits}
	}
	to, err := d.store.Checkout().Recipients(ctx, c.Network.Key, c.Network.IsLive, sent)
	if err != nil {
		return nil, err
	}
	for i, k := range shared {
		s, _ := to.SessionOf(sent[i], time.Unix(int64(out[k].BlockTime), 0))
		out[k].SessionID, out[k].ProjectID, out[k].IsLive = s.ID, s.ProjectID, s.IsLive
	}
	return out, nil
}

// heartbeat records an activity's heartbeat every interval until stopped:
// a worker that dies in the middle of the activity is then noticed within
// the activity's heartbeat timeout, not at its start-to-close timeout.
func heartbeat(ctx context.Context, every time.Duration) (stop func()) {
	if !activity.IsActivity(ctx) {
		return func() {}
	}
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx)
			}
		}
	}()
	// No heartbeat after the activity has returned.
	return func() { close(done); <-stopped }
}

// depositSessions are the sessions whose deposit addresses a scan watches.
type depositSessions struct {
	store   *store.Store
	network chainwatch.Network
	// byAddress holds the sessions by normalized deposit address.
	byAddress map[string]store.WatchedAddress
	// shared holds the watched shared recipients, normalized.
	shared map[string]bool
}

// lookup tells which of a scan's recipients are deposit addresses or
// shared recipients, for the poller to call once per scanned range. A
// session counts only transfers on networks of its own environment: a deposit address is the same on
// every EVM chain, so testnet coins sent to a live session's address (or
// the other way round) are seen, logged and ignored.
func (d *depositSessions) lookup(ctx context.Context, recipients []common.Address) (map[common.Address]bool, error) {
	addresses := make([]string, len(recipients))
	for i, a := range recipients {
		addresses[i] = chainwatch.Normalize(a)
	}
	found, err := d.store.Chains().WatchedRecipients(ctx, d.network.Key, addresses)
	if err != nil {
		return nil, err
	}
	d.byAddress = make(map[string]store.WatchedAddress, len(found.Deposits))
	watched := make(map[common.Address]bool, len(found.Deposits)+len(found.Shared))
	for _, w := range found.Deposits {
		if w.IsLive != d.network.IsLive {
			slog.WarnContext(ctx, "transfer to a session of the other environment ignored", "network", d.network.Key,
				"networkIsLive", d.network.IsLive, "session", w.SessionID, "address", strings.ToLower(w.Address))
			continue
		}
		d.byAddress[strings.ToLower(w.Address)] = w
		watched[common.HexToAddress(w.Address)] = true
	}
	d.shared = make(map[string]bool, len(found.Shared))
	for _, r := range found.Shared {
		d.shared[r] = true
		watched[common.HexToAddress(r)] = true
	}
	return watched, nil
}

func hashString(h common.Hash) string {
	if h == (common.Hash{}) {
		return ""
	}
	return h.Hex()
}

// CheckTransaction reads a transaction's receipt and confirmations, and
// its transfers of the network's assets.
func (a *Activities) CheckTransaction(ctx context.Context, in workflows.CheckInput) (workflows.CheckOutput, error) {
	c, err := a.chain(in.Network)
	if err != nil {
		return workflows.CheckOutput{}, err
	}
	n := c.Network
	out := workflows.CheckOutput{RequiredConfirmations: n.Confirmations, BlockTime: time.Duration(n.BlockTime),
		PendingTimeout: time.Duration(n.PendingTimeout)}
	f, err := a.family(c)
	if err != nil {
		return out, err
	}
	return f.look(ctx, a, c, in, out)
}

// SyncTransaction records what the chain says of a transaction: the
// records of its transfers to the deposit addresses of sessions of the
// network's environment, and its claims (payment.MatchTransfers).
func (a *Activities) SyncTransaction(ctx context.Context, in workflows.SyncInput) (workflows.SyncOutput, error) {
	c, err := a.chain(in.Observation.Network)
	if err != nil {
		return workflows.SyncOutput{}, err
	}
	obs := in.Observation
	var unexpected []payment.Transfer
	records, err := a.Store.Payments().SyncTransaction(ctx, obs.Network, obs.ChainID, obs.TxHash, obs.Transfers, c.Network.IsLive,
		func(rows []payment.Transaction, to payment.Recipients) []payment.TxChange {
			to.Asset = c.Asset
			var changes []payment.TxChange
			changes, unexpected = payment.MatchTransfers(rows, obs, to, func() string { return payment.NewID(payment.PrefixTx, obs.At) })
			for _, ch := range changes {
				if ch.Event == payment.EventTxReversed {
					observability.PaymentsReversed.WithLabelValues(obs.Network, "in").Inc()
				}
			}
			return changes
		}, renderTransaction)
	if err != nil {
		return workflows.SyncOutput{}, classify(err)
	}
	if in.ReportIgnored {
		for _, t := range unexpected {
			observability.TransfersUnexpected.WithLabelValues(obs.Network).Inc()
			slog.WarnContext(ctx, "transfer no session takes recorded as unexpected", "network",
				obs.Network, "txHash", obs.TxHash, "logIndex", t.LogIndex, "address", t.To, "asset", t.AssetID,
				"amountBaseUnits", t.AmountBaseUnits)
		}
	}
	return workflows.SyncOutput{Transactions: records}, nil
}

// RecordClaim records a payer's claim, unless the session has a record of
// the transaction already, and returns the session's record.
func (a *Activities) RecordClaim(ctx context.Context, in workflows.ClaimInput) (payment.Transaction, error) {
	t, err := a.Store.Payments().RecordClaim(ctx, in.Claim, renderTransaction)
	return t, classify(err)
}

// ScanBehind returns the networks whose chainwatch has not reported the
// blocks mined before a time.
func (a *Activities) ScanBehind(ctx context.Context, in workflows.ScanBehindInput) ([]string, error) {
	// A network no longer configured is not scanned any more: not waited for.
	networks := slices.DeleteFunc(slices.Clone(in.Networks), func(n string) bool { return a.Chains[n] == nil })
	behind, err := a.Store.Chains().ScanBehind(ctx, networks, in.Before)
	return behind, classify(err)
}

// MakePendingSessionStartDue tells whether a session's workflow's start is
// still pending, and makes it due now: chainwatch then waits for a sweep
// (package sessionstart) to start it before it hands the session a
// payment.
func (a *Activities) MakePendingSessionStartDue(ctx context.Context, sessionID string) (bool, error) {
	pending, err := a.Store.Checkout().HurrySessionStarts(ctx, []string{sessionID})
	return pending, classify(err)
}

// MakePendingSessionStartsDue is MakePendingSessionStartDue for several
// sessions: it tells whether any of their starts is still pending.
func (a *Activities) MakePendingSessionStartsDue(ctx context.Context, sessionIDs []string) (bool, error) {
	pending, err := a.Store.Checkout().HurrySessionStarts(ctx, sessionIDs)
	return pending, classify(err)
}
