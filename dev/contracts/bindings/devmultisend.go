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

// DevMultisendMetaData contains all meta data concerning the DevMultisend contract.
var DevMultisendMetaData = bind.MetaData{
	ABI: "[{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"address\",\"name\":\"to\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"value\",\"type\":\"uint256\"}],\"name\":\"NativeSent\",\"type\":\"event\"},{\"inputs\":[{\"internalType\":\"address[]\",\"name\":\"recipients\",\"type\":\"address[]\"},{\"internalType\":\"uint256[]\",\"name\":\"amounts\",\"type\":\"uint256[]\"}],\"name\":\"sendNative\",\"outputs\":[],\"stateMutability\":\"payable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"address\",\"name\":\"token\",\"type\":\"address\"},{\"internalType\":\"address[]\",\"name\":\"recipients\",\"type\":\"address[]\"},{\"internalType\":\"uint256[]\",\"name\":\"amounts\",\"type\":\"uint256[]\"}],\"name\":\"sendToken\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"}]",
	ID:  "DevMultisend",
	Bin: "0x6080604052348015600e575f5ffd5b506106278061001c5f395ff3fe608060405260043610610028575f3560e01c80630a333a0f1461002c578063318adb8b1461004d575b5f5ffd5b348015610037575f5ffd5b5061004b61004636600461048d565b610060565b005b61004b61005b36600461050d565b6101e0565b8281146100b45760405162461bcd60e51b815260206004820152601d60248201527f4465764d756c746973656e643a206c656e677468206d69736d6174636800000060448201526064015b60405180910390fd5b5f5b838110156101d857856001600160a01b03166323b872dd338787858181106100e0576100e0610579565b90506020020160208101906100f5919061058d565b86868681811061010757610107610579565b6040516001600160e01b031960e088901b1681526001600160a01b039586166004820152949093166024850152506020909102013560448201526064016020604051808303815f875af1158015610160573d5f5f3e3d5ffd5b505050506040513d601f19601f8201168201806040525081019061018491906105ad565b6101d05760405162461bcd60e51b815260206004820152601d60248201527f4465764d756c746973656e643a207472616e73666572206661696c656400000060448201526064016100ab565b6001016100b6565b505050505050565b82811461022f5760405162461bcd60e51b815260206004820152601d60248201527f4465764d756c746973656e643a206c656e677468206d69736d6174636800000060448201526064016100ab565b5f805b848110156103c75783838281811061024c5761024c610579565b905060200201358261025e91906105cc565b91505f86868381811061027357610273610579565b9050602002016020810190610288919061058d565b6001600160a01b03168585848181106102a3576102a3610579565b905060200201356040515f6040518083038185875af1925050503d805f81146102e7576040519150601f19603f3d011682016040523d82523d5f602084013e6102ec565b606091505b505090508061033d5760405162461bcd60e51b815260206004820152601960248201527f4465764d756c746973656e643a2073656e64206661696c65640000000000000060448201526064016100ab565b86868381811061034f5761034f610579565b9050602002016020810190610364919061058d565b6001600160a01b03167f541898aec092707283113bff40960b1e5b991d41aa1f0e6339a7d5ffe53627a28686858181106103a0576103a0610579565b905060200201356040516103b691815260200190565b60405180910390a250600101610232565b503481146104235760405162461bcd60e51b8152602060048201526024808201527f4465764d756c746973656e643a2076616c7565206973206e6f742074686520746044820152631bdd185b60e21b60648201526084016100ab565b5050505050565b80356001600160a01b0381168114610440575f5ffd5b919050565b5f5f83601f840112610455575f5ffd5b50813567ffffffffffffffff81111561046c575f5ffd5b6020830191508360208260051b8501011115610486575f5ffd5b9250929050565b5f5f5f5f5f606086880312156104a1575f5ffd5b6104aa8661042a565b9450602086013567ffffffffffffffff8111156104c5575f5ffd5b6104d188828901610445565b909550935050604086013567ffffffffffffffff8111156104f0575f5ffd5b6104fc88828901610445565b969995985093965092949392505050565b5f5f5f5f60408587031215610520575f5ffd5b843567ffffffffffffffff811115610536575f5ffd5b61054287828801610445565b909550935050602085013567ffffffffffffffff811115610561575f5ffd5b61056d87828801610445565b95989497509550505050565b634e487b7160e01b5f52603260045260245ffd5b5f6020828403121561059d575f5ffd5b6105a68261042a565b9392505050565b5f602082840312156105bd575f5ffd5b815180151581146105a6575f5ffd5b808201808211156105eb57634e487b7160e01b5f52601160045260245ffd5b9291505056fea2646970667358221220adc13d95876619b88419c3c5d372e872fa11ad893ab17a780b539e268a97703864736f6c634300081c0033",
}

// DevMultisend is an auto generated Go binding around an Ethereum contract.
type DevMultisend struct {
	abi abi.ABI
}

// GetABI returns the ABI associated with this contract binding.
func (c *DevMultisend) GetABI() abi.ABI {
	return c.abi
}

// NewDevMultisend creates a new instance of DevMultisend.
func NewDevMultisend() *DevMultisend {
	parsed, err := DevMultisendMetaData.ParseABI()
	if err != nil {
		panic(errors.New("invalid ABI: " + err.Error()))
	}
	return &DevMultisend{abi: *parsed}
}

// Instance creates a wrapper for a deployed contract instance at the given address.
// Use this to create the instance object passed to abigen v2 library functions Call, Transact, etc.
func (c *DevMultisend) Instance(backend bind.ContractBackend, addr common.Address) *bind.BoundContract {
	return bind.NewBoundContract(addr, c.abi, backend, backend, backend)
}

// PackSendNative is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x318adb8b.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function sendNative(address[] recipients, uint256[] amounts) payable returns()
func (devMultisend *DevMultisend) PackSendNative(recipients []common.Address, amounts []*big.Int) []byte {
	enc, err := devMultisend.abi.Pack("sendNative", recipients, amounts)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackSendNative is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x318adb8b.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function sendNative(address[] recipients, uint256[] amounts) payable returns()
func (devMultisend *DevMultisend) TryPackSendNative(recipients []common.Address, amounts []*big.Int) ([]byte, error) {
	return devMultisend.abi.Pack("sendNative", recipients, amounts)
}

// PackSendToken is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x0a333a0f.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function sendToken(address token, address[] recipients, uint256[] amounts) returns()
func (devMultisend *DevMultisend) PackSendToken(token common.Address, recipients []common.Address, amounts []*big.Int) []byte {
	enc, err := devMultisend.abi.Pack("sendToken", token, recipients, amounts)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackSendToken is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x0a333a0f.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function sendToken(address token, address[] recipients, uint256[] amounts) returns()
func (devMultisend *DevMultisend) TryPackSendToken(token common.Address, recipients []common.Address, amounts []*big.Int) ([]byte, error) {
	return devMultisend.abi.Pack("sendToken", token, recipients, amounts)
}

// DevMultisendNativeSent represents a NativeSent event raised by the DevMultisend contract.
type DevMultisendNativeSent struct {
	To    common.Address
	Value *big.Int
	Raw   *types.Log // Blockchain specific contextual infos
}

const DevMultisendNativeSentEventName = "NativeSent"

// ContractEventName returns the user-defined event name.
func (DevMultisendNativeSent) ContractEventName() string {
	return DevMultisendNativeSentEventName
}

// UnpackNativeSentEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event NativeSent(address indexed to, uint256 value)
func (devMultisend *DevMultisend) UnpackNativeSentEvent(log *types.Log) (*DevMultisendNativeSent, error) {
	event := "NativeSent"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != devMultisend.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(DevMultisendNativeSent)
	if len(log.Data) > 0 {
		if err := devMultisend.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range devMultisend.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}
