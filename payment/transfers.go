package payment

import (
	"cmp"
	"slices"
	"strings"
	"time"
)

// Log indexes that are not a log's.
const (
	// LogIndexNative is the log index of a transfer of the chain's own
	// coin, which has no log.
	LogIndexNative = -1
	// LogIndexClaim marks a claim: a transaction hash the payer submitted
	// to a session, whose transfers are not known yet (it is not mined).
	LogIndexClaim = -2
)

// IsClaim reports whether t is a payer's claim that no transfer has
// matched yet.
func (t Transaction) IsClaim() bool { return t.LogIndex == LogIndexClaim }

// Transfer is one movement of value in an on-chain transaction: a token's
// Transfer log, or the chain's coin sent by the transaction itself. Its
// identity is the chain, the transaction hash and the log index.
type Transfer struct {
	LogIndex        int
	From, To        string
	AssetID         string
	AmountBaseUnits string
}

// Observation is what the workflow of one on-chain transaction learnt from
// the chain, and the status it moves the transaction to.
type Observation struct {
	Network string
	ChainID int64
	TxHash  string
	// Status is the transaction's status after this observation; Reason
	// says why, for failed and for the way back to pending.
	Status                               TransactionStatus
	Reason                               string
	Mined, Succeeded                     bool
	BlockNumber                          *int64
	BlockHash                            string
	Confirmations, RequiredConfirmations int
	// Transfers are those of the receipt, when mined and succeeded; a
	// Bitcoin transaction's outputs to watched addresses, from the
	// mempool on.
	Transfers []Transfer
	// InternalUnknown says the native coin the transaction's internal calls
	// moved could not be read this time: records of such transfers stand.
	InternalUnknown bool
	// BlockTime is when the transaction's block was mined (zero when it
	// is not): a transfer mined while its session took payments counts,
	// however late it is seen.
	BlockTime time.Time
	At        time.Time
}

// TxChange is one change to the records of a transaction: the record as
// it is after the change, with its version, and the event it makes ("" for
// none: a confirmation count, or a log index a reorg moved).
type TxChange struct {
	Insert      bool
	Transaction Transaction
	Event       EventType
}

// Claim is a payer's claim that a transaction hash pays a session: a
// pending record with no transfer yet.
func Claim(s Session, network string, chainID int64, txHash, id string, at time.Time) Transaction {
	return Transaction{ID: id, ProjectID: s.ProjectID, CheckoutSessionID: s.ID, PaymentPlanID: s.PaymentPlanID,
		IsLive: s.IsLive, Status: TxPending, Network: network, ChainID: chainID, TxHash: strings.ToLower(txHash),
		LogIndex: LogIndexClaim, ToAddress: s.DepositAddress, Amount: "0", AmountBaseUnits: "0",
		StatusHistory: []StatusChange{{Status: TxPending, At: at}}, Version: 1, CreatedAt: at, UpdatedAt: at}
}

// TakesPayments reports whether a session counts a transfer first seen
// at: while it is open or processing, and until the end of its
// late-payment window.
func (s Session) TakesPayments(at time.Time) bool {
	return s.Status == SessionOpen || s.Status == SessionProcessing || at.Before(s.LateUntil)
}

// Option returns the session's payment option for an asset.
func (s Session) Option(assetID string) (PaymentOption, bool) {
	for _, o := range s.PaymentOptions {
		if o.AssetDefinitionID == assetID {
			return o, true
		}
	}
	return PaymentOption{}, false
}

// MatchTransfers decides how the records of one on-chain transaction
// follow an observation of it. These are the matching rules:
//
//   - A transfer belongs to the session recipients names for it
//     (Recipients.SessionOf: the session whose deposit address it pays, or
//     on a shared recipient the session holding its exact amount), never to
//     the session that reported the hash. Every such transfer is counted,
//     once: it is recorded once per chain, hash and log index.
//   - A transfer to a shared recipient that no session holds is recorded
//     as unexpected for the recipient's project, with no session.
//   - A transfer to a session that no longer takes payments, neither when
//     it was mined nor when it is first seen, is recorded as unexpected (it
//     counts for no session; the merchant sees it and settles it with the
//     payer) and returned in unexpected.
//   - A claim (a hash the payer submitted) becomes the first transfer of
//     that transaction to its session; a mined transaction that pays the
//     claiming session nothing fails the claim ("pays nothing to this
//     session", or "reverted"), and records nothing else for that session.
//   - A Bitcoin transaction's transfers are known from the mempool on
//     (Transfers of an observation not mined): they are recorded pending,
//     and confirmed when it is mined.
//   - A reorg can mine the transaction again at other log indexes: a
//     recorded transfer is the same transfer when it pays the same session
//     the same asset at the same rank in the transaction.
//   - Every record not yet final follows the transaction's status.
func MatchTransfers(rows []Transaction, obs Observation, recipients Recipients, newID func() string) (changes []TxChange, unexpected []Transfer) {
	type rank struct {
		session, asset string
		n              int
	}
	ranks := map[[2]string]int{}
	rankOf := func(session, asset string) rank {
		k := [2]string{session, asset}
		r := rank{session, asset, ranks[k]}
		ranks[k]++
		return r
	}
	// The recorded transfers, by rank.
	recorded := map[rank]int{}
	var order []int
	for i := range rows {
		if !rows[i].IsClaim() {
			order = append(order, i)
		}
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(rows[a].LogIndex, rows[b].LogIndex) })
	for _, i := range order {
		recorded[rankOf(rows[i].CheckoutSessionID, rows[i].AssetDefinitionID)] = i
	}
	clear(ranks)

	m := matcher{obs: obs}
	matched := make([]bool, len(rows))
	// A Bitcoin transaction's transfers are known before it is mined: they
	// are recorded pending from the mempool on.
	known := obs.Mined && obs.Succeeded || !obs.Mined && len(obs.Transfers) > 0
	if known {
		transfers := slices.Clone(obs.Transfers)
		slices.SortFunc(transfers, func(a, b Transfer) int { return cmp.Compare(a.LogIndex, b.LogIndex) })
		for _, t := range transfers {
			s, ok := recipients.SessionOf(t, obs.BlockTime)
			if !ok {
				continue
			}
			r := rankOf(s.ID, t.AssetID)
			if i, ok := recorded[r]; ok {
				matched[i] = true
				row := rows[i]
				row.LogIndex = t.LogIndex
				m.follow(row, rows[i].LogIndex != t.LogIndex, obs.Reason)
				continue
			}
			claim := slices.IndexFunc(rows, func(c Transaction) bool {
				return c.IsClaim() && c.Status == TxPending && c.CheckoutSessionID == s.ID && s.ID != ""
			})
			if claim >= 0 && !matched[claim] {
				matched[claim] = true
				m.follow(transferRecord(rows[claim], s, obs, t), true, obs.Reason)
				continue
			}
			takes := s.TakesPayments(obs.At) || !obs.BlockTime.IsZero() && s.TakesPayments(obs.BlockTime)
			if !takes {
				unexpected = append(unexpected, t)
			}
			status, event := TxConfirmed, EventTxConfirmed
			if !obs.Mined {
				status, event = TxPending, EventTxPending
			}
			row := transferRecord(Transaction{ID: newID(), Status: status, Version: 1, Unexpected: !takes,
				StatusHistory: []StatusChange{{Status: status, At: obs.At}}, CreatedAt: obs.At}, s, obs, t)
			m.changes = append(m.changes, TxChange{Insert: true, Transaction: m.withBlock(row), Event: event})
			m.follow(m.changes[len(m.changes)-1].Transaction, false, obs.Reason)
		}
	}
	for i, row := range rows {
		if matched[i] || row.Status.Terminal() && AdvanceTransaction(row.Status, obs.Status) != nil {
			continue // final, unless a reorg past finality took it, or it returns
		}
		switch {
		case obs.InternalUnknown && row.LogIndex < LogIndexClaim:
			m.follow(row, false, obs.Reason) // an internal transfer not read this time
		case row.IsClaim() && obs.Mined && obs.Succeeded:
			m.advance(row, TxFailed, "pays nothing to this session")
		case row.IsClaim() && obs.Mined:
			m.advance(row, TxFailed, "reverted")
		case obs.Mined && obs.Succeeded && (row.Status == TxPending || row.Status == TxReversed):
			m.advance(row, TxFailed, "no longer pays this session")
		default:
			m.follow(row, false, obs.Reason)
		}
	}
	return m.changes, unexpected
}

// transferRecord fills a record with a transfer to session s.
func transferRecord(row Transaction, s Session, obs Observation, t Transfer) Transaction {
	row.ProjectID, row.CheckoutSessionID, row.PaymentPlanID, row.IsLive = s.ProjectID, s.ID, s.PaymentPlanID, s.IsLive
	row.Network, row.ChainID, row.TxHash = obs.Network, obs.ChainID, strings.ToLower(obs.TxHash)
	row.LogIndex, row.FromAddress, row.ToAddress = t.LogIndex, t.From, t.To
	row.AssetDefinitionID, row.AmountBaseUnits, row.Amount, row.Symbol = t.AssetID, t.AmountBaseUnits, "0", ""
	if o, ok := s.Option(t.AssetID); ok {
		row.Symbol, row.Amount = o.Symbol, UnitsToAmount(t.AmountBaseUnits, o.Decimals)
	}
	row.AmountUSD = LineUSD(s, PaymentLine{AssetID: t.AssetID, AmountBaseUnits: t.AmountBaseUnits})
	row.UpdatedAt = obs.At
	return row
}

type matcher struct {
	obs     Observation
	changes []TxChange
}

func (m *matcher) withBlock(row Transaction) Transaction {
	row.BlockNumber, row.BlockHash = m.obs.BlockNumber, m.obs.BlockHash
	row.Confirmations, row.RequiredConfirmations = m.obs.Confirmations, m.obs.RequiredConfirmations
	if row.Status == TxConfirmed && row.ConfirmedAt == nil {
		at := m.obs.At
		row.ConfirmedAt = &at
	}
	return row
}

// follow moves a record to the transaction's status, through confirmed
// when the transaction went from pending to finalized between two looks;
// changed records a change of its transfer even with no status change.
func (m *matcher) follow(row Transaction, changed bool, reason string) {
	to := m.obs.Status
	steps := []TransactionStatus{to}
	if (row.Status == TxPending || row.Status == TxReversed) && to == TxFinalized {
		steps = []TransactionStatus{TxConfirmed, TxFinalized}
	}
	moved := false
	for _, s := range steps {
		if row.Status == s || AdvanceTransaction(row.Status, s) != nil {
			continue
		}
		row = m.advance(row, s, reason)
		moved = true
	}
	if moved {
		return
	}
	if next := m.withBlock(row); changed || next.Confirmations != row.Confirmations || next.BlockHash != row.BlockHash {
		next.UpdatedAt = m.obs.At
		m.changes = append(m.changes, TxChange{Transaction: next})
	}
}

// advance records one status transition of a record, with its event.
func (m *matcher) advance(row Transaction, to TransactionStatus, reason string) Transaction {
	event := TransactionEvent(row.Status, to)
	at := m.obs.At
	row.Status, row.Version, row.UpdatedAt = to, row.Version+1, at
	row.StatusHistory = append(slices.Clone(row.StatusHistory), StatusChange{Status: to, At: at, Reason: reason})
	row = m.withBlock(row)
	switch to {
	case TxConfirmed:
		row.ConfirmedAt = &at
	case TxFinalized:
		row.FinalizedAt = &at
	case TxFailed:
		row.FailedAt, row.FailureReason = &at, reason
	}
	m.changes = append(m.changes, TxChange{Transaction: row, Event: event})
	return row
}
