// Code generated via abigen V2 - DO NOT EDIT.
// This file is a generated binding and any manual changes will be lost.

package bindings

import (
	"bytes"
	"errors"
	"math/big"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// Reference imports to suppress errors if they are not otherwise used.
var (
	_ = bytes.Equal
	_ = errors.New
	_ = big.NewInt
	_ = common.Big1
	_ = types.BloomLookup
	_ = abi.ConvertType
)

// DevForwarderMetaData contains all meta data concerning the DevForwarder contract.
var DevForwarderMetaData = bind.MetaData{
	ABI: "[{\"inputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"constructor\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"to\",\"type\":\"address\"},{\"internalType\":\"uint256\",\"name\":\"value\",\"type\":\"uint256\"},{\"internalType\":\"bytes\",\"name\":\"data\",\"type\":\"bytes\"}],\"name\":\"execute\",\"outputs\":[{\"internalType\":\"bytes\",\"name\":\"\",\"type\":\"bytes\"}],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"addresspayable\",\"name\":\"to\",\"type\":\"address\"}],\"name\":\"forward\",\"outputs\":[],\"stateMutability\":\"payable\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"owner\",\"outputs\":[{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"stateMutability\":\"payable\",\"type\":\"receive\"}]",
	ID:  "DevForwarder",
	Bin: "0x60a0604052348015600e575f5ffd5b50336080526080516103e46100315f395f81816067015261018701526103e45ff3fe608060405260043610610036575f3560e01c8063101e8952146100415780638da5cb5b14610056578063b61d27f6146100a6575f5ffd5b3661003d57005b5f5ffd5b61005461004f3660046102c3565b6100d2565b005b348015610061575f5ffd5b506100897f000000000000000000000000000000000000000000000000000000000000000081565b6040516001600160a01b0390911681526020015b60405180910390f35b3480156100b1575f5ffd5b506100c56100c03660046102e5565b61017a565b60405161009d919061036a565b5f816001600160a01b0316346040515f6040518083038185875af1925050503d805f811461011b576040519150601f19603f3d011682016040523d82523d5f602084013e610120565b606091505b50509050806101765760405162461bcd60e51b815260206004820152601c60248201527f446576466f727761726465723a20666f7277617264206661696c65640000000060448201526064015b60405180910390fd5b5050565b6060336001600160a01b037f000000000000000000000000000000000000000000000000000000000000000016146101f45760405162461bcd60e51b815260206004820152601b60248201527f446576466f727761726465723a206e6f7420746865206f776e65720000000000604482015260640161016d565b5f5f866001600160a01b031686868660405161021192919061039f565b5f6040518083038185875af1925050503d805f811461024b576040519150601f19603f3d011682016040523d82523d5f602084013e610250565b606091505b5091509150816102a25760405162461bcd60e51b815260206004820152601960248201527f446576466f727761726465723a2063616c6c206661696c656400000000000000604482015260640161016d565b9695505050505050565b6001600160a01b03811681146102c0575f5ffd5b50565b5f602082840312156102d3575f5ffd5b81356102de816102ac565b9392505050565b5f5f5f5f606085870312156102f8575f5ffd5b8435610303816102ac565b935060208501359250604085013567ffffffffffffffff811115610325575f5ffd5b8501601f81018713610335575f5ffd5b803567ffffffffffffffff81111561034b575f5ffd5b87602082840101111561035c575f5ffd5b949793965060200194505050565b602081525f82518060208401528060208501604085015e5f604082850101526040601f19601f83011684010191505092915050565b818382375f910190815291905056fea2646970667358221220cf2764a783b0f95df0ee79c1f5341e88b422076ba4d3691b92bb5253be35297964736f6c634300081c0033",
}

// DevForwarder is an auto generated Go binding around an Ethereum contract.
type DevForwarder struct {
	abi abi.ABI
}

// GetABI returns the ABI associated with this contract binding.
func (c *DevForwarder) GetABI() abi.ABI {
	return c.abi
}

// NewDevForwarder creates a new instance of DevForwarder.
func NewDevForwarder() *DevForwarder {
	parsed, err := DevForwarderMetaData.ParseABI()
	if err != nil {
		panic(errors.New("invalid ABI: " + err.Error()))
	}
	return &DevForwarder{abi: *parsed}
}

// Instance creates a wrapper for a deployed contract instance at the given address.
// Use this to create the instance object passed to abigen v2 library functions Call, Transact, etc.
func (c *DevForwarder) Instance(backend bind.ContractBackend, addr common.Address) *bind.BoundContract {
	return bind.NewBoundContract(addr, c.abi, backend, backend, backend)
}

// PackExecute is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xb61d27f6.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function execute(address to, uint256 value, bytes data) returns(bytes)
func (devForwarder *DevForwarder) PackExecute(to common.Address, value *big.Int, data []byte) []byte {
	enc, err := devForwarder.abi.Pack("execute", to, value, data)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackExecute is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xb61d27f6.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function execute(address to, uint256 value, bytes data) returns(bytes)
func (devForwarder *DevForwarder) TryPackExecute(to common.Address, value *big.Int, data []byte) ([]byte, error) {
	return devForwarder.abi.Pack("execute", to, value, data)
}

// UnpackExecute is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xb61d27f6.
//
// Solidity: function execute(address to, uint256 value, bytes data) returns(bytes)
func (devForwarder *DevForwarder) UnpackExecute(data []byte) ([]byte, error) {
	out, err := devForwarder.abi.Unpack("execute", data)
	if err != nil {
		return *new([]byte), err
	}
	out0 := *abi.ConvertType(out[0], new([]byte)).(*[]byte)
	return out0, nil
}

// PackForward is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x101e8952.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function forward(address to) payable returns()
func (devForwarder *DevForwarder) PackForward(to common.Address) []byte {
	enc, err := devForwarder.abi.Pack("forward", to)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackForward is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x101e8952.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function forward(address to) payable returns()
func (devForwarder *DevForwarder) TryPackForward(to common.Address) ([]byte, error) {
	return devForwarder.abi.Pack("forward", to)
}

// PackOwner is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x8da5cb5b.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function owner() view returns(address)
func (devForwarder *DevForwarder) PackOwner() []byte {
	enc, err := devForwarder.abi.Pack("owner")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackOwner is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x8da5cb5b.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function owner() view returns(address)
func (devForwarder *DevForwarder) TryPackOwner() ([]byte, error) {
	return devForwarder.abi.Pack("owner")
}

// UnpackOwner is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x8da5cb5b.
//
// Solidity: function owner() view returns(address)
func (devForwarder *DevForwarder) UnpackOwner(data []byte) (common.Address, error) {
	out, err := devForwarder.abi.Unpack("owner", data)
	if err != nil {
		return *new(common.Address), err
	}
	out0 := *abi.ConvertType(out[0], new(common.Address)).(*common.Address)
	return out0, nil
}
