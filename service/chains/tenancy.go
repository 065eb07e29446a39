package chains

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/paymentsd/paymentsd/internal/btckeys"
	"github.com/paymentsd/paymentsd/internal/keys"
	"github.com/paymentsd/paymentsd/payment"
)

// Kinds of reconciliation finding between projects: what one project's
// records hold of another's addresses, stored before the checks that now
// refuse it (docs/security.md, "Tenant isolation of deposit keys"). They
// are reported, never repaired: the fix is a project owner's.
const (
	// FindingDepositKeyShared: a project environment's deposit key has the
	// identity (public key and chain code) of another's, or of one
	// another environment set first: both derive the same addresses.
	FindingDepositKeyShared = "deposit-key-shared"
	// FindingDepositAddressIsRecipient: a session's own deposit address
	// is a payment plan's recipient address, of its project or another.
	FindingDepositAddressIsRecipient = "deposit-address-is-recipient"
)

// tenantCollisions reports the deposit keys two project environments share
// and the deposit addresses that are a plan's recipient.
func (svc Service) tenantCollisions(ctx context.Context, o ReconcileOptions) ([]Finding, error) {
	// Every project's keys: a collision is between projects.
	counters, err := svc.Store.Chains().DepositCounters(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("load deposit keys: %w", err)
	}
	// A holder is a project environment's key for EVM networks (Chain
	// empty) or Bitcoin: the same account key as an environment's EVM and
	// Bitcoin key is one environment's own.
	type holder struct {
		ProjectID, Chain string
		IsLive           bool
	}
	byIdentity := map[string][]holder{}
	for _, c := range counters {
		// The identity is computed again, not read from the column: a row
		// written around SetDepositKey is found as well.
		k, err := keys.ParseKey(c.Xpub)
		if err != nil {
			continue // no address derives from it
		}
		byIdentity[k.Identity()] = append(byIdentity[k.Identity()], holder{ProjectID: c.ProjectID, IsLive: c.IsLive})
	}
	bitcoin, err := svc.Store.Chains().BitcoinKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("load Bitcoin keys: %w", err)
	}
	for _, b := range bitcoin {
		k, err := btckeys.ParseKey(b.Xpub, btckeys.Kind(b.AddressType))
		if err != nil {
			continue
		}
		byIdentity[k.Identity()] = append(byIdentity[k.Identity()], holder{ProjectID: b.ProjectID, IsLive: b.IsLive, Chain: " (Bitcoin)"})
	}
	ids := slices.Sorted(maps.Keys(byIdentity))
	claims, err := svc.Store.Chains().DepositKeyClaims(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("load deposit key claims: %w", err)
	}
	var out []Finding
	for _, id := range ids {
		holders := byIdentity[id]
		claim, claimed := claims[id]
		for _, c := range holders {
			if o.ProjectID != "" && c.ProjectID != o.ProjectID {
				continue
			}
			var others []string
			for _, h := range holders {
				if h.ProjectID != c.ProjectID || h.IsLive != c.IsLive {
					others = append(others, h.ProjectID+" "+payment.EnvironmentName(h.IsLive)+h.Chain)
				}
			}
			mine := claimed && claim.ProjectID == c.ProjectID && claim.IsLive == c.IsLive
			if len(others) == 0 && (mine || !claimed) {
				continue
			}
			detail := fmt.Sprintf("the %s deposit key%s (fingerprint %s) derives the same addresses as", payment.EnvironmentName(c.IsLive), c.Chain, id)
			if len(others) > 0 {
				detail += " the key of " + strings.Join(others, ", ")
			} else {
				detail += " a key " + claim.ProjectID + " " + payment.EnvironmentName(claim.IsLive) + " set before"
			}
			switch {
			case mine:
				detail += "; it was set here first"
			case claimed:
				detail += "; " + claim.ProjectID + " " + payment.EnvironmentName(claim.IsLive) + " set it first: this environment must set a key of its own"
			}
			f := Finding{Kind: FindingDepositKeyShared, ObjectID: c.ProjectID, Detail: detail}
			if o.Repair {
				f.Error = "not repaired: a project's owner replaces the key (docs/security.md, \"Tenant isolation of deposit keys\")"
			}
			out = append(out, f)
		}
	}
	recipients, err := svc.Store.Chains().RecipientCollisions(ctx, o.ProjectID)
	if err != nil {
		return out, fmt.Errorf("load recipient collisions: %w", err)
	}
	for _, r := range recipients {
		f := Finding{Kind: FindingDepositAddressIsRecipient, ObjectID: r.SessionID,
			Detail: fmt.Sprintf("its deposit address %s (%s %s) is the recipient address of payment plan %s (%s %s)",
				r.Address, r.SessionProjectID, payment.EnvironmentName(r.SessionIsLive), r.PlanID, r.PlanProjectID, payment.EnvironmentName(r.PlanIsLive))}
		if o.Repair {
			f.Error = "not repaired: a transfer to the address is both the session's and the plan's; settle it by hand (docs/security.md, \"Tenant isolation of deposit keys\")"
		}
		out = append(out, f)
	}
	return out, nil
}
