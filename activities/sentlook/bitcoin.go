package sentlook

// Bitcoin's reader: what a Bitcoin network says of the transaction of a
// refund or payout paid in bitcoin (docs/decisions.md, "Bitcoin money
// out"), from what the network's scans recorded of it (they record the
// transactions paying a Bitcoin item's destination, as they do those
// paying a deposit address) and the node's chain now.

import (
	"context"
	"strconv"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"

	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store"
)

// bitcoinRecords is what a Bitcoin look reads of the engine's records (a
// store.Chains).
type bitcoinRecords interface {
	BitcoinSeen(ctx context.Context, network string, txid chainhash.Hash) (chainwatch.BitcoinSeen, bool, error)
	BitcoinOutputOwners(ctx context.Context, network string, outpoints []wire.OutPoint) (map[wire.OutPoint]store.BitcoinOwner, error)
}

// bitcoinTx is a Bitcoin transaction as the chain and the scans show it.
type bitcoinTx struct {
	State chainwatch.TxState
	Seen  bool
	// Outputs are its outputs to watched addresses (an item's destination,
	// a deposit address).
	Outputs []chainwatch.BitcoinOutput
	// OwnerProject and OwnerLive name the project environment whose
	// deposit addresses every output it spends was recorded at; empty when
	// any is not (or it spends none the scans recorded).
	OwnerProject string
	OwnerLive    bool
}

// readBitcoinTx reads transaction txid of a Bitcoin network: not mined
// (State's zero) while no scan recorded it.
func readBitcoinTx(ctx context.Context, st bitcoinRecords, c *chainwatch.Chain, txid string) (bitcoinTx, error) {
	var tx bitcoinTx
	id, ok := payment.NormalizeBitcoinTxID(txid)
	if !ok {
		return tx, nil
	}
	hash, err := chainhash.NewHashFromStr(id)
	if err != nil {
		return tx, nil
	}
	seen, ok, err := st.BitcoinSeen(ctx, c.Network.Key, *hash)
	if err != nil || !ok {
		return tx, err
	}
	tx.Seen, tx.Outputs = true, seen.Outputs
	if tx.State, err = chainwatch.CheckBitcoin(ctx, c.BitcoinScanner(), seen); err != nil {
		return tx, err
	}
	owners, err := st.BitcoinOutputOwners(ctx, c.Network.Key, seen.Spends)
	if err != nil {
		return tx, err
	}
	for i, op := range seen.Spends {
		o, ok := owners[op]
		if !ok || i > 0 && (o.ProjectID != tx.OwnerProject || o.IsLive != tx.OwnerLive) {
			tx.OwnerProject = ""
			break
		}
		tx.OwnerProject, tx.OwnerLive = o.ProjectID, o.IsLive
	}
	return tx, nil
}

// bitcoinLookFor is what tx says to an item of project projectID's environment
// isLive: mined with the network's confirmations (the depth of its last
// finality tier: an outgoing item's worth is not weighed), its outputs as
// transfers of bitcoin, sent from the item's own source when every output
// the transaction spends is the project's (payment.BitcoinUnproven
// otherwise).
func bitcoinLookFor(tx bitcoinTx, c *chainwatch.Chain, o payment.Outgoing, projectID string, isLive bool) payment.SentLook {
	l := payment.SentLook{Mined: tx.State.Mined, Succeeded: tx.State.Mined, Confirmations: int(tx.State.Confirmations),
		Required: c.Network.Confirmations}
	l.Final = l.Mined && l.Confirmations >= l.Required
	if l.Mined {
		l.BlockNumber, l.BlockHash = int64(tx.State.BlockNumber), tx.State.BlockHash.Hex()
	}
	l.Sender = payment.BitcoinUnproven
	if tx.OwnerProject != "" && tx.OwnerProject == projectID && tx.OwnerLive == isLive {
		l.Sender = o.FromAddress
	}
	for _, out := range tx.Outputs {
		l.Transfers = append(l.Transfers, payment.Transfer{LogIndex: int(out.Vout), From: l.Sender, To: out.Address,
			AssetID: o.AssetDefinitionID, AmountBaseUnits: strconv.FormatInt(out.Sats, 10)})
	}
	return l
}
