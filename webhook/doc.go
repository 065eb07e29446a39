// Package webhook holds the merchant-facing webhook primitives: signing
// secrets, Standard Webhooks signatures, encryption of secrets at rest, and an
// HTTP client that cannot be aimed at our own network.
//
// It deliberately has no database and no Temporal dependency: delivery
// workflows, storage and retries live elsewhere and build on these pieces.
//
// Signatures follow the Standard Webhooks specification
// (https://www.standardwebhooks.com) so that merchants can verify deliveries
// with any off-the-shelf Standard Webhooks library instead of code we ship.
package webhook
