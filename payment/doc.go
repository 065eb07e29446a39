// Package payment is the domain of the payment engine: identifiers, money,
// statuses and their allowed transitions, and validation of what merchants
// and customers send. It does no I/O and imports nothing of the engine, so
// every other package can depend on it.
package payment
