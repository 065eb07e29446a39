package evmrpc

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
)

// refuseOver makes node refuse, in r's words, every eth_getLogs over more
// than limit blocks while refusing is true; it counts the calls, the
// refusals and the widest range asked.
type refuser struct {
	calls, refused, widest atomic.Uint64
	refusing               atomic.Bool
}

func refuseOver(node *stubNode, r refusal, limit uint64) *refuser {
	rf := &refuser{}
	rf.refusing.Store(true)
	node.setHook(func(method string, params []json.RawMessage) *stubReply {
		if method != "eth_getLogs" {
			return nil
		}
		rf.calls.Add(1)
		from, to := logRangeOf(params)
		for w := rf.widest.Load(); to-from+1 > w && !rf.widest.CompareAndSwap(w, to-from+1); w = rf.widest.Load() {
		}
		if !rf.refusing.Load() || to-from+1 <= limit {
			return nil
		}
		rf.refused.Add(1)
		e := &stubError{Code: r.code, Message: r.message(from, to, limit)}
		if r.data != nil {
			e.Data = r.data(from, to, limit)
		}
		return &stubReply{status: r.status, err: e}
	})
	return rf
}

// A provider that refuses eth_getLogs over more than 10 blocks, in any of
// the wordings providers use, still yields every log of a 100-block range,
// in order, in a bounded number of calls; the next range is asked in
// parts that provider accepts from the start.
func TestFilterLogsSplitsRefusedRanges(t *testing.T) {
	const limit = 10
	chain := newStubChain(130)
	for _, r := range refusals {
		t.Run(r.provider, func(t *testing.T) {
			node := newStubNode(t, chain, 130)
			rf := refuseOver(node, r, limit)
			f, _ := dialStubs(t, node)
			f.LogSpanGrowAfter = 1000 // see TestFilterLogsSpanGrowsBack
			ctx := context.Background()

			logs, err := f.FilterLogs(ctx, logQuery(1, 100))
			if err != nil {
				t.Fatalf("FilterLogs: %v", err)
			}
			if err := sameLogs(logs, chain.logsIn(1, 100)); err != nil {
				t.Fatal(err)
			}
			// Halving finds a span of at least limit/2 in log2(100/limit)+1
			// refusals; a stated limit takes one.
			if calls := rf.calls.Load(); calls > 5+100/(limit/2) {
				t.Errorf("%d eth_getLogs calls (%d refused) for 100 blocks", calls, rf.refused.Load())
			}
			if counted(t, f, "range_refused") != float64(rf.refused.Load()) || counted(t, f, "rate_limited") != 0 {
				t.Errorf("metrics: %v range_refused, %v rate_limited; %d refusals", counted(t, f, "range_refused"),
					counted(t, f, "rate_limited"), rf.refused.Load())
			}

			refused := rf.refused.Load()
			logs, err = f.FilterLogs(ctx, logQuery(101, 130))
			if err != nil {
				t.Fatalf("the next range: %v", err)
			}
			if err := sameLogs(logs, chain.logsIn(101, 130)); err != nil {
				t.Fatalf("the next range: %v", err)
			}
			if rf.refused.Load() != refused {
				t.Errorf("the next range was refused %d more times: the span that works is not remembered", rf.refused.Load()-refused)
			}
		})
	}
}

// A span cut for the result count grows back, doubling after
// LogSpanGrowAfter successes, but never past the range asked; one cut to a
// block-range limit the provider stated never grows past it.
func TestFilterLogsSpanGrowsBack(t *testing.T) {
	chain := newStubChain(100)
	ctx := context.Background()

	t.Run("a result-count refusal", func(t *testing.T) {
		node := newStubNode(t, chain, 100)
		rf := refuseOver(node, refusals[1], 10) // Infura's "query returned more than 10000 results"
		f, _ := dialStubs(t, node)
		f.LogSpanGrowAfter = 2
		if _, err := f.FilterLogs(ctx, logQuery(1, 100)); err != nil {
			t.Fatal(err)
		}
		rf.refusing.Store(false) // the busy blocks are past
		prev := rf.calls.Load()
		var per []uint64
		for range 6 {
			rf.widest.Store(0)
			logs, err := f.FilterLogs(ctx, logQuery(1, 100))
			if err != nil {
				t.Fatal(err)
			}
			if err := sameLogs(logs, chain.logsIn(1, 100)); err != nil {
				t.Fatal(err)
			}
			per = append(per, rf.calls.Load()-prev)
			prev = rf.calls.Load()
			if rf.widest.Load() > 100 {
				t.Fatalf("a call spanned %d blocks, more than the 100 asked", rf.widest.Load())
			}
		}
		if per[len(per)-1] != 1 || per[0] <= per[1] {
			t.Errorf("calls per 100-block range as the span grows back: %v, want fewer each time down to 1", per)
		}
	})

	t.Run("a stated block-range limit", func(t *testing.T) {
		node := newStubNode(t, chain, 100)
		rf := refuseOver(node, refusals[13], 10) // Cloudflare's "Max range: 10"
		f, _ := dialStubs(t, node)
		f.LogSpanGrowAfter = 1
		for range 3 {
			if _, err := f.FilterLogs(ctx, logQuery(1, 100)); err != nil {
				t.Fatal(err)
			}
		}
		if rf.refused.Load() != 1 {
			t.Errorf("%d refusals: the span grew past the limit the provider stated", rf.refused.Load())
		}
	})
}

// A single block refused is an error, not an endless split; the caller
// sees the provider's words.
func TestFilterLogsSingleBlockRefused(t *testing.T) {
	chain := newStubChain(10)
	node := newStubNode(t, chain, 10)
	rf := refuseOver(node, refusals[1], 0)
	f, _ := dialStubs(t, node)
	_, err := f.FilterLogs(context.Background(), logQuery(1, 8))
	if err == nil || !strings.Contains(err.Error(), "block 1 alone") || !strings.Contains(err.Error(), "query returned more than 10000 results") {
		t.Fatalf("FilterLogs: %v", err)
	}
	if rf.calls.Load() != 4 { // 8, 4, 2, 1 blocks
		t.Errorf("%d calls, want 4", rf.calls.Load())
	}
}

// eth_getLogs goes only to an endpoint that has the range's last block: a
// lagging node answers without the logs of the blocks it lacks.
func TestFilterLogsSkipsAnEndpointWithoutTheBlocks(t *testing.T) {
	ctx := context.Background()
	l := newLagging(t)
	l.f.MaxLag = 10
	failOnce(l.a, "eth_blockNumber")
	if _, err := l.f.BlockNumber(ctx); err != nil { // b: 105
		t.Fatal(err)
	}
	l.f.current.Store(0)
	logs, err := l.f.FilterLogs(ctx, logQuery(96, 105))
	if err != nil {
		t.Fatal(err)
	}
	if err := sameLogs(logs, l.chain.logsIn(96, 105)); err != nil {
		t.Fatalf("%v: the logs of blocks 101-105 are missing", err)
	}
	if l.a.count("eth_getLogs") != 0 {
		t.Errorf("a was asked for logs of blocks it does not have")
	}
	down(l.b)
	if _, err := l.f.FilterLogs(ctx, logQuery(96, 105)); !errors.Is(err, errLogsBehind) {
		t.Errorf("with b down: %v, want an error", err)
	}
}
