package moneyout

import (
	"github.com/paymentsd/paymentsd/payment"
)

// Bitcoin money out (docs/decisions.md, "Bitcoin money out"): a refund of
// a session paid in bitcoin, a payout of bitcoin, paid from the project's
// Bitcoin deposit key by `paymentsd refund send` / `payout send`.

// checkPayees refuses, by field, the addresses that are not addresses of
// the network the item is paid on, as its family writes them (a testnet
// address for a regtest item, a mainnet one for the sandbox...).
func (svc Service) checkPayees(network string, fields, addrs []string) error {
	c, ok := svc.Chains[network]
	if !ok {
		return &payment.Error{Kind: payment.KindUnavailable, Message: "The network " + network + " is not configured here: its addresses cannot be checked"}
	}
	var probs payment.Problems
	for i, a := range addrs {
		if msg := c.Family().PayeeProblem(a); msg != "" {
			probs.Add(fields[i], msg)
		}
	}
	return probs.Err()
}
