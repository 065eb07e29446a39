package service

import (
	"context"
	"strings"

	"github.com/paymentsd/paymentsd/internal/btcout"
	"github.com/paymentsd/paymentsd/payment"
)

// Bitcoin money out (docs/decisions.md, "Bitcoin money out"): a refund of
// a session paid in bitcoin, a payout of bitcoin, paid from the project's
// Bitcoin deposit key by `paymentsd refund send` / `payout send`.

// checkBitcoinAddresses refuses, by field, the addresses that are not
// Bitcoin addresses of the network the item is paid on (a testnet address
// for a regtest item, a mainnet one for the sandbox...).
func (svc *Service) checkBitcoinAddresses(network string, fields, addrs []string) error {
	c, ok := svc.chains[network]
	if !ok || !c.IsBitcoin() {
		return &payment.Error{Kind: payment.KindUnavailable, Message: "The network " + network + " is not configured here: its addresses cannot be checked"}
	}
	var probs payment.Problems
	for i, a := range addrs {
		if _, msg := payment.CheckBitcoinPayee(a, c.Params); msg != "" {
			probs.Add(fields[i], msg)
		}
	}
	return probs.Err()
}

// checkBitcoinReport judges a reported Bitcoin transaction the network's
// scans have seen (its content is known from the mempool on: a Bitcoin
// transaction's outputs do not change when it is mined) as its workflow
// would, so that one that does not pay the item from the project's own
// coins, or whose output counts for something else, is refused now. One
// not seen yet is taken, and its workflow judges it.
func (svc *Service) checkBitcoinReport(ctx context.Context, p payment.Principal, id string, o payment.Outgoing, txid string) error {
	c, ok := svc.chains[o.Network]
	norm, valid := payment.NormalizeBitcoinTxID(txid)
	if !ok || !c.IsBitcoin() || !valid || strings.EqualFold(o.TxHash, norm) {
		return nil
	}
	tx, err := btcout.Read(ctx, svc.store, c, norm)
	if err != nil || !tx.Seen {
		return nil // not read: the workflow looks again
	}
	l := btcout.LookFor(tx, c, o, p.ProjectID, p.IsLive)
	l.Mined, l.Succeeded = true, true // judged by what it pays
	if l.Taken, err = svc.store.TakenTransfers(ctx, 0, norm, id); err != nil {
		return err
	}
	l.Now = svc.now()
	return payment.CheckReported(o, norm, l)
}
