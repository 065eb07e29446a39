package btcsweep

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"

	"github.com/paymentsd/paymentsd/internal/sweep"
)

// Node is the calls a sweep makes on a Bitcoin Core or btcd node (a
// btcrpc.Client): standard JSON-RPC, no wallet, no index.
type Node interface {
	Call(ctx context.Context, result any, method string, params ...any) error
}

// Network tells the network node serves by its genesis block.
func Network(ctx context.Context, node Node) (*chaincfg.Params, error) {
	var genesis string
	if err := node.Call(ctx, &genesis, "getblockhash", 0); err != nil {
		return nil, err
	}
	for _, p := range []*chaincfg.Params{&chaincfg.MainNetParams, &chaincfg.TestNet3Params, &chaincfg.SigNetParams, &chaincfg.RegressionNetParams} {
		if p.GenesisHash.String() == genesis {
			return p, nil
		}
	}
	return nil, fmt.Errorf("the node's genesis block %s is of no known Bitcoin network", genesis)
}

// Unspent reads output out from the node's set of unspent outputs (the
// mempool's too when mempool): its value and confirmations, ok false when
// it is spent or unknown.
func Unspent(ctx context.Context, node Node, out wire.OutPoint, mempool bool) (sats, confirmations int64, ok bool, err error) {
	var r *struct {
		Confirmations int64   `json:"confirmations"`
		Value         float64 `json:"value"`
	}
	if err := node.Call(ctx, &r, "gettxout", out.Hash.String(), out.Index, mempool); err != nil {
		return 0, 0, false, err
	}
	if r == nil {
		return 0, 0, false, nil
	}
	amount, err := btcutil.NewAmount(r.Value)
	if err != nil {
		return 0, 0, false, err
	}
	return int64(amount), r.Confirmations, true, nil
}

// FeeRate is the node's estimate, in satoshis per virtual byte rounded
// up, of the fee rate that gets a transaction mined within blocks blocks.
func FeeRate(ctx context.Context, node Node, blocks int) (int64, error) {
	var r struct {
		FeeRate *float64 `json:"feerate"` // BTC per kvB
		Errors  []string `json:"errors"`
	}
	if err := node.Call(ctx, &r, "estimatesmartfee", blocks); err != nil {
		return 0, fmt.Errorf("the node gives no fee estimate (%v): pass --fee-rate", err)
	}
	if r.FeeRate == nil || *r.FeeRate <= 0 {
		return 0, fmt.Errorf("the node gives no fee estimate (%v): pass --fee-rate", r.Errors)
	}
	return int64(math.Ceil(*r.FeeRate * 1e8 / 1000)), nil
}

// Journal is a sweep signed and about to be (or already) sent, written
// before it is sent so that a run that stops resends it instead of
// signing another: Done once it is mined, or once its coins are found
// spent by another.
type Journal struct {
	TxID string `json:"txid"`
	Hex  string `json:"hex"`
	To   string `json:"to"`
	Sats int64  `json:"sats"`
	Fee  int64  `json:"fee"`
	Done bool   `json:"done"`
}

// ReadJournal reads the journal at path; nil when there is none.
func ReadJournal(path string) (*Journal, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var j Journal
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &j, nil
}

// Write writes j to path (sweep.SaveJSON: whole, or not at all).
func (j *Journal) Write(path string) error { return sweep.SaveJSON(path, j) }

// NewJournal is the journal of the signed sweep tx paying to.
func NewJournal(tx *wire.MsgTx, to string, fee int64) (*Journal, error) {
	var buf bytes.Buffer
	if err := tx.Serialize(&buf); err != nil {
		return nil, err
	}
	return &Journal{TxID: tx.TxHash().String(), Hex: hex.EncodeToString(buf.Bytes()), To: to, Sats: tx.TxOut[0].Value, Fee: fee}, nil
}

// Outcome is where a sent sweep stands.
type Outcome int

const (
	// Mined: the sweep is in a block.
	Mined Outcome = iota
	// Waiting: the sweep is in the node's mempool, not yet mined.
	Waiting
	// Spent: the node knows neither the sweep nor its coins: another
	// transaction spent them, or the sweep was mined and its output spent
	// since.
	Spent
)

// Settle sends j's transaction to the node (again: a node that has it
// already keeps it) and waits up to wait for it to be mined.
func Settle(ctx context.Context, node Node, j *Journal, wait time.Duration) (Outcome, error) {
	var tx wire.MsgTx
	raw, err := hex.DecodeString(j.Hex)
	if err != nil {
		return 0, err
	}
	if err := tx.Deserialize(bytes.NewReader(raw)); err != nil {
		return 0, err
	}
	sendErr := node.Call(ctx, nil, "sendrawtransaction", j.Hex)
	txid := tx.TxHash()
	deadline := time.Now().Add(wait)
	for {
		_, confirmations, ok, err := Unspent(ctx, node, *wire.NewOutPoint(&txid, 0), true)
		switch {
		case err != nil:
			return 0, err
		case !ok && sendErr != nil:
			return Spent, nil
		case ok && confirmations > 0:
			return Mined, nil
		}
		if !time.Now().Before(deadline) {
			return Waiting, nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}
