package evmrpc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/big"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/paymentsd/paymentsd/internal/observability"
)

// FilterLogs returns the logs q matches. A query over a block range
// (FromBlock and ToBlock numbers, no BlockHash) adapts to the providers'
// eth_getLogs limits: when an endpoint refuses a range, by its block count
// or by the number of results (see logRangeWords), the range is split,
// to the span the refusal names or else in halves, down to single blocks,
// and the parts' logs are concatenated in order. A refusal is not a
// failure of the endpoint, so the call does not move to another; a single
// block refused still is. The span that worked is remembered per endpoint
// for the calls that follow, and after LogSpanGrowAfter successes twice
// that span is tried again, never past a limit the endpoint stated nor
// past the range asked.
//
// An endpoint is asked for logs up to a block only once it is known to
// have that block: a node behind would answer without the logs of the
// blocks it lacks, and chainwatch would miss their payments.
func (f *Failover) FilterLogs(ctx context.Context, q ethereum.FilterQuery) ([]types.Log, error) {
	if !rangeQuery(q) {
		return try(ctx, f, func(c *ethclient.Client) ([]types.Log, error) { return c.FilterLogs(ctx, q) })
	}
	from, to := q.FromBlock.Uint64(), q.ToBlock.Uint64()
	asked := to - from + 1
	var logs []types.Log
	for start := from; ; {
		part, err := tryEach(ctx, f, func(i int, c *ethclient.Client) (logPart, error) {
			return f.logsFrom(ctx, i, c, q, start, to, asked)
		})
		if err != nil {
			return nil, err
		}
		logs = append(logs, part.logs...)
		if part.end >= to {
			return logs, nil
		}
		start = part.end + 1
	}
}

// rangeQuery reports whether q asks for a range of block numbers, which
// FilterLogs splits as the endpoints' limits ask.
func rangeQuery(q ethereum.FilterQuery) bool {
	return q.BlockHash == nil && q.FromBlock != nil && q.ToBlock != nil && q.FromBlock.Sign() >= 0 && q.ToBlock.Sign() >= 0 &&
		q.ToBlock.IsUint64() && q.ToBlock.Cmp(q.FromBlock) >= 0
}

// logPart is the logs of the blocks up to end.
type logPart struct {
	logs []types.Log
	end  uint64
}

// errLogsBehind says an endpoint does not have the last block of an
// eth_getLogs range yet.
var errLogsBehind = errors.New("the endpoint does not have the range's last block yet")

// logsFrom reads endpoint i's logs of q from block start on, over as many
// blocks up to `to` as its span allows, cutting the span at each refusal.
func (f *Failover) logsFrom(ctx context.Context, i int, c *ethclient.Client, q ethereum.FilterQuery, start, to, asked uint64) (logPart, error) {
	for {
		span := f.logSpan(i, to-start+1)
		end := start + span - 1
		if err := f.reaches(ctx, i, c, end); err != nil {
			return logPart{}, err
		}
		part := q
		part.FromBlock, part.ToBlock = new(big.Int).SetUint64(start), new(big.Int).SetUint64(end)
		logs, err := c.FilterLogs(ctx, part)
		if err == nil {
			f.logSpanWorked(i, span, asked)
			return logPart{logs, end}, nil
		}
		fits, limit, refused := logRangeRefusal(err)
		if !refused {
			return logPart{}, err
		}
		observability.RPCRequests.WithLabelValues(f.Network, "range_refused").Inc()
		if span == 1 {
			return logPart{}, fmt.Errorf("eth_getLogs of block %d alone: %w", start, err)
		}
		f.cutLogSpan(i, span, fits, limit)
		f.Calls.Add(1) // the next attempt
	}
}

// reaches makes sure endpoint i has block n, asking for its head when the
// one known is lower.
func (f *Failover) reaches(ctx context.Context, i int, c *ethclient.Client, n uint64) error {
	if f.headOf(i) >= n {
		return nil
	}
	f.Calls.Add(1)
	head, err := c.BlockNumber(ctx)
	if err != nil {
		return err
	}
	f.reported(i, head)
	if head < n {
		return fmt.Errorf("%s is at block %d, eth_getLogs asks up to %d: %w", hostOf(f.urls[i]), head, n, errLogsBehind)
	}
	return nil
}

// logSpan is the span of endpoint i's next eth_getLogs over remaining
// blocks.
func (f *Failover) logSpan(i int, remaining uint64) uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.init()
	if s := f.eps[i].logSpan; s > 0 && s < remaining {
		return s
	}
	return remaining
}

// cutLogSpan records that endpoint i refused span blocks: the span drops
// to the one the refusal suggested or stated (fits) when that is smaller,
// else to half; a stated limit caps it for good.
func (f *Failover) cutLogSpan(i int, span, fits, limit uint64) {
	next := max(span/2, 1)
	if fits > 0 && fits < span {
		next = fits
	}
	f.mu.Lock()
	f.init()
	e := &f.eps[i]
	if e.logSpan == 0 || next < e.logSpan {
		e.logSpan = next
	}
	if limit > 0 && (e.logSpanCap == 0 || limit < e.logSpanCap) {
		e.logSpanCap = limit
	}
	e.logSpanOK = 0
	next = e.logSpan
	f.mu.Unlock()
	slog.Info("rpc endpoint refused an eth_getLogs range; the range is split", "network", f.Network,
		"endpoint", hostOf(f.urls[i]), "refused", span, "span", next)
}

// logSpanWorked records that endpoint i served span blocks of a query
// over asked blocks, and grows its span after LogSpanGrowAfter successes.
func (f *Failover) logSpanWorked(i int, span, asked uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.init()
	e := &f.eps[i]
	if e.logSpan == 0 || span < e.logSpan || e.logSpan >= asked || e.logSpanCap > 0 && e.logSpan >= e.logSpanCap {
		return // no limit met, a range's last part, or nothing to grow to
	}
	if e.logSpanOK++; e.logSpanOK < max(f.LogSpanGrowAfter, 1) {
		return
	}
	e.logSpanOK = 0
	e.logSpan = min(e.logSpan*2, asked)
	if e.logSpanCap > 0 {
		e.logSpan = min(e.logSpan, e.logSpanCap)
	}
}
