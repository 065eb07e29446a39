package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"go.temporal.io/api/serviceerror"

	"github.com/paymentsd/paymentsd/deposit"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/workflows"
)

// depositAddress gives the session the next unused address of its
// project's deposit key for the environment.
func (e *Engine) depositAddress(ctx context.Context, s *payment.Session) error {
	xpub, index, err := e.Store.NextDepositIndex(ctx, s.ProjectID, s.IsLive)
	if errors.Is(err, payment.ErrNotFound) {
		env := "sandbox"
		if s.IsLive {
			env = "live"
		}
		return &payment.Error{Kind: payment.KindValidation, Message: "Validation failed", Details: []payment.FieldError{{
			Field: "paymentPlanId", Message: "the plan's project has no deposit key for " + env + " (paymentsd admin set-deposit-key)"}}}
	}
	if err != nil {
		return fmt.Errorf("deposit index: %w", err)
	}
	key, err := deposit.ParseKey(xpub)
	if err != nil {
		return fmt.Errorf("deposit key of %s: %w", s.ProjectID, err)
	}
	addr, err := key.DeriveAddress(uint32(index))
	if err != nil {
		return err
	}
	s.DepositAddress, s.DepositIndex = addr.Hex(), &index
	return nil
}

// rate is an asset's USD price for a quote; ok is false when it cannot be
// had now (no chain configured for a price feed, or the feed failing), and
// the asset is then left out of the session's options.
func (e *Engine) rate(ctx context.Context, a payment.Asset) (decimal.Decimal, bool) {
	if a.Price.Kind == payment.PriceUSDPegged {
		return decimal.NewFromInt(1), true
	}
	c, ok := e.Chains[a.Network]
	if !ok {
		return decimal.Decimal{}, false
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	r, err := c.Rate(ctx, a, e.now())
	if err != nil {
		slog.WarnContext(ctx, "price feed unavailable", "asset", a.ID, "err", err)
		return decimal.Decimal{}, false
	}
	return r, true
}

// SetDepositKey sets a project's extended public key for an environment.
func (e *Engine) SetDepositKey(ctx context.Context, projectID string, isLive bool, xpub string) error {
	if _, err := deposit.ParseKey(xpub); err != nil {
		var probs payment.Problems
		probs.Add("xpub", err.Error())
		return probs.Err()
	}
	if _, err := e.Store.GetProject(ctx, projectID); err != nil {
		return err
	}
	err := e.Store.SetDepositKey(ctx, projectID, isLive, xpub, e.now())
	if errors.Is(err, payment.ErrConflict) {
		return payment.Conflict("This deposit key is already used by another project or environment")
	}
	return err
}

var txHashPattern = regexp.MustCompile(`^0x[0-9a-fA-F]{64}$`)

// SubmitPayment registers a transaction hash the payer's wallet sent to a
// session's deposit address, before it is mined: the session's workflow
// starts following it at pending. It returns the transaction once recorded
// (nil if it is not recorded within a few seconds; it will be).
func (e *Engine) SubmitPayment(ctx context.Context, token, network, txHash string) (*payment.Transaction, error) {
	v, err := e.SessionByToken(ctx, token)
	if err != nil {
		return nil, err
	}
	s := v.Session
	var probs payment.Problems
	networks := []string{}
	for _, o := range s.PaymentOptions {
		if !slices.Contains(networks, o.Network) {
			networks = append(networks, o.Network)
		}
	}
	if !slices.Contains(networks, network) {
		probs.Add("network", "must be one of the session's networks: "+strings.Join(networks, ", "))
	}
	if !txHashPattern.MatchString(txHash) {
		probs.Add("txHash", "must be a 0x-prefixed 32-byte hex transaction hash")
	}
	if err := probs.Err(); err != nil {
		return nil, err
	}
	c, ok := e.Chains[network]
	if !ok {
		return nil, &payment.Error{Kind: payment.KindUnavailable, Message: "network " + network + " is not watched by this deployment"}
	}
	now := e.now()
	if s.Status == payment.SessionCanceled || (s.Status == payment.SessionExpired && !now.Before(s.LateUntil)) {
		return nil, payment.Conflict("The checkout session no longer takes payments")
	}
	p := workflows.Payment{SessionID: s.ID, Network: network, ChainID: c.Network.ChainID, TxHash: strings.ToLower(txHash),
		LogIndex: -1, To: s.DepositAddress, Source: "payer"}
	err = e.Temporal.SignalWorkflow(ctx, workflows.CheckoutSessionWorkflowID(s.ID), "", workflows.SignalPayment, p)
	var gone *serviceerror.NotFound
	if errors.As(err, &gone) {
		return nil, payment.Conflict("The checkout session no longer takes payments")
	}
	if err != nil {
		return nil, fmt.Errorf("signal session: %w", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		t, err := e.Store.TransactionByHash(ctx, c.Network.ChainID, p.TxHash)
		if err == nil {
			return &t, nil
		}
		if !errors.Is(err, payment.ErrNotFound) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil, nil
}
