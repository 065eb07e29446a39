package payment

import "testing"

// TestOneConfirmationMachineForMoneyInAndOut walks the machine through
// what a merchant sees of each side: a payment goes through confirmed on
// its way to finalized, a refund may be final at the look that finds it;
// a reorg takes a payment back to pending but a refund re-read in its new
// block stays confirmed; a final block that leaves the chain reverses
// either.
func TestOneConfirmationMachineForMoneyInAndOut(t *testing.T) {
	deep := ChainLook{Mined: true, Succeeded: true, BlockHash: "0xaa", Confirmations: 12, Required: 12}
	shallow := ChainLook{Mined: true, Succeeded: true, BlockHash: "0xaa", Confirmations: 1, Required: 12}
	moved := ChainLook{Mined: true, Succeeded: true, BlockHash: "0xbb", Confirmations: 1, Required: 12}
	reverted := ChainLook{Mined: true, BlockHash: "0xbb"}
	gone := ChainLook{}
	cases := []struct {
		name       string
		from       Confirmation
		look       ChainLook
		rules      ConfirmRules
		to         TransactionStatus
		block, why string
	}{
		{"a payment mined deep is confirmed first", Confirmation{Status: TxPending}, deep, ConfirmIn, TxConfirmed, "0xaa", ""},
		{"a refund mined deep is final at once", Confirmation{Status: TxPending}, deep, ConfirmOut, TxFinalized, "0xaa", ""},
		{"a shallow one is confirmed", Confirmation{Status: TxPending}, shallow, ConfirmOut, TxConfirmed, "0xaa", ""},
		{"a confirmed payment deep enough is final", Confirmation{Status: TxConfirmed, Block: "0xaa"}, deep, ConfirmIn, TxFinalized, "0xaa", ""},
		{"a payment in another block is pending again", Confirmation{Status: TxConfirmed, Block: "0xaa"}, moved, ConfirmIn, TxPending, "0xaa", "its block left the canonical chain"},
		{"a refund in another block is confirmed there", Confirmation{Status: TxConfirmed, Block: "0xaa"}, moved, ConfirmOut, TxConfirmed, "0xbb", ""},
		{"a refund unmined again is pending", Confirmation{Status: TxConfirmed, Block: "0xaa"}, gone, ConfirmOut, TxPending, "0xaa", "its block left the canonical chain"},
		{"a refund reverted in its new block fails", Confirmation{Status: TxConfirmed, Block: "0xaa"}, reverted, ConfirmOut, TxFailed, "0xaa", "reverted"},
		{"a reverted payment fails", Confirmation{Status: TxPending}, reverted, ConfirmIn, TxFailed, "", "reverted"},
		{"a conflicting payment fails", Confirmation{Status: TxPending}, ChainLook{Conflict: "double spent"}, ConfirmIn, TxFailed, "", "double spent"},
		{"an overdue payment fails", Confirmation{Status: TxPending}, ChainLook{Overdue: "not mined within 1h0m0s"}, ConfirmIn, TxFailed, "", "not mined within 1h0m0s"},
		{"an unmined one waits", Confirmation{Status: TxPending}, gone, ConfirmOut, TxPending, "", ""},
		{"a final block that leaves reverses", Confirmation{Status: TxFinalized, Block: "0xaa"}, moved, ConfirmIn, TxReversed, "0xaa", "its block 0xaa left the canonical chain after it was final"},
		{"a final block still there stays", Confirmation{Status: TxFinalized, Block: "0xAA"}, deep, ConfirmOut, TxFinalized, "0xAA", ""},
		{"a reversed one mined again is confirmed", Confirmation{Status: TxReversed, Block: "0xaa"}, moved, ConfirmIn, TxConfirmed, "0xbb", ""},
		{"a reversed one reverted when mined again fails", Confirmation{Status: TxReversed, Block: "0xaa"}, reverted, ConfirmIn, TxFailed, "0xaa", "reverted when mined again"},
		{"a reversed one is not overdue", Confirmation{Status: TxReversed, Block: "0xaa"}, ChainLook{Overdue: "late"}, ConfirmIn, TxReversed, "0xaa", ""},
		{"a failed one stays failed", Confirmation{Status: TxFailed}, deep, ConfirmIn, TxFailed, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := c.from
			why := got.Step(c.look, c.rules)
			if got.Status != c.to || got.Block != c.block || why != c.why {
				t.Errorf("%+v after %+v: %+v, %q; want %s in %q, %q", c.from, c.look, got, why, c.to, c.block, c.why)
			}
		})
	}
}
