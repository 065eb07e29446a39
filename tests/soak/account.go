package soak

import (
	"context"
	"fmt"
	"time"

	"github.com/paymentsd/paymentsd/tests/prodshape"
)

// Account is where every session the load was answered 201 for stands
// once the engine has settled.
type Account struct {
	// Opened sessions; Paid of them, Completed of those; Expired of the
	// unpaid ones.
	Opened, Paid, Completed, Expired int
	// Lost: answered 201 and not in the database. Duplicated: keys with
	// more than one session. PaymentsNotOnce: paid sessions without
	// exactly one transaction recorded.
	Lost, Duplicated, PaymentsNotOnce int
	// Unfinished: paid and not completed, unpaid and not expired, a
	// workflow start still pending or an event not delivered when the
	// wait for the engine to settle ended.
	Unfinished int
	// Events recorded for the project, all delivered unless Unfinished
	// says so; Deliveries the receiver verified (each at least once).
	Events, Deliveries int
	// Waited is how long the engine took to settle after the load.
	Waited time.Duration
}

func (a Account) String() string {
	return fmt.Sprintf("%d sessions opened: %d paid, %d of them completed; %d unpaid expired; %d lost, %d duplicated, %d payments not recorded once, %d unfinished; "+
		"%d events, all delivered unless unfinished (%d deliveries); settled %v after the load",
		a.Opened, a.Paid, a.Completed, a.Expired, a.Lost, a.Duplicated, a.PaymentsNotOnce, a.Unfinished, a.Events, a.Deliveries, a.Waited.Round(time.Second))
}

// account waits up to settle for the engine to finish what the load
// started (paid sessions completed, unpaid ones expired, every workflow
// started, every event delivered), then counts where each session stands.
func account(ctx context.Context, sh *prodshape.Shape, l *load, r *prodshape.Receiver, settle time.Duration) (Account, error) {
	start := time.Now()
	deadline := start.Add(settle)
	for {
		a, err := count(ctx, sh, l.all(), r)
		if err != nil {
			return a, err
		}
		a.Waited = time.Since(start)
		if a.Unfinished == 0 || time.Now().After(deadline) {
			return a, nil
		}
		select {
		case <-ctx.Done():
			return a, ctx.Err()
		case <-time.After(5 * time.Second):
		}
	}
}

func count(ctx context.Context, sh *prodshape.Shape, sessions []opened, r *prodshape.Receiver) (Account, error) {
	a := Account{Opened: len(sessions)}
	type row struct {
		status string
		txs    int
	}
	byID, perKey := map[string]row{}, map[string]int{}
	rows, err := sh.DB.Query(ctx, `SELECT s.id, s.status, coalesce(s.metadata->>'soakKey', ''),
		(SELECT count(*) FROM transactions t WHERE t.checkout_session_id = s.id)
		FROM checkout_sessions s WHERE s.project_id = $1`, sh.Project.Project.ID)
	if err != nil {
		return a, err
	}
	for rows.Next() {
		var id, key string
		var x row
		if err := rows.Scan(&id, &x.status, &key, &x.txs); err != nil {
			rows.Close()
			return a, err
		}
		byID[id] = x
		perKey[key]++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return a, err
	}
	for _, s := range sessions {
		x, ok := byID[s.id]
		switch {
		case !ok:
			a.Lost++
			continue
		case perKey[s.key] != 1:
			a.Duplicated++
		}
		if s.pay {
			a.Paid++
			if x.status == "completed" {
				a.Completed++
			} else {
				a.Unfinished++
			}
			if x.txs != 1 {
				a.PaymentsNotOnce++
			}
			continue
		}
		if x.status == "expired" {
			a.Expired++
		} else {
			a.Unfinished++
		}
	}
	var starts int
	if err := sh.DB.QueryRow(ctx, `SELECT count(*) FROM session_starts`).Scan(&starts); err != nil {
		return a, err
	}
	events, err := sh.EventIDs(ctx)
	if err != nil {
		return a, err
	}
	a.Events, a.Deliveries = len(events), r.Deliveries()
	a.Unfinished += starts + len(r.Missing(events))
	return a, nil
}
