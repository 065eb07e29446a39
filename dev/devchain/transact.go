package devchain

import (
	"context"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// Transact sends a call of to with data and value (wei, nil for none) from
// from, with from's next nonce. It does not wait for the transaction to be
// mined. Any contract can be called this way, with calldata packed by its
// bindings.
func (c *Chain) Transact(ctx context.Context, from Account, to common.Address, value *big.Int, data []byte) (common.Hash, error) {
	h, err := c.send(ctx, from, func(opts *bind.TransactOpts) (*types.Transaction, error) {
		tx, err := c.signCall(ctx, opts, from, to, value, data)
		if err != nil {
			return nil, err
		}
		return tx, c.client.SendTransaction(ctx, tx)
	})
	if err != nil {
		return common.Hash{}, fmt.Errorf("devchain: transact: %w", err)
	}
	return h, nil
}

// SignTransact builds and signs the transaction Transact would send, but
// does not send it: its hash is known before any node has seen it, as a
// wallet knows it before broadcasting. It takes from's next nonce, so
// from's later transactions wait in the pool until this one is sent with
// SendSigned.
func (c *Chain) SignTransact(ctx context.Context, from Account, to common.Address, value *big.Int, data []byte) (*types.Transaction, error) {
	var signed *types.Transaction
	_, err := c.send(ctx, from, func(opts *bind.TransactOpts) (*types.Transaction, error) {
		tx, err := c.signCall(ctx, opts, from, to, value, data)
		signed = tx
		return tx, err
	})
	if err != nil {
		return nil, fmt.Errorf("devchain: sign: %w", err)
	}
	return signed, nil
}

// SendSigned broadcasts a transaction signed by SignTransact.
func (c *Chain) SendSigned(ctx context.Context, tx *types.Transaction) error {
	if err := c.client.SendTransaction(ctx, tx); err != nil {
		return fmt.Errorf("devchain: send %s: %w", tx.Hash(), err)
	}
	return nil
}

// Deploy deploys a contract's creation code (with its packed constructor
// arguments appended) from from, and returns the contract's address and the
// deployment's hash. It does not wait for the deployment to be mined.
func (c *Chain) Deploy(ctx context.Context, from Account, code []byte) (common.Address, common.Hash, error) {
	var addr common.Address
	h, err := c.send(ctx, from, func(opts *bind.TransactOpts) (*types.Transaction, error) {
		a, tx, err := bind.DeployContract(opts, code, c.client, nil)
		addr = a
		return tx, err
	})
	if err != nil {
		return common.Address{}, common.Hash{}, fmt.Errorf("devchain: deploy: %w", err)
	}
	return addr, h, nil
}

// signCall signs a dynamic-fee transaction calling to, with the nonce in
// opts and an estimated gas limit.
func (c *Chain) signCall(ctx context.Context, opts *bind.TransactOpts, from Account, to common.Address, value *big.Int, data []byte) (*types.Transaction, error) {
	if value == nil {
		value = new(big.Int)
	}
	head, err := c.client.HeaderByNumber(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("read head: %w", err)
	}
	tip, err := c.client.SuggestGasTipCap(ctx)
	if err != nil {
		return nil, fmt.Errorf("suggest tip: %w", err)
	}
	gas, err := c.client.EstimateGas(ctx, ethereum.CallMsg{From: from.Address, To: &to, Value: value, Data: data})
	if err != nil {
		return nil, fmt.Errorf("estimate gas: %w", err)
	}
	tx, err := opts.Signer(from.Address, types.NewTx(&types.DynamicFeeTx{
		ChainID:   c.ChainID,
		Nonce:     opts.Nonce.Uint64(),
		GasTipCap: tip,
		GasFeeCap: new(big.Int).Add(tip, new(big.Int).Mul(head.BaseFee, big.NewInt(2))),
		Gas:       gas,
		To:        &to,
		Value:     value,
		Data:      data,
	}))
	if err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	return tx, nil
}
