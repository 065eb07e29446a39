package checkout

import (
	"context"
	"errors"
	"fmt"

	"github.com/btcsuite/btcd/chaincfg"

	"github.com/paymentsd/paymentsd/internal/btckeys"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service/internal/core"
)

// BitcoinKeyInfo is an environment's Bitcoin account key as a principal
// reads it: as DepositKeyInfo, with the kind of address it derives.
type BitcoinKeyInfo struct {
	DepositKeyInfo
	// AddressType is btckeys.SegWit (BIP84) or btckeys.Taproot (BIP86);
	// "" when no key is set.
	AddressType btckeys.Kind
}

// bitcoinParams is the Bitcoin network an environment's addresses are
// written for: mainnet for live, testnet for the sandbox (signet writes
// them the same way, tb1…; regtest's bcrt1… carry the same program).
func bitcoinParams(isLive bool) *chaincfg.Params {
	if isLive {
		return &chaincfg.MainNetParams
	}
	return &chaincfg.TestNet3Params
}

// SetBitcoinKeyAs sets the Bitcoin account key of the principal's
// environment (owners, SetBitcoinKey) and returns it as the principal
// reads it.
func (svc Service) SetBitcoinKeyAs(ctx context.Context, p payment.Principal, projectID, xpub, addressType string) (BitcoinKeyInfo, error) {
	if err := core.CanManageKeys(p, projectID); err != nil {
		return BitcoinKeyInfo{}, err
	}
	if err := svc.SetBitcoinKey(ctx, projectID, p.IsLive, xpub, addressType); err != nil {
		return BitcoinKeyInfo{}, err
	}
	return svc.BitcoinKey(ctx, p, projectID)
}

// SetBitcoinKey sets a project's Bitcoin account key for an environment.
// addressType is btckeys.SegWit or btckeys.Taproot, empty for what the
// key names (btckeys.ParseKey). The live environment takes a mainnet key
// (zpub, xpub), the sandbox a test network's (vpub, tpub): a wallet shows
// the addresses of its own network only. The key's identity is claimed as
// an EVM key's is (SetDepositKey), in the same space: an account key
// another project environment has set, for either chain, is refused (409).
func (svc Service) SetBitcoinKey(ctx context.Context, projectID string, isLive bool, xpub, addressType string) error {
	var probs payment.Problems
	kind := btckeys.Kind(addressType)
	if kind != "" && kind != btckeys.SegWit && kind != btckeys.Taproot {
		probs.Add("addressType", fmt.Sprintf("must be %s (native SegWit, BIP84) or %s (Taproot, BIP86)", btckeys.SegWit, btckeys.Taproot))
		return probs.Err()
	}
	key, err := btckeys.ParseKey(xpub, kind)
	switch {
	case err != nil:
		probs.Add("xpub", err.Error())
	case isLive && !key.Mainnet:
		probs.Add("xpub", "a test network's key (vpub…, tpub…) was given to the live environment: give the mainnet account key (zpub…, or xpub… for Taproot)")
	case !isLive && key.Mainnet:
		probs.Add("xpub", "a mainnet key (zpub…, xpub…) was given to the sandbox: give the test network account key (vpub…, or tpub… for Taproot), m/84'/1'/0'")
	}
	if err := probs.Err(); err != nil {
		return err
	}
	if _, err := svc.Store.Checkout().GetProject(ctx, projectID); err != nil {
		return err
	}
	err = svc.Audited(ctx, projectID, isLive, payment.AuditBitcoinKeySet, "bitcoin_deposit_key", projectID,
		map[string]any{"xpub": xpub[:12] + "…" + xpub[len(xpub)-6:], "fingerprint": key.Identity(), "addressType": string(key.Kind)},
		func(ctx context.Context) error {
			return svc.Store.Chains().SetBitcoinKey(ctx, projectID, isLive, xpub, string(key.Kind), key.Identity(), svc.Now())
		})
	if errors.Is(err, payment.ErrConflict) {
		return payment.Conflict("This key derives the addresses of a key another project or environment has set, " +
			"for Bitcoin or an EVM network (the same public key and chain code, whatever its version, depth, parent fingerprint or child number): " +
			"give each project environment an account of its own, e.g. m/84'/0'/1'")
	}
	return err
}

// BitcoinKey returns the principal's environment's Bitcoin account key as
// the principal may read it (DepositKeyInfo): the key itself to an owner
// signed in to the dashboard, its fingerprint and first address to
// everyone of the project.
func (svc Service) BitcoinKey(ctx context.Context, p payment.Principal, projectID string) (BitcoinKeyInfo, error) {
	if err := core.Owns(p, projectID); err != nil {
		return BitcoinKeyInfo{}, err
	}
	xpub, addressType, issued, err := svc.Store.Chains().BitcoinKey(ctx, projectID, p.IsLive)
	if err != nil || xpub == "" {
		return BitcoinKeyInfo{DepositKeyInfo: DepositKeyInfo{Issued: issued}}, err
	}
	key, err := btckeys.ParseKey(xpub, btckeys.Kind(addressType))
	if err != nil {
		return BitcoinKeyInfo{}, fmt.Errorf("bitcoin key of %s: %w", projectID, err)
	}
	first, err := key.DeriveAddress(0, bitcoinParams(p.IsLive))
	if err != nil {
		return BitcoinKeyInfo{}, err
	}
	info := BitcoinKeyInfo{DepositKeyInfo: DepositKeyInfo{Fingerprint: key.Identity(), FirstAddress: first.EncodeAddress(), Issued: issued},
		AddressType: key.Kind}
	if p.CanManageKeys() {
		info.Xpub = xpub
	}
	return info, nil
}
