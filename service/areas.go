package service

// The service's operations by area. Each area is a view of the one Service
// (the same store, Temporal client, chains and clock) with the operations
// of its part of the product; the Service itself keeps what every area
// shares: idempotency keys, the asset catalog, workflow updates and the
// audit entry every change writes with it. A transport names the area it
// calls: svc.Checkout().CreateSession(...).

// Identity: accounts, sign-up and sign-in, sign-in sessions, passkeys,
// passwords and the account's security log.
type Identity struct{ *Service }

// Access: who may do what in a project: members and invitations, API
// keys, the principal of a request, OAuth applications and their grants,
// and the audit log.
type Access struct{ *Service }

// Checkout: projects, plans, deposit keys and addresses, shared
// recipients, and checkout sessions with their quotes.
type Checkout struct{ *Service }

// Payments: money in: transactions, a payer's submitted hash, assignment
// of a transfer to a session, the overview and exports.
type Payments struct{ *Service }

// MoneyOut: refunds, payouts, and the outgoing transactions that pay them.
type MoneyOut struct{ *Service }

// Webhooks: endpoints, events and deliveries.
type Webhooks struct{ *Service }

// Chains: the networks' readiness, rescans, and the reconciliation of the
// records with the chains, money in and out.
type Chains struct{ *Service }

// Identity is the service's operations on accounts and sign-in.
func (svc *Service) Identity() Identity { return Identity{svc} }

// Access is the service's operations on members, keys and applications.
func (svc *Service) Access() Access { return Access{svc} }

// Checkout is the service's operations on projects, plans and sessions.
func (svc *Service) Checkout() Checkout { return Checkout{svc} }

// Payments is the service's operations on money in.
func (svc *Service) Payments() Payments { return Payments{svc} }

// MoneyOut is the service's operations on refunds and payouts.
func (svc *Service) MoneyOut() MoneyOut { return MoneyOut{svc} }

// Webhooks is the service's operations on endpoints, events and deliveries.
func (svc *Service) Webhooks() Webhooks { return Webhooks{svc} }

// Chains is the service's operations on the networks and reconciliation.
func (svc *Service) Chains() Chains { return Chains{svc} }
