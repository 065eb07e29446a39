// Package sentlook reads where the transaction of a refund or payout
// stands on its network, whatever the network's chain family, with what
// judging it needs from the engine's records: the workflow that follows
// the item (activities), the API's check of a reported transaction
// (service) and the reconciliation read it alike. A family whose networks
// send money out (chainwatch.Capabilities.MoneyOut) registers its reader
// in readers, beside its chainwatch.Family and its scan in activities
// (docs/decisions.md, "One chain-family interface"). It sits under
// activities, the first of its readers; the service, above, imports it from
// there.
package sentlook

import (
	"context"
	"fmt"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store"
)

// Item is a refund or payout as a look judges it.
type Item struct {
	ID        string
	ProjectID string
	IsLive    bool
	payment.Outgoing
}

// Tx is a transaction as its network says, before it is judged for an
// item: one read serves every item it may pay.
type Tx struct {
	// State is where it stands on the chain.
	State chainwatch.TxState
	// Known tells that its transfers are known: mined, on an EVM chain;
	// seen by the scans, in the mempool or a block, on Bitcoin, whose
	// transaction pays the same outputs wherever it is mined.
	Known bool
	// look is the family's look for any item; for records, a family's
	// look that depends on the item (Bitcoin's: whose coins it spends).
	look    payment.SentLook
	forItem func(Item) payment.SentLook
	// proven: a refund may be paid from any of the project's proven
	// addresses (its signer is an account); else its look says itself
	// whose coins it spends.
	proven bool
}

// For is what tx says to an item: its transfers and sender, mined and
// with how many confirmations, without Sources, Taken and Now.
func (tx Tx) For(it Item) payment.SentLook {
	if tx.forItem != nil {
		return tx.forItem(it)
	}
	l := tx.look
	l.Transfers = append([]payment.Transfer(nil), tx.look.Transfers...)
	return l
}

// reader reads transaction hash of a family's network.
type reader func(ctx context.Context, st *store.Store, c *chainwatch.Chain, hash string) (Tx, error)

// readers are the families' readers, by chainwatch kind.
var readers = map[string]reader{
	chainwatch.KindEVM:     readEVM,
	chainwatch.KindBitcoin: readBitcoin,
}

// Read reads transaction hash of network c.
func Read(ctx context.Context, st *store.Store, c *chainwatch.Chain, hash string) (Tx, error) {
	f := c.Family()
	r, ok := readers[f.Kind()]
	if !ok || !f.Capabilities().MoneyOut {
		return Tx{}, fmt.Errorf("network %s: money out: %w", c.Network.Key, chainwatch.ErrNotSupported)
	}
	return r(ctx, st, c, hash)
}

// Look is what the chain says of an item's transaction hash, with what
// judging it needs (payment.CheckReported, payment.FollowOutgoing): the
// addresses that may pay a refund besides its own source (the project's
// proven addresses), and the transaction's transfers that count for
// something else already. known is Tx.Known.
func Look(ctx context.Context, st *store.Store, c *chainwatch.Chain, it Item, hash string) (l payment.SentLook, known bool, err error) {
	tx, err := Read(ctx, st, c, hash)
	if err != nil {
		return l, false, err
	}
	l = tx.For(it)
	if !tx.Known {
		return l, false, nil
	}
	if tx.proven && strings.HasPrefix(it.ID, payment.PrefixRefund) {
		if l.Sources, err = st.MoneyOut().ProvenAddresses(ctx, it.ProjectID, it.IsLive); err != nil {
			return l, true, err
		}
	}
	l.Taken, err = st.MoneyOut().TakenTransfers(ctx, it.ChainID, hash, it.ID)
	return l, true, err
}

// readEVM reads an EVM transaction's receipt: its transfers of the
// network's assets and its signer, once mined.
func readEVM(ctx context.Context, _ *store.Store, c *chainwatch.Chain, hash string) (Tx, error) {
	n := c.Network
	st, err := c.Scanner().CheckTransaction(ctx, common.HexToHash(hash), n.FinalizedTag())
	if err != nil {
		return Tx{}, err
	}
	l := payment.SentLook{Mined: st.Mined, Succeeded: st.Succeeded, Final: st.Final, Confirmations: int(st.Confirmations),
		Required: n.Confirmations, Transfers: c.PaymentTransfers(st.Transfers)}
	if st.Mined {
		l.BlockNumber, l.BlockHash = int64(st.BlockNumber), st.BlockHash.Hex()
	}
	if st.Sender != (common.Address{}) {
		l.Sender = st.Sender.Hex()
	}
	return Tx{State: st, Known: st.Mined && st.Succeeded, look: l, proven: true}, nil
}

// readBitcoin reads a Bitcoin transaction from what the scans recorded of
// it and the node's chain now (readBitcoinTx).
func readBitcoin(ctx context.Context, st *store.Store, c *chainwatch.Chain, hash string) (Tx, error) {
	btc, err := readBitcoinTx(ctx, st.Chains(), c, hash)
	if err != nil {
		return Tx{}, err
	}
	s := btc.State
	s.Succeeded = s.Mined
	return Tx{State: s, Known: btc.Seen, forItem: func(it Item) payment.SentLook {
		return bitcoinLookFor(btc, c, it.Outgoing, it.ProjectID, it.IsLive)
	}}, nil
}
