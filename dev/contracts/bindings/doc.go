// Package bindings holds the abigen v2 Go bindings for the dev chain's
// contracts (contracts/DevUSDC.sol, contracts/DevPriceFeed.sol and
// contracts/DevMultisend.sol, the batch payer of the reconciliation run). They are
// generated from the committed artifacts in contracts/build so that building
// and testing need neither solc nor abigen; scripts/contracts.sh regenerates
// both after a contract changes. Do not edit the generated files by hand.
package bindings
