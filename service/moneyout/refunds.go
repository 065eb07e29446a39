package moneyout

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/payment/views"
	"github.com/paymentsd/paymentsd/service/internal/core"
)

// CreateRefund records a refund of one of the principal's sessions
// (payment.NewRefund says what it may be) and returns it with its claim
// token, the secret of the customer's link to give the address, which is
// kept as its hash only: shown once, here.
func (svc Service) CreateRefund(ctx context.Context, p payment.Principal, projectID, sessionID string, in payment.RefundInput) (payment.Refund, string, error) {
	if err := core.Owns(p, projectID); err != nil {
		return payment.Refund{}, "", err
	}
	if !payment.ValidID(payment.PrefixSession, sessionID) {
		// The payload names no session: in.Problems says why.
		probs := in.Problems
		probs.Merge(payment.Problems{{Field: "checkoutSessionId", Message: "is not a checkout session ID"}})
		return payment.Refund{}, "", probs.Err()
	}
	if in.Address != nil && *in.Address != "" {
		if err := svc.refuseDestinations(ctx, "", []string{"address"}, []string{*in.Address}); err != nil {
			return payment.Refund{}, "", err
		}
	}
	now := svc.Now()
	token := payment.NewSessionToken()
	rate := func(a payment.Asset) (decimal.Decimal, bool) { return svc.checkout().Rate(ctx, a) }
	var r payment.Refund
	err := svc.Store.InTx(ctx, func(ctx context.Context) (err error) {
		r, err = svc.Store.MoneyOut().CreateRefund(ctx, p, sessionID, func(s payment.Session, txs []payment.Transaction, refunds []payment.Refund) (payment.Refund, error) {
			r, err := payment.NewRefund(in, s, txs, refunds, svc.Catalog, rate, now)
			if err == nil && r.Bitcoin() && r.ToAddress != "" {
				err = svc.checkPayees(r.Network, []string{"address"}, []string{r.ToAddress})
			}
			r.ID, r.ClaimTokenHash = payment.NewID(payment.PrefixRefund, now), payment.HashSecret(token)
			return r, err
		}, renderRefund)
		if errors.Is(err, payment.ErrNotFound) {
			return payment.NotFound("Checkout session")
		}
		if err != nil {
			return err
		}
		return svc.AuditIn(ctx, p.ProjectID, p.IsLive, payment.AuditRefundCreated, "refund", r.ID,
			map[string]any{"checkoutSessionId": sessionID, "amount": r.Amount(), "asset": r.AssetDefinitionID, "address": r.ToAddress})
	})
	if err != nil {
		return payment.Refund{}, "", err
	}
	return r, token, nil
}

// GetRefund returns one of the principal's refunds.
func (svc Service) GetRefund(ctx context.Context, p payment.Principal, projectID, id string) (payment.Refund, error) {
	return getOutgoing(ctx, svc, refundKind, p, projectID, id)
}

// ListRefunds lists the principal's refunds; sessionID, when set, one
// session's.
func (svc Service) ListRefunds(ctx context.Context, p payment.Principal, projectID, sessionID string, q payment.ListQuery) (core.Page[payment.Refund], error) {
	if sessionID != "" {
		if _, err := svc.checkout().GetSession(ctx, p, projectID, sessionID); err != nil {
			return core.Page[payment.Refund]{}, err
		}
	} else if err := core.Owns(p, projectID); err != nil {
		return core.Page[payment.Refund]{}, err
	}
	items, total, err := svc.Store.MoneyOut().ListRefunds(ctx, p, q, sessionID)
	return core.Page[payment.Refund]{Items: items, Total: total, Query: q}, err
}

// ExportRefunds streams the principal's refunds (ListRefunds's filters)
// to fn.
func (svc Service) ExportRefunds(ctx context.Context, p payment.Principal, projectID, sessionID string, q payment.ListQuery, fn func(payment.Refund) error) error {
	if err := core.Owns(p, projectID); err != nil {
		return err
	}
	return svc.Store.MoneyOut().EachRefund(ctx, p, q, sessionID, fn)
}

// SetRefundAddress is the merchant giving (or correcting) the address a
// refund is paid to, until its transfer is sent; audited. The refund then
// waits for an owner's approval (ApproveRefund), given again after every
// change: the merchant's address is a payout's, not the customer's word.
func (svc Service) SetRefundAddress(ctx context.Context, p payment.Principal, projectID, id, address string) (payment.Refund, error) {
	r, err := svc.GetRefund(ctx, p, projectID, id)
	if err != nil {
		return payment.Refund{}, err
	}
	if err := addressRequired(address); err != nil {
		return payment.Refund{}, err
	}
	if r.Bitcoin() {
		if err := svc.checkPayees(r.Network, []string{"address"}, []string{address}); err != nil {
			return payment.Refund{}, err
		}
	}
	if err := svc.refuseDestinations(ctx, r.FromAddress, []string{"address"}, []string{address}); err != nil {
		return payment.Refund{}, err
	}
	now := svc.Now()
	err = svc.Audited(ctx, p.ProjectID, p.IsLive, payment.AuditRefundAddressSet, "refund", id, map[string]any{"address": address},
		func(ctx context.Context) (err error) {
			r, err = svc.Store.MoneyOut().UpdateRefund(ctx, &p, id, func(r *payment.Refund) (payment.EventType, error) {
				return payment.EventRefundAddressProvided, payment.SetRefundAddress(r, address, payment.AddressFromMerchant, now)
			}, renderRefund)
			return err
		})
	return r, err
}

// ApproveRefund is an owner approving a refund to an address the
// merchant gave: it may be signed and sent. Only an owner signed in
// approves (the API asks for a fresh sign-in), as a payout batch is
// approved; audited with the address and amount approved. address, when
// not empty, is the address the owner was shown: the approval is refused
// when the refund's is another by then (changed while the owner read it).
func (svc Service) ApproveRefund(ctx context.Context, p payment.Principal, projectID, id, address string) (payment.Refund, error) {
	r, err := svc.GetRefund(ctx, p, projectID, id)
	if err != nil {
		return payment.Refund{}, err
	}
	if !p.CanApproveRefunds() {
		return payment.Refund{}, &payment.Error{Kind: payment.KindForbidden,
			Message: "Only an owner of the project, signed in, approves a refund to an address the merchant gave"}
	}
	now := svc.Now()
	err = svc.Audited(ctx, p.ProjectID, p.IsLive, payment.AuditRefundApproved, "refund", id,
		map[string]any{"address": r.ToAddress, "amount": r.Amount(), "asset": r.AssetDefinitionID},
		func(ctx context.Context) (err error) {
			r, err = svc.Store.MoneyOut().UpdateRefund(ctx, &p, id, func(locked *payment.Refund) (payment.EventType, error) {
				if locked.ToAddress != r.ToAddress || address != "" && !strings.EqualFold(address, locked.ToAddress) {
					// The owner approves the address they were shown, no other.
					return "", payment.Conflict("The refund's address is " + locked.ToAddress + ", not the one approved: " +
						"it changed meanwhile; read the refund again and approve what it is now")
				}
				return payment.EventRefundApproved, payment.ApproveRefund(locked, p.UserID, now)
			}, renderRefund)
			return err
		})
	if err == nil {
		svc.follow(ctx, r.ID, r.ProjectID, r.IsLive, r.Outgoing) // approved: its workflow waits for its transaction
	}
	return r, err
}

// CancelRefund cancels a refund nothing has been sent for: what it held
// can be refunded again.
func (svc Service) CancelRefund(ctx context.Context, p payment.Principal, projectID, id string) (payment.Refund, error) {
	return cancelOutgoing(ctx, svc, refundKind, p, projectID, id)
}

// ReportRefundSent records the hash of the transaction the merchant sent
// for a refund (payment.ReportRefundSent); audited. From then on the
// network's chainwatch follows it to finalized.
func (svc Service) ReportRefundSent(ctx context.Context, p payment.Principal, projectID, id, txHash string) (payment.Refund, error) {
	return reportOutgoingSent(ctx, svc, refundKind, p, projectID, id, txHash)
}

// RefundClaim returns the refund a claim link's token names.
func (svc Service) RefundClaim(ctx context.Context, token string) (payment.Refund, error) {
	if !payment.ValidSessionToken(token) {
		return payment.Refund{}, payment.NotFound("Refund")
	}
	r, err := svc.Store.MoneyOut().RefundByClaimHash(ctx, payment.HashSecret(token))
	if errors.Is(err, payment.ErrNotFound) {
		return r, payment.NotFound("Refund")
	}
	return r, err
}

// ClaimRefund is the customer giving, through the claim link, the address
// the refund is paid to. The link takes one address, while the refund
// waits for it: a link that leaks later cannot redirect the refund. An
// address holding code is a contract, which may not be able to move what
// it receives (an exchange's deposit address may not credit a refund
// either): it is refused unless acceptContract says the customer read the
// warning.
func (svc Service) ClaimRefund(ctx context.Context, token, address string, acceptContract bool) (payment.Refund, error) {
	r, err := svc.RefundClaim(ctx, token)
	if err != nil {
		return r, err
	}
	if err := addressRequired(address); err != nil {
		return r, err
	}
	if r.Status != payment.RefundAwaitingAddress {
		return r, payment.Conflict("The refund's address has been given already")
	}
	if r.Bitcoin() {
		if err := svc.checkPayees(r.Network, []string{"address"}, []string{address}); err != nil {
			return r, err
		}
	}
	if err := svc.refuseDestinations(ctx, r.FromAddress, []string{"address"}, []string{address}); err != nil {
		return r, err
	}
	if addr, msg := payment.CheckPayee(address); msg == "" && !acceptContract && !r.Bitcoin() {
		contract, err := svc.isContract(ctx, r.Network, addr)
		if err != nil {
			return r, err
		}
		if contract {
			var probs payment.Problems
			probs.Add("address", "is a contract, not a wallet account: it may not be able to use or return what it receives; "+
				"send acceptContract: true to use it anyway")
			return r, probs.Err()
		}
	}
	now := svc.Now()
	r, err = svc.Store.MoneyOut().UpdateRefund(ctx, nil, r.ID, func(r *payment.Refund) (payment.EventType, error) {
		if r.Status != payment.RefundAwaitingAddress {
			return "", payment.Conflict("The refund's address has been given already")
		}
		return payment.EventRefundAddressProvided, payment.SetRefundAddress(r, address, payment.AddressFromCustomer, now)
	}, renderRefund)
	if err == nil && r.Awaited() {
		svc.follow(ctx, r.ID, r.ProjectID, r.IsLive, r.Outgoing) // the customer's address: its workflow waits for its transaction
	}
	return r, err
}

// isContract tells whether an address on a network holds code.
func (svc Service) isContract(ctx context.Context, network, address string) (bool, error) {
	c, ok := svc.Chains[network]
	if !ok {
		return false, &payment.Error{Kind: payment.KindUnavailable, Message: "The network " + network + " cannot be read now"}
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	contract, err := c.Family().IsContract(ctx, address)
	if err != nil {
		return false, &payment.Error{Kind: payment.KindUnavailable, Message: fmt.Sprintf("The network %s cannot be read now", network)}
	}
	return contract, nil
}

func addressRequired(address string) error {
	if address != "" {
		return nil
	}
	var probs payment.Problems
	probs.Add("address", "is required")
	return probs.Err()
}

func renderRefund(r payment.Refund, v int) ([]byte, error) { return views.RefundEvent(r, v) }
