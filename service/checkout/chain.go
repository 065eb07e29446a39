package checkout

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/internal/keys"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store"
)

// depositAddress derives a session's deposit address at the index taken
// of its project's deposit key for the environment, and returns it with
// its index.
func (svc Service) depositAddress(ctx context.Context, projectID string, isLive bool, xpub string, index int64) (string, *int64, error) {
	key, err := keys.ParseKey(xpub)
	if err != nil {
		return "", nil, fmt.Errorf("deposit key of %s: %w", projectID, err)
	}
	// An address that is a verified recipient (of any project) is never a
	// session's deposit address: its transfers would be the session's. Its
	// index is skipped; the next is taken.
	for skipped := 0; ; skipped++ {
		addr, err := key.DeriveAddress(uint32(index))
		if err != nil {
			return "", nil, err
		}
		taken, err := svc.Store.Checkout().IsVerifiedRecipient(ctx, addr.Hex())
		if err != nil {
			return "", nil, fmt.Errorf("deposit address: %w", err)
		}
		if !taken {
			return addr.Hex(), &index, nil
		}
		slog.WarnContext(ctx, "deposit address skipped: it is a verified recipient, so whoever verified it holds this deposit key",
			"project", projectID, "index", index, "address", addr.Hex())
		if skipped >= 16 {
			return "", nil, fmt.Errorf("deposit address: %d derived addresses in a row are verified recipients", skipped+1)
		}
		if _, index, err = svc.Store.Chains().NextDepositIndex(ctx, projectID, isLive); err != nil {
			return "", nil, fmt.Errorf("deposit index: %w", err)
		}
	}
}

// Rate is an asset's USD price for a quote; ok is false when it cannot be
// had now (no chain configured for a price feed, or the feed failing), and
// the asset is then left out of the session's options.
func (svc Service) Rate(ctx context.Context, a payment.Asset) (decimal.Decimal, bool) {
	if a.Price.Kind == payment.PriceUSDPegged {
		return decimal.NewFromInt(1), true
	}
	if svc.Chains[a.Network] == nil {
		return decimal.Decimal{}, false // not offered: its network is not served
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	r, err := chainwatch.Rate(ctx, svc.Chains, a, svc.Now())
	if err != nil {
		slog.WarnContext(ctx, "price feed unavailable", "asset", a.ID, "err", err)
		return decimal.Decimal{}, false
	}
	return r, true
}

// depositAddressesChecked is how many of a key's first addresses
// SetDepositKey looks up among other environments' sessions.
const depositAddressesChecked = 5

// SetDepositKey sets a project's extended public key for an environment.
// A key is known by its identity (keys.Key.Identity: its public key
// and chain code, what derives its addresses), not by its string: one
// whose identity another project, or the project's other environment, has
// ever set derives that one's addresses and is refused (409), whatever
// its version, depth, parent fingerprint or child number. So is one whose
// first addresses another environment's sessions hold (a key replaced
// before identities were recorded).
func (svc Service) SetDepositKey(ctx context.Context, projectID string, isLive bool, xpub string) error {
	key, err := keys.ParseKey(xpub)
	if err != nil {
		var probs payment.Problems
		probs.Add("xpub", err.Error())
		return probs.Err()
	}
	if _, err := svc.Store.Checkout().GetProject(ctx, projectID); err != nil {
		return err
	}
	// A key replaced before identities were recorded (migration 00022)
	// is known by its addresses: the first ones, held by another
	// environment's sessions, are its.
	var first []string
	for i := range uint32(depositAddressesChecked) {
		a, err := key.DeriveAddress(i)
		if err != nil {
			return err
		}
		first = append(first, a.Hex())
	}
	_, held, err := svc.Store.Chains().DepositAddressHolder(ctx, projectID, isLive, first)
	switch {
	case err != nil:
		return fmt.Errorf("deposit addresses: %w", err)
	case held:
		err = payment.ErrConflict
	default:
		// The key reveals every address it derives: the log names it by
		// its ends and its fingerprint only.
		err = svc.Audited(ctx, projectID, isLive, payment.AuditDepositKeySet, "deposit_key", projectID,
			map[string]any{"xpub": xpub[:12] + "…" + xpub[len(xpub)-6:], "fingerprint": key.Identity()},
			func(ctx context.Context) error {
				return svc.Store.Chains().SetDepositKey(ctx, projectID, isLive, xpub, key.Identity(), svc.Now())
			})
	}
	if errors.Is(err, payment.ErrConflict) {
		return payment.Conflict("This deposit key derives the addresses of a key another project or environment has set " +
			"(the same public key and chain code, whatever its version, depth, parent fingerprint or child number): " +
			"give each project environment a key of its own, e.g. another account (m/44'/60'/1')")
	}
	return err
}

// bitcoinFamily is the Bitcoin network of an environment, which derives
// its sessions' addresses; nil when none is configured.
func (svc Service) bitcoinFamily(isLive bool) chainwatch.Family {
	var family chainwatch.Family
	for _, c := range svc.Chains {
		if f := c.Family(); f.Capabilities().AccountKey && c.Network.IsLive == isLive {
			family = f
		}
	}
	return family
}

// missingKey says which key a session's project lacks, as the field
// error a merchant reads; other errors are the store's.
func (svc Service) missingKey(err error, isLive bool) error {
	var probs payment.Problems
	switch {
	case errors.Is(err, store.ErrNoDepositKey):
		probs.Add("paymentPlanId", "the plan's project has no deposit key for "+environment(isLive)+
			" (POST …/deposit-key, or paymentsd admin set-deposit-key)")
	case errors.Is(err, store.ErrNoBitcoinKey):
		probs.Add("paymentPlanId", "the plan's project has no Bitcoin account key for "+environment(isLive)+
			" (POST …/bitcoin-deposit-key, or paymentsd admin set-deposit-key --bitcoin)")
	default:
		return fmt.Errorf("address indexes: %w", err)
	}
	return probs.Err()
}
