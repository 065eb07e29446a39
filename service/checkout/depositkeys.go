package checkout

import (
	"context"
	"fmt"

	"github.com/paymentsd/paymentsd/internal/keys"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/service/internal/core"
)

// SetDepositKeyAs sets the deposit key of the principal's environment
// (owners) and returns it as the principal reads it.
func (svc Service) SetDepositKeyAs(ctx context.Context, p payment.Principal, projectID, xpub string) (DepositKeyInfo, error) {
	if err := core.CanManageKeys(p, projectID); err != nil {
		return DepositKeyInfo{}, err
	}
	if err := svc.SetDepositKey(ctx, projectID, p.IsLive, xpub); err != nil {
		return DepositKeyInfo{}, err
	}
	return svc.DepositKey(ctx, p, projectID)
}

// DepositKeyInfo is an environment's deposit key as a principal reads it.
// The key itself derives every address the project has handed out or
// will, and, an account key of the merchant's wallet, every other
// address of that account: it is shown to an owner signed in to the
// dashboard only (payment.Principal.CanManageKeys), who may replace it
// anyway; everyone else (other members, API keys, OAuth applications)
// reads its fingerprint and first address.
type DepositKeyInfo struct {
	// Xpub is the key as it was set; "" when none is set or the principal
	// may not read it.
	Xpub string
	// Fingerprint is the key's identity (keys.Key.Identity); "" when
	// none is set.
	Fingerprint string
	// FirstAddress is <key>/0/0, for a wallet to confirm the key; "" when
	// none is set.
	FirstAddress string
	// Issued is how many addresses the environment has handed out.
	Issued int64
}

// DepositKey returns the principal's environment's deposit key as the
// principal may read it (DepositKeyInfo).
func (svc Service) DepositKey(ctx context.Context, p payment.Principal, projectID string) (DepositKeyInfo, error) {
	if err := core.Owns(p, projectID); err != nil {
		return DepositKeyInfo{}, err
	}
	xpub, issued, err := svc.Store.Chains().DepositKey(ctx, projectID, p.IsLive)
	if err != nil || xpub == "" {
		return DepositKeyInfo{Issued: issued}, err
	}
	key, err := keys.ParseKey(xpub)
	if err != nil {
		return DepositKeyInfo{}, fmt.Errorf("deposit key of %s: %w", projectID, err)
	}
	first, err := key.DeriveAddress(0)
	if err != nil {
		return DepositKeyInfo{}, err
	}
	info := DepositKeyInfo{Fingerprint: key.Identity(), FirstAddress: first.Hex(), Issued: issued}
	if p.CanManageKeys() {
		info.Xpub = xpub
	}
	return info, nil
}
