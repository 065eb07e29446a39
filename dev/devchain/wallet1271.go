package devchain

import (
	"context"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// approvedHashWallet is the runtime code of a minimal EIP-1271 contract
// wallet, assembled by hand (no compiler needed; the owner's address is
// set into it at deployment):
//
//   - isValidSignature(bytes32 hash, bytes) returns 0x1626ba7e when the
//     owner has approved hash, 0x00000000 otherwise (the signature bytes
//     are not read: approval is on-chain, as a Safe's approved hashes);
//   - any other call, 32 bytes of calldata, approves that hash: only the
//     owner may (others revert).
//
// Offsets: 0x2d ok, 0x35 check, 0x47 yes.
func approvedHashWallet(owner common.Address) []byte {
	code := []byte{
		0x60, 0x00, 0x35, 0x60, 0xe0, 0x1c, // calldataload(0) >> 224: the selector
		0x63, 0x16, 0x26, 0xba, 0x7e, 0x14, 0x60, 0x35, 0x57, // == isValidSignature: jump to check
		0x33, 0x73} // caller == owner
	code = append(code, owner.Bytes()...)
	code = append(code,
		0x14, 0x60, 0x2d, 0x57, // jump to ok
		0x60, 0x00, 0x80, 0xfd, // revert
		0x5b, 0x60, 0x01, 0x60, 0x00, 0x35, 0x55, 0x00, // ok: sstore(calldataload(0), 1); stop
		0x5b, 0x60, 0x04, 0x35, 0x54, 0x60, 0x47, 0x57, // check: sload(hash) != 0: jump to yes
		0x60, 0x00, 0x60, 0x00, 0x52, 0x60, 0x20, 0x60, 0x00, 0xf3, // return 32 zero bytes
		0x5b, 0x63, 0x16, 0x26, 0xba, 0x7e, 0x60, 0xe0, 0x1b, // yes: 0x1626ba7e << 224
		0x60, 0x00, 0x52, 0x60, 0x20, 0x60, 0x00, 0xf3) // return it
	return code
}

// deployCode is init code that deploys runtime as it is.
func deployCode(runtime []byte) []byte {
	return append([]byte{0x60, byte(len(runtime)), 0x80, 0x60, 0x0b, 0x60, 0x00, 0x39, 0x60, 0x00, 0xf3}, runtime...)
}

// DeployApprovedHashWallet deploys an EIP-1271 contract wallet of owner
// (see approvedHashWallet) and returns its address once mined.
func (c *Chain) DeployApprovedHashWallet(ctx context.Context, owner Account) (common.Address, error) {
	var addr common.Address
	h, err := c.send(ctx, owner, func(opts *bind.TransactOpts) (*types.Transaction, error) {
		a, tx, err := bind.DeployContract(opts, deployCode(approvedHashWallet(owner.Address)), c.client, nil)
		addr = a
		return tx, err
	})
	if err != nil {
		return common.Address{}, fmt.Errorf("devchain: deploy wallet: %w", err)
	}
	if err := c.commitAndCheck(ctx, h); err != nil {
		return common.Address{}, fmt.Errorf("devchain: deploy wallet: %w", err)
	}
	return addr, nil
}

// ApproveHash has owner's approved-hash wallet approve hash, mined before
// it returns.
func (c *Chain) ApproveHash(ctx context.Context, owner Account, wallet common.Address, hash common.Hash) error {
	h, err := c.Transact(ctx, owner, wallet, new(big.Int), hash.Bytes())
	if err == nil {
		err = c.commitAndCheck(ctx, h)
	}
	if err != nil {
		return fmt.Errorf("devchain: approve hash: %w", err)
	}
	return nil
}
