package payment

import (
	"slices"
	"time"

	"github.com/shopspring/decimal"
)

// StatusChange is one entry of a transaction's status history.
type StatusChange struct {
	Status TransactionStatus `json:"status"`
	At     time.Time         `json:"at"`
	Reason string            `json:"reason,omitempty"`
}

// Transaction is one on-chain transfer to a checkout session's deposit
// address.
type Transaction struct {
	ID                    string
	ProjectID             string
	CheckoutSessionID     string
	PaymentPlanID         string
	IsLive                bool
	Status                TransactionStatus
	Network               string
	ChainID               int64
	TxHash                string
	LogIndex              int
	FromAddress           string
	ToAddress             string
	AssetDefinitionID     string
	Symbol                string
	Amount                string
	AmountBaseUnits       string
	AmountUSD             decimal.Decimal
	BlockNumber           *int64
	BlockHash             string
	Confirmations         int
	RequiredConfirmations int
	FailureReason         string
	// Unexpected marks a transfer to the deposit address of a session that
	// no longer took payments: recorded, counted for no session.
	Unexpected bool
	// AssignedSessionID is the session the merchant assigned an
	// unexpected transfer to, which counts it (Assign).
	AssignedSessionID string
	StatusHistory     []StatusChange
	// Version counts the transaction's recorded changes, starting at 1.
	Version     int
	CreatedAt   time.Time
	UpdatedAt   time.Time
	ConfirmedAt *time.Time
	FinalizedAt *time.Time
	FailedAt    *time.Time
}

// Project is a merchant's project with its settings.
type Project struct {
	ID                           string
	Name                         string
	CompleteOn                   TransactionStatus
	UnderpaymentTolerancePercent decimal.Decimal
	LatePaymentWindow            time.Duration
	// SessionLifetime is how long the project's checkout sessions stay
	// open; zero: the deployment's.
	SessionLifetime time.Duration
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// Principal is who a request acts for: a project in one environment, by
// an API key (KeyID), by a signed-in member (UserID, Role, SessionID) or
// by an application a member authorized (UserID, Role, GrantID, ClientID,
// Scopes).
type Principal struct {
	ProjectID string
	IsLive    bool
	KeyID     string
	UserID    string
	Role      Role
	SessionID string
	GrantID   string
	ClientID  string
	Scopes    []string
}

// HasScope says whether the principal may act within scope: every
// principal but an OAuth access token may; a token only within its
// granted scopes.
func (p Principal) HasScope(scope string) bool {
	return p.GrantID == "" || slices.Contains(p.Scopes, scope)
}

// CanWrite says whether the principal may change the project's records:
// an API key or a member above viewer.
func (p Principal) CanWrite() bool {
	return p.UserID == "" || p.Role == RoleOwner || p.Role == RoleDeveloper
}

// CanManageKeys says whether the principal may manage the project's API
// keys and members: owners only, never an API key.
func (p Principal) CanManageKeys() bool {
	return p.UserID != "" && p.GrantID == "" && p.Role == RoleOwner
}
