package checkout

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/paymentsd/paymentsd/internal/evmrpc"
	"github.com/paymentsd/paymentsd/service/internal/core"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/store"
)

// recipientAddress reads an address of the API: 0x and 40 hex digits,
// lowercase, uppercase or checksummed; never the zero address.
func recipientAddress(field, s string) (string, error) {
	a, msg := payment.CheckAddress(s)
	if msg == "" && a == payment.ZeroAddress {
		msg = "must not be the zero address"
	}
	if msg != "" {
		var probs payment.Problems
		probs.Add(field, msg)
		return "", probs.Err()
	}
	return a, nil
}

// ClaimRecipient starts a project's proof that it controls an address, to
// pay its second-shape plans to: it returns the claim with the challenge
// to sign (within payment.RecipientChallengeTTL), or the recipient as it
// is when the project has verified it already. Owners only. host names the
// deployment in the challenge.
func (svc Service) ClaimRecipient(ctx context.Context, p payment.Principal, projectID, address, host string) (payment.Recipient, error) {
	if err := core.CanManageKeys(p, projectID); err != nil {
		return payment.Recipient{}, err
	}
	a, err := recipientAddress("address", address)
	if err != nil {
		return payment.Recipient{}, err
	}
	now := svc.Now()
	nonce := make([]byte, 16)
	_, _ = rand.Read(nonce)
	expires := now.Add(payment.RecipientChallengeTTL)
	r := payment.Recipient{ProjectID: projectID, IsLive: p.IsLive, Address: a, CreatedAt: now, ChallengeExpiresAt: expires,
		Challenge: payment.RecipientChallenge(host, projectID, p.IsLive, a, hex.EncodeToString(nonce), now, expires)}
	var out payment.Recipient
	err = svc.Store.InTx(ctx, func(ctx context.Context) (err error) {
		if out, err = svc.Store.Checkout().ClaimRecipient(ctx, r); err != nil || out.Verified() {
			return err // a verified recipient is answered as it is: nothing changed
		}
		return svc.AuditIn(ctx, projectID, p.IsLive, payment.AuditRecipientClaimed, "recipient", a, map[string]any{"address": a})
	})
	if err != nil {
		return out, claimErr(err)
	}
	return out, nil
}

func claimErr(err error) error {
	switch {
	case errors.Is(err, store.ErrRecipientOwned):
		return payment.Conflict("Another project has verified this address as its recipient in this environment: " +
			"an address belongs to one project per environment")
	case errors.Is(err, store.ErrRecipientIsDeposit):
		var probs payment.Problems
		probs.Add("address", "is a deposit address of a checkout session, derived from a project's deposit key: it cannot be a recipient")
		return probs.Err()
	case errors.Is(err, payment.ErrConflict):
		return payment.Conflict("Another project has verified this address as its recipient in this environment")
	}
	return err
}

// VerifyRecipient checks the signature of a pending claim's challenge:
// the address's own key (EIP-191 personal_sign), or the contract wallet
// at the address approving it (EIP-1271) on every network of the
// environment where it has code. Then the project owns the address in the
// environment.
func (svc Service) VerifyRecipient(ctx context.Context, p payment.Principal, projectID, address, signature string) (payment.Recipient, error) {
	if err := core.CanManageKeys(p, projectID); err != nil {
		return payment.Recipient{}, err
	}
	a, err := recipientAddress("address", address)
	if err != nil {
		return payment.Recipient{}, err
	}
	var probs payment.Problems
	sig, err := hexutil.Decode(strings.TrimSpace(signature))
	if err != nil || len(sig) == 0 {
		probs.Add("signature", "must be the signature as 0x and hex digits (personal_sign's answer)")
		return payment.Recipient{}, probs.Err()
	}
	r, err := svc.Store.Checkout().GetRecipient(ctx, projectID, p.IsLive, a)
	if errors.Is(err, payment.ErrNotFound) {
		return r, payment.NotFound("Recipient")
	}
	if err != nil {
		return r, err
	}
	if r.Verified() {
		return r, nil
	}
	if !svc.Now().Before(r.ChallengeExpiresAt) {
		probs.Add("signature", "the challenge has expired: claim the address again (POST …/recipients) for a new one")
		return r, probs.Err()
	}
	clients := map[string]evmrpc.Client{}
	for key, c := range svc.Chains {
		// The networks where an address may be a contract wallet,
		// whose proof is its EIP-1271 approval there.
		if c.Network.IsLive == p.IsLive && c.Family().Capabilities().Contracts {
			clients[key] = c.Client
		}
	}
	method, err := chainwatch.VerifySignature(ctx, clients, common.HexToAddress(a), r.Challenge, sig)
	if errors.Is(err, chainwatch.ErrBadSignature) {
		probs.Add("signature", "does not prove control of "+a+": sign the challenge exactly as given with the address's wallet "+
			"(personal_sign; a contract wallet must approve it with EIP-1271 on every network where it is deployed)")
		return r, probs.Err()
	}
	if err != nil {
		slog.WarnContext(ctx, "recipient signature not checked", "address", a, "err", err)
		return r, fmt.Errorf("%w (%v)", &payment.Error{Kind: payment.KindUnavailable,
			Message: "The address's contract could not be asked on a network of this environment; retry shortly"}, err)
	}
	var out payment.Recipient
	err = svc.Audited(ctx, projectID, p.IsLive, payment.AuditRecipientVerified, "recipient", a, map[string]any{"address": a, "method": method},
		func(ctx context.Context) (err error) {
			out, err = svc.Store.Checkout().VerifyRecipient(ctx, projectID, p.IsLive, a, r.Challenge, method, svc.Now())
			return err
		})
	if errors.Is(err, payment.ErrNotFound) {
		return r, payment.Conflict("The challenge changed while it was checked (claimed again): sign the new one")
	}
	if err != nil {
		return out, claimErr(err)
	}
	return out, nil
}

// ListRecipients lists the project's recipients of the principal's
// environment.
func (svc Service) ListRecipients(ctx context.Context, p payment.Principal, projectID string) ([]payment.Recipient, error) {
	if err := core.Owns(p, projectID); err != nil {
		return nil, err
	}
	return svc.Store.Checkout().ListRecipients(ctx, projectID, p.IsLive)
}

// DeleteRecipient removes a project's recipient; one that sessions still
// hold amounts on is kept (409). Its plans open no more sessions.
func (svc Service) DeleteRecipient(ctx context.Context, p payment.Principal, projectID, address string) error {
	if err := core.CanManageKeys(p, projectID); err != nil {
		return err
	}
	a, err := recipientAddress("address", address)
	if err != nil {
		return err
	}
	err = svc.Audited(ctx, projectID, p.IsLive, payment.AuditRecipientRemoved, "recipient", a, map[string]any{"address": a},
		func(ctx context.Context) error {
			return svc.Store.Checkout().DeleteRecipient(ctx, projectID, p.IsLive, a, svc.Now())
		})
	switch {
	case errors.Is(err, payment.ErrNotFound):
		return payment.NotFound("Recipient")
	case errors.Is(err, payment.ErrConflict):
		return payment.Conflict("Checkout sessions still hold amounts on this recipient: remove it once they have ended")
	}
	return err
}

// ownsRecipient refuses a plan paying an address its project has not
// verified in its environment.
func (svc Service) ownsRecipient(ctx context.Context, plan payment.Plan, field string) error {
	r, err := svc.Store.Checkout().GetRecipient(ctx, plan.ProjectID, plan.IsLive, plan.RecipientAddress)
	if errors.Is(err, payment.ErrNotFound) || err == nil && !r.Verified() {
		return payment.RecipientNotVerified(field, plan.RecipientAddress)
	}
	return err
}
