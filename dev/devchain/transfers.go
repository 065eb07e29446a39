package devchain

import (
	"context"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// TransferToken sends amount (in USDC base units, 6 decimals) of the dev
// token from from to to. It does not wait for the transaction to be mined.
func (c *Chain) TransferToken(ctx context.Context, from Account, to common.Address, amount *big.Int) (common.Hash, error) {
	token := c.usdc.Instance(c.client, c.Token)
	h, err := c.send(ctx, from, func(opts *bind.TransactOpts) (*types.Transaction, error) {
		return bind.Transact(token, opts, c.usdc.PackTransfer(to, amount))
	})
	if err != nil {
		return common.Hash{}, fmt.Errorf("devchain: transfer token: %w", err)
	}
	return h, nil
}

// TransferNative sends wei from from to to. It does not wait for the
// transaction to be mined.
func (c *Chain) TransferNative(ctx context.Context, from Account, to common.Address, wei *big.Int) (common.Hash, error) {
	return c.Transact(ctx, from, to, wei, nil)
}

// TokenBalance returns owner's dev token balance in base units at the head.
func (c *Chain) TokenBalance(ctx context.Context, owner common.Address) (*big.Int, error) {
	bal, err := bind.Call(c.usdc.Instance(c.client, c.Token), &bind.CallOpts{Context: ctx},
		c.usdc.PackBalanceOf(owner), c.usdc.UnpackBalanceOf)
	if err != nil {
		return nil, fmt.Errorf("devchain: token balance: %w", err)
	}
	return bal, nil
}

// send builds, signs and sends one transaction from from with the next
// nonce, and returns its hash. build gets options carrying that nonce; it
// sends the transaction itself (bind does).
func (c *Chain) send(ctx context.Context, from Account, build func(*bind.TransactOpts) (*types.Transaction, error)) (common.Hash, error) {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	pending, err := c.client.PendingNonceAt(ctx, from.Address)
	if err != nil {
		return common.Hash{}, fmt.Errorf("read nonce: %w", err)
	}
	nonce := max(pending, c.nonces[from.Address])
	opts := bind.NewKeyedTransactor(from.Key, c.ChainID)
	opts.Context = ctx
	opts.Nonce = new(big.Int).SetUint64(nonce)
	tx, err := build(opts)
	if err != nil {
		return common.Hash{}, err
	}
	c.nonces[from.Address] = nonce + 1
	return tx.Hash(), nil
}

// TransferTokenUnchecked sends a token transfer with a fixed gas limit,
// skipping the estimate that would refuse a transfer bound to fail: the
// way to put a reverting transaction on the chain.
func (c *Chain) TransferTokenUnchecked(ctx context.Context, from Account, to common.Address, amount *big.Int) (common.Hash, error) {
	token := c.usdc.Instance(c.client, c.Token)
	h, err := c.send(ctx, from, func(opts *bind.TransactOpts) (*types.Transaction, error) {
		opts.GasLimit = 200_000
		return bind.Transact(token, opts, c.usdc.PackTransfer(to, amount))
	})
	if err != nil {
		return common.Hash{}, fmt.Errorf("devchain: transfer token: %w", err)
	}
	return h, nil
}
