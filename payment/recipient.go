package payment

import (
	"math/big"
	"strings"
	"time"
)

// ReservationGrace separates two holds of the same amount on the same
// (network, asset, recipient): an amount released at the end of a
// session's late-payment window is not handed out again before this has
// passed, and a transfer matches a hold mined up to this long before the
// hold began (a chain's clock behind the engine's). So the windows a
// transfer is matched in never overlap.
const ReservationGrace = 5 * time.Minute

// Reservation is the exact amount a session sharing a recipient address
// asks in one asset, held from the session's creation to the end of its
// late-payment window. Allocation keeps the holds of one amount on one
// (network, asset, recipient) apart (see ReservationGrace): a transfer of
// that amount to that recipient mined inside a hold is that session's,
// and no other's.
type Reservation struct {
	Session         Session
	Network         string
	AssetID         string
	Recipient       string // lowercase
	AmountBaseUnits string
	From, Until     time.Time
}

// holds reports whether the reservation takes a transfer of amount mined
// at minedAt.
func (r Reservation) holds(assetID, amount string, minedAt time.Time) bool {
	return r.AssetID == assetID && sameUnits(r.AmountBaseUnits, amount) &&
		!minedAt.Before(r.From.Add(-ReservationGrace)) && minedAt.Before(r.Until)
}

func sameUnits(a, b string) bool {
	x, ok1 := new(big.Int).SetString(a, 10)
	y, ok2 := new(big.Int).SetString(b, 10)
	return ok1 && ok2 && x.Cmp(y) == 0
}

// RecipientOwner is the project a shared recipient's transfers that match
// no hold are recorded for: the project that verified it in the
// environment (store.VerifyRecipient), none (ProjectID "") when no
// project did.
type RecipientOwner struct {
	ProjectID string
	IsLive    bool
}

// Recipients tells which session a transfer of one network pays.
type Recipients struct {
	// Deposit are sessions with a deposit address of their own.
	Deposit []Session
	// Reserved are the holds on shared recipients that may match the
	// transfers at hand.
	Reserved []Reservation
	// Shared are the shared recipients among the transfers' recipients
	// (lowercase), with their owners.
	Shared map[string]RecipientOwner
	// Asset describes an asset, for a transfer recorded for no session.
	Asset func(id string) (Asset, bool)
}

// SessionOf returns the session a transfer mined at minedAt pays, and
// whether the transfer is watched at all:
//
//   - to a session's own deposit address: that session, whatever the
//     amount;
//   - to a shared recipient: the session holding exactly that amount of
//     that asset when it was mined (only the owner's holds are given);
//     when none does, a session with no ID of the recipient's owner: the
//     transfer is recorded as unmatched, for the owner to assign by hand;
//     not recorded at all when no project owns the recipient. Never by
//     the recipient alone.
func (r Recipients) SessionOf(t Transfer, minedAt time.Time) (Session, bool) {
	to := strings.ToLower(t.To)
	for _, s := range r.Deposit {
		if strings.ToLower(s.DepositAddress) == to || s.BitcoinAddress != "" && strings.ToLower(s.BitcoinAddress) == to {
			return s, true
		}
	}
	owner, shared := r.Shared[to]
	if !shared {
		return Session{}, false
	}
	var best *Reservation
	for i, h := range r.Reserved {
		if h.Recipient == to && (owner.ProjectID == "" || h.Session.ProjectID == owner.ProjectID) && h.holds(t.AssetID, t.AmountBaseUnits, minedAt) && (best == nil || h.From.After(best.From)) {
			best = &r.Reserved[i]
		}
	}
	if best != nil {
		return best.Session, true
	}
	if owner.ProjectID == "" {
		// Nobody has proven control of the address: its unmatched
		// transfers are nobody's to see or assign.
		return Session{}, false
	}
	s := Session{ProjectID: owner.ProjectID, IsLive: owner.IsLive, DepositAddress: t.To}
	if r.Asset != nil {
		if a, ok := r.Asset(t.AssetID); ok {
			s.PaymentOptions = []PaymentOption{{AssetDefinitionID: a.ID, Network: a.Network, ChainID: a.ChainID,
				Symbol: a.Symbol, Decimals: a.Decimals, TokenAddress: a.TokenAddress}}
		}
	}
	return s, true
}

// NextFreeUnits returns the smallest amount of at least base units that is
// not among held (amounts in base units, any order): a session's unique
// amount on a shared recipient.
func NextFreeUnits(base string, held []string) string {
	b, ok := new(big.Int).SetString(base, 10)
	if !ok {
		return base
	}
	taken := map[string]bool{}
	for _, h := range held {
		if x, ok := new(big.Int).SetString(h, 10); ok {
			taken[x.String()] = true
		}
	}
	one := big.NewInt(1)
	for taken[b.String()] {
		b.Add(b, one)
	}
	return b.String()
}
