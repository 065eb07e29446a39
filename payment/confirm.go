package payment

// The confirmation state machine: where a transaction stands on its
// chain, from one look to the next. Money in (a payment's transaction,
// followed by its workflow) and money out (a refund's or a payout's
// transaction, followed by its item's workflow) both move along it; what
// differs between them is in ConfirmRules, and what each makes of a
// transaction that does not pay what it should is theirs.
//
//	pending ──mined──▶ confirmed ──deep enough──▶ finalized
//	   ▲                  │                           │
//	   └──its block left──┘                  its block left
//	   │                                              ▼
//	   └─reverted, conflicting, overdue─▶ failed ◀─ reversed ──mined again──▶ confirmed

// ChainLook is what one look at a transaction found on its chain.
type ChainLook struct {
	Mined, Succeeded bool
	// BlockHash is the block that mined it.
	BlockHash string
	// Final: its block is final by the network's own finality; else
	// Confirmations against Required decide.
	Final         bool
	Confirmations int
	Required      int
	// Conflict says why a transaction not mined never will be (another
	// spent what it spends); Overdue, that it is not mined within the time
	// it was given (the reason, "not mined within 1h0m0s"). Either fails
	// it; money out leaves both empty (an item's unmined transaction goes
	// stale, and its merchant decides).
	Conflict string
	Overdue  string
}

// deep tells that a mined transaction is as deep as it must be.
func (l ChainLook) deep() bool { return l.Final || l.Confirmations >= l.Required }

// ConfirmRules are what money in and money out read differently.
type ConfirmRules struct {
	// FinalAtOnce: a transaction found mined and already deep enough is
	// final at the look that finds it. Without it (money in), it is
	// confirmed first and final at the next look, which sees its block
	// still there: a session's payment goes through confirmed, and its
	// webhooks say so.
	FinalAtOnce bool
	// Remined: a confirmed transaction found in another block is
	// confirmed in that one (money out reads its transfers again at each
	// look). Without it (money in), it is pending again until a look
	// finds it mined, and its transfers are read from the new block.
	Remined bool
}

// ConfirmIn and ConfirmOut are the rules of money in and money out.
var (
	ConfirmIn  = ConfirmRules{}
	ConfirmOut = ConfirmRules{FinalAtOnce: true, Remined: true}
)

// Confirmation is a transaction's place on its chain: its status and the
// block it was last confirmed in (kept when it leaves it, for the record).
type Confirmation struct {
	Status TransactionStatus
	Block  string
}

// Step moves c along one look and returns why, when it moves off the
// road to finalized (failed, pending again, reversed); "" otherwise.
func (c *Confirmation) Step(look ChainLook, rules ConfirmRules) string {
	moved := func(s TransactionStatus, why string) string {
		c.Status = s
		return why
	}
	mined := func(s TransactionStatus) string {
		c.Status, c.Block = s, look.BlockHash
		return ""
	}
	switch c.Status {
	case TxPending, TxReversed:
		again := ""
		if c.Status == TxReversed {
			again = " when mined again"
		}
		switch {
		case look.Mined && !look.Succeeded:
			return moved(TxFailed, "reverted"+again)
		case !look.Mined && look.Conflict != "":
			return moved(TxFailed, look.Conflict)
		case look.Mined && rules.FinalAtOnce && look.deep():
			return mined(TxFinalized)
		case look.Mined:
			return mined(TxConfirmed)
		case c.Status == TxPending && look.Overdue != "":
			return moved(TxFailed, look.Overdue)
		}
	case TxConfirmed:
		switch {
		case !look.Mined || !rules.Remined && look.BlockHash != c.Block:
			return moved(TxPending, "its block left the canonical chain")
		case rules.Remined && !look.Succeeded:
			return moved(TxFailed, "reverted")
		case look.deep():
			return mined(TxFinalized)
		case rules.Remined:
			c.Block = look.BlockHash
		}
	case TxFinalized:
		gone := !look.Mined || look.BlockHash != c.Block
		if rules.Remined {
			// Money out compares the families' spellings of a hash.
			gone = !look.Mined || !look.Succeeded || !SameBlock(look.BlockHash, c.Block)
		}
		if gone {
			return moved(TxReversed, "its block "+c.Block+" left the canonical chain after it was final")
		}
	}
	return ""
}
