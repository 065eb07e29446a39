package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paymentsd/paymentsd/internal/testkit/testwait"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/store/storetest"
)

// insertEventTx records an event in tx, as the engine's writers do: in
// the database transaction of the change it describes.
func insertEventTx(ctx context.Context, tx pgx.Tx, p payment.Principal, id string, at time.Time) error {
	_, err := tx.Exec(ctx, `INSERT INTO events (id, project_id, is_live, type, object_id, version, data, created_at)
		VALUES ($1,$2,$3,'checkout.session.updated',$1,1,'{}',$4)`, id, p.ProjectID, p.IsLive, at)
	return err
}

// A consumer paging the feed while many writers record events at once,
// every one with the same created_at, in transactions that commit in any
// order (some after others that started later, some rolled back), gets
// every committed event exactly once and no rolled-back one.
func TestFeedEventsNeverSkipsOrRepeats(t *testing.T) {
	ctx := context.Background()
	url := storetest.NewDB(t)
	s, err := store.Open(ctx, storetest.WithPoolConns(url, 16)) // every writer and the reader at once
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	p := newProject(t, s)
	at := time.Now().UTC().Truncate(time.Second) // one timestamp for all: no tie-break by time
	since := at

	const writers, perWriter = 8, 40
	var committed sync.Map
	var n atomic.Int64
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				tx, err := s.Pool().Begin(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				ids := []string{}
				for range 1 + rand.IntN(3) {
					id := fmt.Sprintf("evt_w%02d_%03d_%d", w, i, n.Add(1))
					if err := insertEventTx(ctx, tx, p, id, at); err != nil {
						t.Error(err)
						_ = tx.Rollback(ctx)
						return
					}
					ids = append(ids, id)
				}
				// Hold the transaction open a while: others that started
				// after it commit first.
				time.Sleep(time.Duration(rand.IntN(15)) * time.Millisecond) // not a wait: the point is the overlap
				if i%9 == 4 {
					_ = tx.Rollback(ctx)
					continue
				}
				if err := tx.Commit(ctx); err != nil {
					t.Error(err)
					return
				}
				for _, id := range ids {
					committed.Store(id, true)
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()

	seen := map[string]int{}
	q := payment.FeedQuery{ListQuery: payment.ListQuery{Page: 1, Limit: 7}, Since: &since}
	pages := 0
	// readPage reads the next page and says whether the feed had more.
	readPage := func() bool {
		page, err := s.Webhooks().FeedEvents(ctx, p, q)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, ev := range page.Events {
			seen[ev.ID]++
		}
		if q.After != nil && (page.Next.XID < q.After.XID || page.Next.XID == q.After.XID && page.Next.Seq < q.After.Seq) {
			t.Fatalf("the cursor went back: %+v after %+v", page.Next, *q.After)
		}
		next := page.Next
		q.After = &next
		return page.HasMore
	}
	// Read along while the writers work.
	for writing := true; writing; {
		if readPage() {
			continue
		}
		select {
		case <-done:
			writing = false
		case <-time.After(5 * time.Millisecond):
		}
	}
	committedCount := func() int {
		n := 0
		committed.Range(func(any, any) bool { n++; return true })
		return n
	}
	// Every writer has ended: once every committed event is read, the feed
	// is complete. The horizon is the cluster's: other tests' transactions
	// on the same server (creating and dropping their databases) may hold
	// it back a while after the writers here have ended.
	testwait.Until(t, 3*time.Minute, func() (bool, string) {
		for readPage() {
		}
		return len(seen) >= committedCount(), fmt.Sprintf("read %d of %d committed events", len(seen), committedCount())
	})
	total := 0
	committed.Range(func(k, _ any) bool {
		total++
		if seen[k.(string)] == 0 {
			t.Errorf("event %s was skipped", k)
		}
		return true
	})
	for id, c := range seen {
		if c > 1 {
			t.Errorf("event %s was read %d times", id, c)
		}
		if _, ok := committed.Load(id); !ok {
			t.Errorf("event %s was never committed", id)
		}
	}
	if total < writers*perWriter/2 {
		t.Fatalf("only %d events committed", total)
	}
	t.Logf("%d events in %d pages", total, pages)
}

// The feed's filters and its end: since keeps the events created at or
// after it, in the order they were written; a page's Remaining counts
// from its start; at the end, HasMore is false and Next, polled later,
// gives only the events written since.
func TestFeedEventsSinceAndEnd(t *testing.T) {
	s := storetest.NewStore(t)
	ctx := context.Background()
	p := newProject(t, s)
	t0 := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	write := func(id string, at time.Time) {
		t.Helper()
		if err := s.WithTx(ctx, func(tx pgx.Tx) error { return insertEventTx(ctx, tx, p, id, at) }); err != nil {
			t.Fatal(err)
		}
	}
	write("evt_a", t0.Add(-time.Hour))
	write("evt_b", t0)
	write("evt_c", t0.Add(-time.Minute)) // recorded late, with an older time: not since t0
	write("evt_d", t0.Add(time.Minute))
	other := newProject(t, s)
	if err := s.WithTx(ctx, func(tx pgx.Tx) error { return insertEventTx(ctx, tx, other, "evt_other", t0) }); err != nil {
		t.Fatal(err)
	}
	since := t0
	// Every event written is readable first: transactions of other tests
	// on the same server can hold the feed's horizon back a while.
	waitFeed(t, s, p, payment.FeedQuery{ListQuery: payment.ListQuery{Page: 1, Limit: 10}, Since: &since}, 2)
	q := payment.FeedQuery{ListQuery: payment.ListQuery{Page: 1, Limit: 1}, Since: &since}
	var got []string
	for range 5 {
		page := waitFeed(t, s, p, q, 1)
		if len(got) == 0 && page.Remaining != 2 {
			t.Errorf("first page: %d remaining, want 2", page.Remaining)
		}
		for _, ev := range page.Events {
			got = append(got, ev.ID)
		}
		next := page.Next
		q.After = &next
		if !page.HasMore {
			break
		}
	}
	if fmt.Sprint(got) != "[evt_b evt_d]" {
		t.Fatalf("since t0: %v", got)
	}
	page, err := s.Webhooks().FeedEvents(ctx, p, q)
	if err != nil || len(page.Events) != 0 || page.HasMore || page.Remaining != 0 {
		t.Fatalf("at the end: %+v, %v", page, err)
	}
	write("evt_e", t0.Add(2*time.Minute))
	page = waitFeed(t, s, p, q, 1)
	if len(page.Events) != 1 || page.Events[0].ID != "evt_e" {
		t.Fatalf("polled from the end: %+v, %v", page, err)
	}
}

// waitFeed reads a page until it holds at least n events: an event is
// readable once every transaction older than its own has ended on the
// cluster, which other tests' transactions can delay a moment.
func waitFeed(t *testing.T, s *store.Store, p payment.Principal, q payment.FeedQuery, n int) payment.EventFeedPage {
	t.Helper()
	var page payment.EventFeedPage
	testwait.Until(t, 10*time.Second, func() (bool, string) {
		var err error
		if page, err = s.Webhooks().FeedEvents(context.Background(), p, q); err != nil {
			t.Fatal(err)
		}
		return len(page.Events) >= n, fmt.Sprintf("%d events, want %d", len(page.Events), n)
	})
	return page
}
