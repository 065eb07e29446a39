package sweep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// multisendABI is a multisend contract's interface (dev/contracts'
// DevMultisend, deployable on any EVM network): sendToken moves amounts[i]
// of a token from the caller to recipients[i] with transferFrom, within
// the caller's allowance to the contract; sendNative forwards amounts[i]
// of the native coin, the value sent being exactly their total.
var multisendABI = func() abi.ABI {
	a, err := abi.JSON(strings.NewReader(`[
	{"type":"function","name":"sendToken","inputs":[{"name":"token","type":"address"},{"name":"recipients","type":"address[]"},{"name":"amounts","type":"uint256[]"}],"outputs":[]},
	{"type":"function","name":"sendNative","stateMutability":"payable","inputs":[{"name":"recipients","type":"address[]"},{"name":"amounts","type":"uint256[]"}],"outputs":[]}
	]`))
	if err != nil {
		panic(err)
	}
	return a
}()

// multisendStep names a multisend transaction in the journal.
const multisendStep = "multisend"

// Multisend pays every recipient its amount of one asset from the
// wallet's account (AccountWallet) in one transaction of the multisend
// contract, after an allowance to it for a token. Each signed transaction
// is written to cfg.Journal before it is sent; a run repeated with the
// same journal sends again what was signed and returns the multisend's
// hash, never signing a second one. It returns the hash of the mined
// multisend transaction; one that reverted is an error (nothing moved).
func Multisend(ctx context.Context, cfg Config, contract common.Address, asset Asset, to []common.Address, amounts []*big.Int, log io.Writer) (common.Hash, error) {
	c := cfg.Chain
	p, _, err := newPlan(ctx, cfg)
	if err != nil {
		return common.Hash{}, err
	}
	j, err := openJournal(cfg.Journal, p.ChainID)
	if err != nil {
		return common.Hash{}, err
	}
	for _, e := range j.Entries {
		if strings.HasSuffix(e.Description, ": "+multisendStep) {
			return resumeMultisend(ctx, cfg, e.Hash, log)
		}
	}
	key, from, err := cfg.Wallet.Key(0)
	if err != nil {
		return common.Hash{}, err
	}
	total := new(big.Int)
	for _, a := range amounts {
		total.Add(total, a)
	}
	x := &executor{cfg: cfg, plan: p, j: j, log: log, signer: types.LatestSignerForChainID(p.ChainID)}
	o := &Outcome{Step: Step{From: from, Asset: asset}}
	var value *big.Int
	var data []byte
	if asset.Native() {
		value, data = total, packMultisend("sendNative", to, amounts)
	} else {
		data = packMultisend("sendToken", asset.Token, to, amounts)
		allowed, err := call[*big.Int](ctx, c, asset.Token, "allowance", from, contract)
		if err != nil {
			return common.Hash{}, fmt.Errorf("%s allowance of %s to the multisend contract: %w", asset.Symbol, from, err)
		}
		if allowed.Cmp(total) < 0 {
			approve := pack("approve", contract, total)
			gas, err := c.EstimateGas(ctx, ethereum.CallMsg{From: from, To: &asset.Token, Data: approve})
			if err != nil {
				return common.Hash{}, fmt.Errorf("the allowance fails on chain: %w", err)
			}
			if err := x.sendTx(ctx, o, key, asset.Token, nil, approve, gas, "allowance"); err != nil {
				return common.Hash{}, err
			}
			if err := x.waitRound(ctx, []*Outcome{o}); err != nil {
				return common.Hash{}, err
			}
			if o.Err != nil {
				return common.Hash{}, o.Err
			}
		}
	}
	gas, err := c.EstimateGas(ctx, ethereum.CallMsg{From: from, To: &contract, Value: value, Data: data})
	if err != nil {
		return common.Hash{}, fmt.Errorf("the multisend fails on chain (its contract, the balance of %s): %w", from, err)
	}
	if err := x.sendTx(ctx, o, key, contract, value, data, gas, multisendStep); err != nil {
		return common.Hash{}, err
	}
	if err := x.waitRound(ctx, []*Outcome{o}); err != nil {
		return common.Hash{}, err
	}
	if o.Err != nil {
		return common.Hash{}, o.Err
	}
	return o.Hashes[len(o.Hashes)-1], nil
}

// resumeMultisend finishes a multisend an earlier run signed: sent again
// until mined, never signed anew.
func resumeMultisend(ctx context.Context, cfg Config, hash common.Hash, log io.Writer) (common.Hash, error) {
	if _, err := Resume(ctx, cfg, log); err != nil {
		return common.Hash{}, err
	}
	r, err := cfg.Chain.TransactionReceipt(ctx, hash)
	switch {
	case errors.Is(err, ethereum.NotFound):
		return common.Hash{}, fmt.Errorf("the multisend %s signed by an earlier run was never mined (its nonce was taken): "+
			"see what the account sent, and remove %s only if nothing was paid", hash, cfg.Journal)
	case err != nil:
		return common.Hash{}, err
	case r.Status != types.ReceiptStatusSuccessful:
		return common.Hash{}, fmt.Errorf("the multisend %s reverted: nothing was paid; remove %s to sign it again", hash, cfg.Journal)
	}
	return hash, nil
}

func packMultisend(method string, args ...any) []byte {
	b, err := multisendABI.Pack(method, args...)
	if err != nil {
		panic(err) // the arguments are built here, of the ABI's types
	}
	return b
}
