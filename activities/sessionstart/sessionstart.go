// Package sessionstart opens checkout sessions without making the
// customer wait for Temporal: a session is recorded with its workflow's
// pending start in one database transaction, and the start is made right
// after, in the background. A start left behind (the process died, Temporal
// was unreachable) is made by a worker's sweep once it is due, or at once
// by the first API call that needs the session's workflow (a payer's
// submission, a cancel); a payment found on the chain is delivered with a
// signal-with-start carrying the recorded start (SignalWithStart), so it
// starts the workflow it signals. A recorded session so always gets its
// workflow, and never two: every start names the session's workflow ID.
// It sits under activities, whose scan delivers a payment with the
// signal-with-start; the worker's sweep and the service, above, use it
// from there.
package sessionstart

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"golang.org/x/sync/errgroup"

	"github.com/paymentsd/paymentsd/internal/observability"
	"github.com/paymentsd/paymentsd/payment/views"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/workflows"
)

// Grace is how long a start is left to the process that recorded it
// before a sweep makes it.
const Grace = 5 * time.Second

// startTimeout bounds one start.
const startTimeout = 10 * time.Second

// backgroundStarts is how many starts one process makes at once; more wait
// in its queue, and past the queue's room, for a sweep.
const (
	backgroundStarts = 8
	queueRoom        = 4096
)

// A background start gives way to the creations under way in its process
// for up to yieldFor after its session was recorded (well inside Grace),
// looking again every yieldPoll: a burst of customers opening sessions is
// then not slowed by the starts it causes, which follow once it ebbs.
const (
	yieldFor  = 2 * time.Second
	yieldPoll = 20 * time.Millisecond
)

// Starter records sessions and starts their workflows.
type Starter struct {
	store    *store.Store
	temporal client.Client

	mu      sync.Mutex
	queue   []pending
	running int
	// opening counts the creations under way (Opening).
	opening atomic.Int64
}

type pending struct {
	start store.SessionStart
	input workflows.CheckoutSessionInput
}

// New returns a starter over the store and a Temporal client.
func New(st *store.Store, c client.Client) *Starter {
	return &Starter{store: st, temporal: c}
}

// Opening marks a session's creation under way, from its first step, and
// returns the call that marks it done: background starts give way to it.
func (s *Starter) Opening() (done func()) {
	s.opening.Add(1)
	return func() { s.opening.Add(-1) }
}

// Open records a new session, its created event and its workflow's
// pending start, then starts the workflow in the background. Once it
// returns the session is readable, and its workflow will run.
func (s *Starter) Open(ctx context.Context, in workflows.CheckoutSessionInput, planTitle string) error {
	raw, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("encode workflow input: %w", err)
	}
	st := store.SessionStart{SessionID: in.Session.ID, PlanTitle: planTitle, Input: raw, CreatedAt: in.Session.CreatedAt}
	if err := s.store.Checkout().InsertSessionToStart(ctx, in.Session, views.SessionEvent, st, Grace); err != nil {
		return fmt.Errorf("record session: %w", err)
	}
	s.enqueue(pending{st, in})
	return nil
}

// enqueue hands a start to the background starters; with no room left it
// is the sweep's.
func (s *Starter) enqueue(p pending) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) >= queueRoom {
		return
	}
	s.queue = append(s.queue, p)
	if s.running < backgroundStarts {
		s.running++
		go s.drain()
	}
}

func (s *Starter) drain() {
	for {
		s.mu.Lock()
		if len(s.queue) == 0 {
			s.running--
			s.mu.Unlock()
			return
		}
		p := s.queue[0]
		s.queue[0] = pending{}
		s.queue = s.queue[1:]
		s.mu.Unlock()
		until := time.Now().Add(yieldFor)
		if recorded := p.start.CreatedAt.Add(yieldFor); recorded.Before(until) {
			until = recorded
		}
		for s.opening.Load() > 0 && time.Now().Before(until) {
			time.Sleep(yieldPoll)
		}
		ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
		if err := s.start(ctx, p); err != nil {
			slog.Warn("session workflow not started; a sweep will start it", "session", p.start.SessionID, "err", err)
		}
		cancel()
	}
}

// start starts a session's workflow, unless it runs or ran, and deletes
// its pending start.
func (s *Starter) start(ctx context.Context, p pending) error {
	started := time.Now()
	_, err := s.temporal.ExecuteWorkflow(ctx, workflows.CheckoutSessionStartOptions(p.input.Session, p.start.PlanTitle),
		workflows.CheckoutSession, p.input)
	if err != nil && !temporal.IsWorkflowExecutionAlreadyStartedError(err) {
		return fmt.Errorf("start session workflow: %w", err)
	}
	observability.SessionStartDelay.Observe(started.Sub(p.start.CreatedAt).Seconds())
	return s.store.Checkout().SessionStarted(ctx, p.start.SessionID)
}

func decode(st store.SessionStart) (pending, error) {
	p := pending{start: st}
	if err := json.Unmarshal(st.Input, &p.input); err != nil {
		return p, fmt.Errorf("decode workflow input of %s: %w", st.SessionID, err)
	}
	return p, nil
}

// SignalWithStart sends a session's workflow a signal, starting the
// workflow first from its recorded pending start if it has not started
// yet: the start the sweep would make, with the same options, except that
// a session whose workflow has ended is never started again
// (WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE; the error is then
// temporal.IsWorkflowExecutionAlreadyStartedError) and a running one is
// signalled (WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING). The caller deletes
// the pending start once it succeeded (store.SessionsStarted); a sweep's
// start racing it names the same workflow ID and makes no second one.
func SignalWithStart(ctx context.Context, c client.Client, st store.SessionStart, signal string, arg any) error {
	p, err := decode(st)
	if err != nil {
		return err
	}
	opts := workflows.CheckoutSessionStartOptions(p.input.Session, st.PlanTitle)
	opts.WorkflowIDReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE
	opts.WorkflowIDConflictPolicy = enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING
	started := time.Now()
	if _, err := c.SignalWithStartWorkflow(ctx, opts.ID, signal, arg, opts, workflows.CheckoutSession, p.input); err != nil {
		return err
	}
	observability.SessionStartDelay.Observe(started.Sub(st.CreatedAt).Seconds())
	return nil
}

// Ensure starts now the workflows of these sessions whose starts are still
// pending, as many at once as the background starts. A session without a
// pending start is left as it is: its workflow runs or ran.
func (s *Starter) Ensure(ctx context.Context, sessionIDs ...string) error {
	if len(sessionIDs) == 0 {
		return nil
	}
	starts, err := s.store.Checkout().PendingSessionStarts(ctx, sessionIDs)
	if err != nil {
		return fmt.Errorf("load pending starts: %w", err)
	}
	errs := make([]error, len(starts))
	var g errgroup.Group
	g.SetLimit(backgroundStarts)
	for i, st := range starts {
		g.Go(func() error {
			p, err := decode(st)
			if err == nil {
				err = s.start(ctx, p)
			}
			errs[i] = err
			return nil
		})
	}
	_ = g.Wait()
	return errors.Join(errs...)
}

// Sweep starts the workflows of up to limit due pending starts and returns
// how many it started. It stops at the first start that fails (Temporal is
// unreachable, most likely) and gives the rest back, due again shortly.
func (s *Starter) Sweep(ctx context.Context, limit int) (int, error) {
	starts, err := s.store.Checkout().ClaimSessionStarts(ctx, limit, time.Minute)
	if err != nil {
		return 0, fmt.Errorf("claim pending starts: %w", err)
	}
	n := 0
	var errs []error
	for i, st := range starts {
		p, err := decode(st)
		if err != nil {
			// Not a start that could succeed later: it waits for an
			// operator, an hour at a time, and the others go on.
			errs = append(errs, err, s.store.Checkout().DelaySessionStarts(ctx, []string{st.SessionID}, time.Hour))
			continue
		}
		one, cancel := context.WithTimeout(ctx, startTimeout)
		err = s.start(one, p)
		cancel()
		if err != nil {
			rest := make([]string, 0, len(starts)-i)
			for _, st := range starts[i:] {
				rest = append(rest, st.SessionID)
			}
			errs = append(errs, err, s.store.Checkout().DelaySessionStarts(context.WithoutCancel(ctx), rest, Grace))
			break
		}
		n++
	}
	return n, errors.Join(errs...)
}

// RunSweeper sweeps every interval until ctx ends, and at once again when
// a sweep was full.
func (s *Starter) RunSweeper(ctx context.Context, every time.Duration) {
	const batch = 100
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		n, err := s.Sweep(ctx, batch)
		if err != nil && ctx.Err() == nil {
			slog.Warn("session start sweep", "started", n, "err", err)
		} else if n > 0 {
			slog.Info("session workflows started by a sweep", "started", n)
		}
		if n == batch {
			continue
		}
		if pending, oldest, err := s.store.Checkout().CountSessionStarts(ctx); err == nil {
			observability.SessionStartsPending.Set(float64(pending))
			observability.SessionStartOldest.Set(oldest.Seconds())
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
