package chainwatch

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/sync/errgroup"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/paymentsd/paymentsd/internal/btckeys"
	"github.com/paymentsd/paymentsd/internal/nodetrust"
	"github.com/paymentsd/paymentsd/payment"
)

// Family is a chain family's side of the engine: everything the engine
// asks of a network that depends on how its chain works (EVM chains,
// Bitcoin), behind one interface, as BTCPay Server has one handler per
// payment method. Chain.Family returns a network's. The engine's side of
// a family (its scan, its rescan and its look at a transaction over the
// engine's records) is in package activities, registered under the same
// Kind; the workflows see neither, only the transfers and looks they
// return. A new family (Lightning, Tron, Solana) plugs in with a Family
// here, its dial in familyDialers, and its engine side in activities: no
// workflow changes (docs/decisions.md, "One chain-family interface").
type Family interface {
	// Kind names the family: the networks' configured kind (KindEVM,
	// KindBitcoin).
	Kind() string
	// Capabilities tells what the family's networks do.
	Capabilities() Capabilities
	// Head reads the network's head block number: readiness, and the
	// reconciliation's check that a network answers.
	Head(ctx context.Context) (uint64, error)
	// BlockHashes reads the canonical chain's block hashes at heights,
	// as the engine records them: the finality watch's check that the
	// blocks of finalized payments are still the chain's.
	BlockHashes(ctx context.Context, heights []uint64) (map[uint64]string, error)
	// ValidAddress tells whether s is an address on the network, as the
	// family writes it.
	ValidAddress(s string) bool
	// CheckAsset reports why an asset of the catalog cannot be one of
	// the network's (chains: the deployment's networks, for a price read
	// on another).
	CheckAsset(a payment.Asset, chains Chains) error
	// DeriveAddress is a session's deposit address at index of a
	// project's account key (xpub) of kind keyType, on a family whose
	// sessions' addresses derive from one (Capabilities.AccountKey).
	DeriveAddress(xpub, keyType string, index uint32) (string, error)
	// PayeeProblem says what is wrong with s as the address money out
	// pays on the network ("" when nothing is), for the field's error.
	PayeeProblem(s string) string
	// IsContract tells whether an address holds code (false on a family
	// without contracts): a refund's customer confirms such an address.
	IsContract(ctx context.Context, address string) (bool, error)
	// Nodes is what the engine believes of the network's nodes now: those
	// set aside (an answer failed a check, or they disagree with the
	// others), and whether they disagree with no majority (readiness).
	Nodes() nodetrust.Status
}

// Capabilities are what a family's networks do; the engine asks them
// instead of which family a network is of.
type Capabilities struct {
	// Rescan: an operator may scan a range of blocks again (Rescan). A
	// family whose scan keeps every payment it saw has no need.
	Rescan bool
	// Contracts: the network runs contracts, so an address may be one
	// (a recipient's proof is then checked with EIP-1271), tokens are
	// read from their contracts, and the reconciliation reads a
	// deposit key's addresses' nonces and balances there.
	Contracts bool
	// DepositKey: a session's deposit address derives from the project's
	// deposit key and is the same on every network of the family (the
	// reconciliation finds the key's used addresses on them).
	DepositKey bool
	// AccountKey: a session's address derives from the project's account
	// key of the environment (DeriveAddress), on the environment's one
	// network of the family.
	AccountKey bool
	// MoneyOut: refunds and payouts are sent and followed on the network
	// (their transactions read by package sentlook).
	MoneyOut bool
	// PriceFeeds: the network's Chainlink feeds may price assets, its own
	// or another network's.
	PriceFeeds bool
}

// ErrNotSupported is a family's answer to what its networks do not do.
var ErrNotSupported = errors.New("not supported on this network's family")

// Family returns the chain's family: the Bitcoin family for a chain read
// from Bitcoin nodes, else the EVM family.
func (c *Chain) Family() Family {
	if c.Bitcoin != nil {
		return bitcoinFamily{c}
	}
	return evmFamily{c}
}

// evmFamily is an EVM chain read through go-ethereum's JSON-RPC.
type evmFamily struct{ c *Chain }

func (evmFamily) Kind() string { return KindEVM }

func (evmFamily) Capabilities() Capabilities {
	return Capabilities{Rescan: true, Contracts: true, DepositKey: true, MoneyOut: true, PriceFeeds: true}
}

func (f evmFamily) Head(ctx context.Context) (uint64, error) { return f.c.Client.BlockNumber(ctx) }

func (f evmFamily) BlockHashes(ctx context.Context, heights []uint64) (map[uint64]string, error) {
	hashes := make([]common.Hash, len(heights))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(blockHashReads)
	for i, h := range heights {
		g.Go(func() error {
			// Checked as a scan checks a block (its number, its hash
			// recomputed where the chain's headers allow it): a node's
			// word that a finalized block left the chain reverses a
			// payment.
			hash, err := f.c.blockAt(gctx, f.c.Client, h)
			if errors.Is(err, ethereum.NotFound) {
				return nil // past the node's head: no block there now
			}
			if err != nil {
				return fmt.Errorf("block %d: %w", h, err)
			}
			hashes[i] = hash
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	out := make(map[uint64]string, len(heights))
	for i, h := range heights {
		if hashes[i] != (common.Hash{}) {
			out[h] = hashes[i].Hex()
		}
	}
	return out, nil
}

// blockHashReads bounds the reads of BlockHashes in flight at once.
const blockHashReads = 8

func (evmFamily) ValidAddress(s string) bool { return common.IsHexAddress(s) }

func (evmFamily) CheckAsset(payment.Asset, Chains) error { return nil }

func (evmFamily) DeriveAddress(string, string, uint32) (string, error) {
	return "", fmt.Errorf("an EVM session's address derives from the project's deposit key: %w", ErrNotSupported)
}

func (evmFamily) PayeeProblem(s string) string {
	if !common.IsHexAddress(s) {
		return "must be a 0x-prefixed 20-byte hex address"
	}
	return ""
}

func (f evmFamily) Nodes() nodetrust.Status {
	if n, ok := f.c.Client.(interface{ Nodes() nodetrust.Status }); ok {
		return n.Nodes()
	}
	return nodetrust.Status{Nodes: 1}
}

func (f evmFamily) IsContract(ctx context.Context, address string) (bool, error) {
	var code hexutil.Bytes
	err := f.c.Client.Call(ctx, &code, "eth_getCode", common.HexToAddress(address), "latest")
	return len(code) > 0, err
}

// bitcoinFamily is a Bitcoin network read from Bitcoin Core or btcd nodes.
type bitcoinFamily struct{ c *Chain }

func (bitcoinFamily) Kind() string { return KindBitcoin }

func (bitcoinFamily) Capabilities() Capabilities {
	// Its scan keeps every payment it saw (the mempool's and the
	// blocks'), so there is nothing to rescan.
	return Capabilities{AccountKey: true, MoneyOut: true}
}

func (f bitcoinFamily) Head(ctx context.Context) (uint64, error) {
	h, err := f.c.Bitcoin.BlockCount(ctx)
	return uint64(max(h, 0)), err
}

func (f bitcoinFamily) BlockHashes(ctx context.Context, heights []uint64) (map[uint64]string, error) {
	out := make(map[uint64]string, len(heights))
	for _, h := range heights {
		hash, err := f.c.Bitcoin.BlockHash(ctx, int64(h))
		if err != nil {
			return nil, fmt.Errorf("block %d: %w", h, err)
		}
		out[h] = hash.String()
	}
	return out, nil
}

func (f bitcoinFamily) ValidAddress(s string) bool {
	a, err := btcutil.DecodeAddress(s, f.c.Params)
	return err == nil && a.IsForNet(f.c.Params)
}

func (f bitcoinFamily) CheckAsset(a payment.Asset, chains Chains) error {
	feed := chains[a.Price.Network]
	switch {
	case !a.Native() || a.Decimals != 8:
		return fmt.Errorf("asset %q: a Bitcoin network's asset is bitcoin: no tokenAddress, 8 decimals", a.ID)
	case a.Price.Kind != payment.PriceChainlink || a.Price.Network == "":
		return fmt.Errorf("asset %q: bitcoin's price is a chainlink feed read on an EVM network (priceSource.network)", a.ID)
	case feed != nil && !feed.Family().Capabilities().PriceFeeds:
		return fmt.Errorf("asset %q: its price feed's network %q is not an EVM network", a.ID, a.Price.Network)
	}
	return nil
}

func (f bitcoinFamily) DeriveAddress(xpub, keyType string, index uint32) (string, error) {
	key, err := btckeys.ParseKey(xpub, btckeys.Kind(keyType))
	if err != nil {
		return "", err
	}
	addr, err := key.DeriveAddress(index, f.c.Params)
	if err != nil {
		return "", err
	}
	return addr.EncodeAddress(), nil
}

func (f bitcoinFamily) PayeeProblem(s string) string {
	_, problem := payment.CheckBitcoinPayee(s, f.c.Params)
	return problem
}

func (bitcoinFamily) IsContract(context.Context, string) (bool, error) { return false, nil }

func (f bitcoinFamily) Nodes() nodetrust.Status { return f.c.Bitcoin.Nodes() }
