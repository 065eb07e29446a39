// Package evmrpc is the engine's connection to EVM nodes: a Client is what
// the engine asks of a chain, and Failover is one over several RPC
// endpoints of a network that absorbs what public and paid providers do
// differently (failover, head tracking, rate limits, log range limits).
package evmrpc

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"
)

// Client is what the engine asks of a chain: go-ethereum's small
// interfaces where their types read every chain, and raw calls for blocks,
// transactions and receipts (chainwatch reads them into the few fields a payment needs). RPC adapts a go-ethereum client,
// such as the simulated backend's.
type Client interface {
	ethereum.BlockNumberReader
	ethereum.ContractCaller
	FilterLogs(ctx context.Context, q ethereum.FilterQuery) ([]types.Log, error)
	// Call makes a JSON-RPC call and decodes its answer into result; a
	// null answer is ethereum.NotFound.
	Call(ctx context.Context, result any, method string, args ...any) error
	// Read runs read with a Client whose calls all go to one node, so that
	// the answers read checks against each other (a block and its parent,
	// a receipt and its block, logs and their blocks) come from one
	// witness, and one that contradicts itself is known. What read returns
	// decides what comes next: an error wrapping nodetrust.ErrBadAnswer (a
	// check failed) sets the node aside and runs read again on the next
	// node; a failure of the node itself (no answer, a rate limit, "not
	// found" from a node behind the others) runs it again on the next
	// node, as any call moves on; anything else is read's own result and
	// returned as it is. read may run more than once.
	Read(ctx context.Context, read func(c Client) error) error
}

// RPC makes a Client of a go-ethereum client (the simulated backend's, in
// tests): its raw calls go to the client's connection.
func RPC(c *ethclient.Client) Client { return ethRPC{c} }

type ethRPC struct{ *ethclient.Client }

func (c ethRPC) Call(ctx context.Context, result any, method string, args ...any) error {
	return rawCall(ctx, c.Client.Client(), result, method, args...)
}

// Read runs read on the one node: a failed check is its error.
func (c ethRPC) Read(_ context.Context, read func(Client) error) error { return read(c) }

// Call makes a raw JSON-RPC call on the endpoint that last worked (see
// Client).
func (f *Failover) Call(ctx context.Context, result any, method string, args ...any) error {
	_, err := try(ctx, f, func(c *ethclient.Client) (struct{}, error) {
		return struct{}{}, rawCall(ctx, c.Client(), result, method, args...)
	})
	return err
}

// rawCall makes a JSON-RPC call on c and decodes its answer into result;
// a null answer is ethereum.NotFound. An object asked for field by field
// (a *map[string]json.RawMessage: a block, whose header and transactions
// are read apart) is decoded as the answer is read, and a raw answer
// (*json.RawMessage) is taken as it is: a block's JSON is not parsed more
// times than it must.
func rawCall(ctx context.Context, c *rpc.Client, result any, method string, args ...any) error {
	if fields, ok := result.(*map[string]json.RawMessage); ok {
		*fields = nil
		if err := c.CallContext(ctx, fields, method, args...); err != nil {
			return err
		}
		if *fields == nil {
			return ethereum.NotFound
		}
		return nil
	}
	var raw json.RawMessage
	if err := c.CallContext(ctx, &raw, method, args...); err != nil {
		return err
	}
	if len(raw) == 0 || string(raw) == "null" {
		return ethereum.NotFound
	}
	if r, ok := result.(*json.RawMessage); ok {
		*r = raw
		return nil
	}
	if err := json.Unmarshal(raw, result); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
}
