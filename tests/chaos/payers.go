package chaos

import (
	"bytes"
	"context"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/paymentsd/paymentsd/dev/contracts/bindings"
	"github.com/paymentsd/paymentsd/dev/devchain"
)

var (
	usdcABI      = bindings.NewDevUSDC()
	multisendABI = bindings.NewDevMultisend()
)

// payer lends a funded account for one send; each account sends one
// transaction at a time.
func (r *run) payer(ctx context.Context) (devchain.Account, func(), error) {
	select {
	case a := <-r.accounts:
		return a, func() { r.accounts <- a }, nil
	case <-ctx.Done():
		return devchain.Account{}, nil, ctx.Err()
	}
}

// call is what paying amount of asset to s sends: a token transfer or
// plain value.
func (r *run) call(s *session, asset string, amount *big.Int) (to common.Address, value *big.Int, data []byte) {
	if tok := s.Options[asset].Token; tok != (common.Address{}) {
		return tok, nil, usdcABI.PackTransfer(s.Address, amount)
	}
	return s.Address, amount, nil
}

// pay sends amount of asset to s's deposit address.
func (r *run) pay(ctx context.Context, s *session, asset string, amount *big.Int) (common.Hash, error) {
	acc, release, err := r.payer(ctx)
	if err != nil {
		return common.Hash{}, err
	}
	defer release()
	to, value, data := r.call(s, asset, amount)
	r.chainMu.RLock()
	defer r.chainMu.RUnlock()
	h, err := r.s.chain.Transact(ctx, acc, to, value, data)
	if err != nil {
		return h, fmt.Errorf("pay %s: %w", s.ID, err)
	}
	r.sent(h, s)
	return h, nil
}

// payAndSubmit pays s and posts the hash to submitTo (s itself, or another
// session for a wrong-session submission), before broadcasting the
// transaction or right after.
func (r *run) payAndSubmit(ctx context.Context, s, submitTo *session, asset string, amount *big.Int, before bool) error {
	acc, release, err := r.payer(ctx)
	if err != nil {
		return err
	}
	defer release()
	to, value, data := r.call(s, asset, amount)
	// Held across signing, posting and sending: a reorg in between could
	// take back the nonce the signed transaction carries.
	r.chainMu.RLock()
	defer r.chainMu.RUnlock()
	var h common.Hash
	submit := func() { r.submit(ctx, s, submitTo, h) }
	if before {
		tx, err := r.s.chain.SignTransact(ctx, acc, to, value, data)
		if err != nil {
			return fmt.Errorf("sign for %s: %w", s.ID, err)
		}
		h = tx.Hash()
		submit()
		if err := r.s.chain.SendSigned(ctx, tx); err != nil {
			return fmt.Errorf("send for %s: %w", s.ID, err)
		}
		r.sent(h, s)
		return nil
	}
	if h, err = r.s.chain.Transact(ctx, acc, to, value, data); err != nil {
		return fmt.Errorf("pay %s: %w", s.ID, err)
	}
	r.sent(h, s)
	submit()
	return nil
}

// submit posts h, a payment to s, to submitTo, and checks that the answer
// to a wrong session shows nothing of s.
func (r *run) submit(ctx context.Context, s, submitTo *session, h common.Hash) {
	resp, err := r.s.api.submit(ctx, r.s.longAPI, submitTo, h)
	r.mu.Lock()
	r.submits[submitStatus(resp.Status, err)]++
	r.mu.Unlock()
	if err != nil || resp.Status >= http.StatusBadRequest {
		r.logf("hash %s posted to %s (%s): %v %d %s", h.Hex(), submitTo.ID, submitTo.Class, err, resp.Status, bytes.TrimSpace(resp.Raw))
	}
	if err == nil && submitTo != s && leaks(resp.Raw, s) {
		answer := strings.TrimSpace(string(resp.Raw))
		if len(answer) > 200 {
			answer = answer[:200] + "…"
		}
		r.problem("leak", submitTo.ID, "the answer to posting %s to it shows the paid session %s: %s", h.Hex(), s.ID, answer)
	}
}

// multisend pays amounts[i] to sessions[i] in one transaction of the dev
// multisend: token transfers, or native payments by internal calls.
func (r *run) multisend(ctx context.Context, asset string, sessions []*session, amounts []*big.Int) error {
	acc, release, err := r.payer(ctx)
	if err != nil {
		return err
	}
	defer release()
	to := make([]common.Address, len(sessions))
	total := new(big.Int)
	for i, s := range sessions {
		to[i] = s.Address
		total.Add(total, amounts[i])
	}
	var value *big.Int
	var data []byte
	if tok := sessions[0].Options[asset].Token; tok != (common.Address{}) {
		data = multisendABI.PackSendToken(tok, to, amounts)
	} else {
		value, data = total, multisendABI.PackSendNative(to, amounts)
	}
	r.chainMu.RLock()
	defer r.chainMu.RUnlock()
	h, err := r.s.chain.Transact(ctx, acc, r.s.multisend, value, data)
	if err != nil {
		return fmt.Errorf("multisend to %s: %w", sessions[0].ID, err)
	}
	r.sent(h, sessions...)
	return nil
}

func (r *run) sent(h common.Hash, sessions ...*session) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.txs = append(r.txs, sentTx{Hash: h, At: time.Now(), Sessions: sessions})
}

// leaks reports whether an API answer names the other session or its
// deposit address.
func leaks(raw []byte, other *session) bool {
	body := strings.ToLower(string(raw))
	return strings.Contains(body, strings.ToLower(other.ID)) || strings.Contains(body, strings.ToLower(other.Address.Hex()))
}

func submitStatus(status int, err error) string {
	if err != nil {
		return "error"
	}
	return fmt.Sprintf("%d %s", status, http.StatusText(status))
}
