package store

// The store's records by area. Each area is a view of the one Store (the
// same pool, replica and watched set), with the methods of its records;
// the Store itself keeps what every area shares: the pool, transactions,
// idempotency keys and the status counts of the metrics. A caller names
// the area it reads or writes: st.Checkout().CreateSession(...).

// Identity holds people: accounts, their sign-in sessions, passkeys and
// the account's security log.
type Identity struct{ *Store }

// Access holds who may do what: projects' members and invitations, API
// keys, OAuth clients, grants and tokens, and the audit log.
type Access struct{ *Store }

// Checkout holds what a merchant sets up and what a payer opens: projects,
// plans, deposit keys and addresses, shared recipients and their holds,
// checkout sessions and their workflows' starts.
type Checkout struct{ *Store }

// Payments holds money in: transactions, the transfers they record, their
// progress, and the exports and overview over them.
type Payments struct{ *Store }

// MoneyOut holds refunds, payouts and the outgoing transactions that pay
// them, Bitcoin's included.
type MoneyOut struct{ *Store }

// Webhooks holds endpoints, events, deliveries and the event feed, and the
// resealing of their secrets.
type Webhooks struct{ *Store }

// Chains holds what the engine read from the chains: scan progress,
// watched addresses, Bitcoin's scan, and finality's records.
type Chains struct{ *Store }

// Identity is the store's records of people.
func (s *Store) Identity() Identity { return Identity{s} }

// Access is the store's records of who may do what.
func (s *Store) Access() Access { return Access{s} }

// Checkout is the store's records of projects, plans and sessions.
func (s *Store) Checkout() Checkout { return Checkout{s} }

// Payments is the store's records of money in.
func (s *Store) Payments() Payments { return Payments{s} }

// MoneyOut is the store's records of refunds and payouts.
func (s *Store) MoneyOut() MoneyOut { return MoneyOut{s} }

// Webhooks is the store's records of endpoints, events and deliveries.
func (s *Store) Webhooks() Webhooks { return Webhooks{s} }

// Chains is the store's records of what was read from the chains.
func (s *Store) Chains() Chains { return Chains{s} }
