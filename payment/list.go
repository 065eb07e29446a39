package payment

import (
	"time"
)

// Pagination defaults and bounds.
const (
	DefaultPage  = 1
	DefaultLimit = 20
	MaxLimit     = 100
)

// ListQuery is a parsed list request: pagination and filters.
type ListQuery struct {
	Page   int
	Limit  int
	Status string
	// StatusIn keeps any of these statuses (the second shape's
	// completed: confirmed or finalized).
	StatusIn []string
	From     *time.Time
	To       *time.Time // exclusive upper bound
	IsLive   *bool
	// Network keeps one network's transactions (transactions list).
	Network string
	// Flagged keeps what needs the merchant: sessions with an exception
	// not resolved (exception=true), transfers unexpected and not assigned
	// (unexpected=true).
	Flagged bool
	// ObjectID keeps one object's events (events list).
	ObjectID string
}

// Offset is the number of rows before the page.
func (q ListQuery) Offset() int { return (q.Page - 1) * q.Limit }

// DepositQuery lists deposit addresses: a ListQuery, Funded keeps only
// the addresses with a confirmed or finalized transfer, and Chain picks
// the key whose addresses are listed: the EVM deposit key (ChainEVM, the
// default) or the Bitcoin account key (ChainBitcoin).
type DepositQuery struct {
	ListQuery
	Funded bool
	Chain  string
}

// The kinds of chain whose deposit addresses are listed apart, each from
// its own key.
const (
	ChainEVM     = "evm"
	ChainBitcoin = "bitcoin"
)
