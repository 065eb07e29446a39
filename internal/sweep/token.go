package sweep

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

// tokenABI is what a sweep calls on a token: ERC-20, EIP-2612 and EIP-3009
// as USDC implements them.
var tokenABI = func() abi.ABI {
	a, err := abi.JSON(strings.NewReader(`[
	{"type":"function","name":"balanceOf","stateMutability":"view","inputs":[{"name":"owner","type":"address"}],"outputs":[{"name":"","type":"uint256"}]},
	{"type":"function","name":"transfer","inputs":[{"name":"to","type":"address"},{"name":"value","type":"uint256"}],"outputs":[{"name":"","type":"bool"}]},
	{"type":"function","name":"approve","inputs":[{"name":"spender","type":"address"},{"name":"value","type":"uint256"}],"outputs":[{"name":"","type":"bool"}]},
	{"type":"function","name":"allowance","stateMutability":"view","inputs":[{"name":"owner","type":"address"},{"name":"spender","type":"address"}],"outputs":[{"name":"","type":"uint256"}]},
	{"type":"function","name":"transferFrom","inputs":[{"name":"from","type":"address"},{"name":"to","type":"address"},{"name":"value","type":"uint256"}],"outputs":[{"name":"","type":"bool"}]},
	{"type":"function","name":"name","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"string"}]},
	{"type":"function","name":"version","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"string"}]},
	{"type":"function","name":"DOMAIN_SEPARATOR","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"bytes32"}]},
	{"type":"function","name":"nonces","stateMutability":"view","inputs":[{"name":"owner","type":"address"}],"outputs":[{"name":"","type":"uint256"}]},
	{"type":"function","name":"permit","inputs":[{"name":"owner","type":"address"},{"name":"spender","type":"address"},{"name":"value","type":"uint256"},{"name":"deadline","type":"uint256"},{"name":"v","type":"uint8"},{"name":"r","type":"bytes32"},{"name":"s","type":"bytes32"}],"outputs":[]},
	{"type":"function","name":"authorizationState","stateMutability":"view","inputs":[{"name":"authorizer","type":"address"},{"name":"nonce","type":"bytes32"}],"outputs":[{"name":"","type":"bool"}]},
	{"type":"function","name":"transferWithAuthorization","inputs":[{"name":"from","type":"address"},{"name":"to","type":"address"},{"name":"value","type":"uint256"},{"name":"validAfter","type":"uint256"},{"name":"validBefore","type":"uint256"},{"name":"nonce","type":"bytes32"},{"name":"v","type":"uint8"},{"name":"r","type":"bytes32"},{"name":"s","type":"bytes32"}],"outputs":[]}
	]`))
	if err != nil {
		panic(err)
	}
	return a
}()

var (
	domainTypeHash   = crypto.Keccak256Hash([]byte("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"))
	permitTypeHash   = crypto.Keccak256Hash([]byte("Permit(address owner,address spender,uint256 value,uint256 nonce,uint256 deadline)"))
	transferTypeHash = crypto.Keccak256Hash([]byte("TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"))
)

func pack(method string, args ...any) []byte {
	b, err := tokenABI.Pack(method, args...)
	if err != nil {
		panic(err) // the arguments are built here, of the ABI's types
	}
	return b
}

// call makes a read-only call of the token and unpacks its one output.
func call[T any](ctx context.Context, c Chain, token common.Address, method string, args ...any) (T, error) {
	var zero T
	out, err := c.CallContract(ctx, ethereum.CallMsg{To: &token, Data: pack(method, args...)}, nil)
	if err != nil {
		return zero, err
	}
	vals, err := tokenABI.Unpack(method, out)
	if err != nil || len(vals) != 1 {
		return zero, errNoOutput
	}
	v, ok := vals[0].(T)
	if !ok {
		return zero, errNoOutput
	}
	return v, nil
}

// probe finds how a token can leave an address that holds no gas: by an
// EIP-3009 authorisation, else an EIP-2612 permit, else not at all
// (Transfer). Either needs the token's EIP-712 domain, which is rebuilt
// from its name and version and must equal its DOMAIN_SEPARATOR: a token
// whose domain cannot be rebuilt is moved by Transfer rather than signed
// for blindly.
func probe(ctx context.Context, c Chain, chainID *big.Int, token common.Address) (Method, common.Hash) {
	onChain, err := call[[32]byte](ctx, c, token, "DOMAIN_SEPARATOR")
	if err != nil {
		return Transfer, common.Hash{}
	}
	name, err := call[string](ctx, c, token, "name")
	if err != nil {
		return Transfer, common.Hash{}
	}
	var domain common.Hash
	for _, version := range versions(ctx, c, token) {
		if d := domainSeparator(name, version, chainID, token); bytes.Equal(d[:], onChain[:]) {
			domain = d
			break
		}
	}
	if domain == (common.Hash{}) {
		return Transfer, common.Hash{}
	}
	if _, err := call[bool](ctx, c, token, "authorizationState", common.Address{1}, [32]byte{}); err == nil {
		return Authorization, domain
	}
	if _, err := call[*big.Int](ctx, c, token, "nonces", common.Address{1}); err == nil {
		return Permit, domain
	}
	return Transfer, common.Hash{}
}

// versions are the EIP-712 versions to try: the token's own, then the
// usual ones.
func versions(ctx context.Context, c Chain, token common.Address) []string {
	vs := []string{"1", "2"}
	if v, err := call[string](ctx, c, token, "version"); err == nil {
		vs = append([]string{v}, vs...)
	}
	return vs
}

func domainSeparator(name, version string, chainID *big.Int, token common.Address) common.Hash {
	return crypto.Keccak256Hash(domainTypeHash[:], crypto.Keccak256([]byte(name)), crypto.Keccak256([]byte(version)),
		common.LeftPadBytes(chainID.Bytes(), 32), common.LeftPadBytes(token[:], 32))
}

// signTyped signs an EIP-712 message of domain and returns v, r, s.
func signTyped(key *ecdsa.PrivateKey, domain common.Hash, structHash []byte) (uint8, [32]byte, [32]byte, error) {
	digest := crypto.Keccak256(append(append([]byte{0x19, 0x01}, domain[:]...), structHash...))
	sig, err := crypto.Sign(digest, key)
	if err != nil {
		return 0, [32]byte{}, [32]byte{}, err
	}
	var r, s [32]byte
	copy(r[:], sig[:32])
	copy(s[:], sig[32:64])
	return sig[64] + 27, r, s, nil
}

func word(n *big.Int) []byte { return common.LeftPadBytes(n.Bytes(), 32) }

// authorizationCall is the calldata of transferWithAuthorization moving
// value from key's address to to, signed by key.
func authorizationCall(key *ecdsa.PrivateKey, domain common.Hash, from, to common.Address, value, validBefore *big.Int, nonce [32]byte) ([]byte, error) {
	structHash := crypto.Keccak256(transferTypeHash[:], common.LeftPadBytes(from[:], 32), common.LeftPadBytes(to[:], 32),
		word(value), word(new(big.Int)), word(validBefore), nonce[:])
	v, r, s, err := signTyped(key, domain, structHash)
	if err != nil {
		return nil, err
	}
	return pack("transferWithAuthorization", from, to, value, new(big.Int), validBefore, nonce, v, r, s), nil
}

// permitCall is the calldata of permit letting spender move value of
// key's address, signed by key.
func permitCall(key *ecdsa.PrivateKey, domain common.Hash, owner, spender common.Address, value, nonce, deadline *big.Int) ([]byte, error) {
	structHash := crypto.Keccak256(permitTypeHash[:], common.LeftPadBytes(owner[:], 32), common.LeftPadBytes(spender[:], 32),
		word(value), word(nonce), word(deadline))
	v, r, s, err := signTyped(key, domain, structHash)
	if err != nil {
		return nil, err
	}
	return pack("permit", owner, spender, value, deadline, v, r, s), nil
}
