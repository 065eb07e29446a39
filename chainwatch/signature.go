package chainwatch

import (
	"github.com/paymentsd/paymentsd/internal/evmrpc"

	"bytes"
	"context"
	"errors"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
)

// Signature methods: how an address proved it signed a message.
const (
	// SignedEIP191 is an account's personal_sign (EIP-191 version 0x45):
	// the key recovered from the signature is the address's.
	SignedEIP191 = "eip191"
	// SignedEIP1271 is a contract wallet's approval (EIP-1271): its
	// isValidSignature(bytes32,bytes) answered 0x1626ba7e.
	SignedEIP1271 = "eip1271"
)

// EIP1271Magic is what isValidSignature returns for a valid signature.
var EIP1271Magic = [4]byte{0x16, 0x26, 0xba, 0x7e}

// ErrBadSignature says a signature does not prove the address signed.
var ErrBadSignature = errors.New("the signature is not the address's signature of the message")

var isValidSignature = func() abi.Method {
	bytes32, _ := abi.NewType("bytes32", "", nil)
	byts, _ := abi.NewType("bytes", "", nil)
	b4, _ := abi.NewType("bytes4", "", nil)
	return abi.NewMethod("isValidSignature", "isValidSignature", abi.Function, "view", false, false,
		abi.Arguments{{Name: "hash", Type: bytes32}, {Name: "signature", Type: byts}}, abi.Arguments{{Type: b4}})
}()

// RecoverEIP191 returns the account whose key made sig, a personal_sign
// (EIP-191) signature of message: 65 bytes r‖s‖v, v 27 or 28 (0 or 1
// too).
func RecoverEIP191(message string, sig []byte) (common.Address, error) {
	if len(sig) != crypto.SignatureLength {
		return common.Address{}, fmt.Errorf("%w: a signature is %d bytes, not %d", ErrBadSignature, crypto.SignatureLength, len(sig))
	}
	s := bytes.Clone(sig)
	if s[64] >= 27 {
		s[64] -= 27
	}
	if s[64] > 1 {
		return common.Address{}, fmt.Errorf("%w: its recovery byte is neither 27 nor 28", ErrBadSignature)
	}
	pub, err := crypto.SigToPub(accounts.TextHash([]byte(message)), s)
	if err != nil {
		return common.Address{}, fmt.Errorf("%w: %v", ErrBadSignature, err)
	}
	return crypto.PubkeyToAddress(*pub), nil
}

// VerifySignature tells how address signed message with sig, or
// ErrBadSignature when it did not:
//
//   - SignedEIP191 when sig is the personal_sign signature of the
//     address's own key (an account, on every network alike; an EIP-7702
//     account with code too);
//   - otherwise SignedEIP1271 when the address has code on at least one
//     of clients' networks and, on every one where it has code, its
//     isValidSignature(keccak of the EIP-191 text hash, sig) answers
//     0x1626ba7e: a contract wallet may have other owners on another
//     network at the same address, so it must approve on all of them.
//
// A node that cannot be asked is an error other than ErrBadSignature
// (retry later).
func VerifySignature(ctx context.Context, clients map[string]evmrpc.Client, address common.Address, message string, sig []byte) (string, error) {
	if a, err := RecoverEIP191(message, sig); err == nil && a == address {
		return SignedEIP191, nil
	}
	hash := accounts.TextHash([]byte(message))
	input, err := isValidSignature.Inputs.Pack(common.BytesToHash(hash), sig)
	if err != nil {
		return "", err
	}
	data := append(bytes.Clone(isValidSignature.ID), input...)
	contracts := 0
	for network, c := range clients {
		var code hexutil.Bytes
		if err := c.Call(ctx, &code, "eth_getCode", address, "latest"); err != nil {
			return "", fmt.Errorf("code of %s on %s: %w", address.Hex(), network, err)
		}
		if len(code) == 0 {
			continue
		}
		contracts++
		out, err := c.CallContract(ctx, ethereum.CallMsg{To: &address, Data: data, Gas: 1_000_000}, nil)
		if err != nil {
			var rpcErr interface{ ErrorCode() int }
			if errors.As(err, &rpcErr) && rpcErr.ErrorCode() == 3 || isRevert(err) {
				return "", fmt.Errorf("%w: the contract on %s refused it (%v)", ErrBadSignature, network, err)
			}
			return "", fmt.Errorf("isValidSignature on %s: %w", network, err)
		}
		if len(out) < 32 || !bytes.Equal(out[:4], EIP1271Magic[:]) || new(big.Int).SetBytes(out[4:32]).Sign() != 0 {
			return "", fmt.Errorf("%w: the contract on %s did not answer 0x1626ba7e", ErrBadSignature, network)
		}
	}
	if contracts == 0 {
		return "", ErrBadSignature
	}
	return SignedEIP1271, nil
}

func isRevert(err error) bool {
	return err != nil && (bytes.Contains([]byte(err.Error()), []byte("revert")) || bytes.Contains([]byte(err.Error()), []byte("invalid opcode")))
}
