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

// DevPriceFeedMetaData contains all meta data concerning the DevPriceFeed contract.
var DevPriceFeedMetaData = bind.MetaData{
	ABI: "[{\"inputs\":[{\"internalType\":\"string\",\"name\":\"description_\",\"type\":\"string\"},{\"internalType\":\"int256\",\"name\":\"initialAnswer\",\"type\":\"int256\"}],\"stateMutability\":\"nonpayable\",\"type\":\"constructor\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"int256\",\"name\":\"current\",\"type\":\"int256\"},{\"indexed\":true,\"internalType\":\"uint256\",\"name\":\"roundId\",\"type\":\"uint256\"},{\"indexed\":false,\"internalType\":\"uint256\",\"name\":\"updatedAt\",\"type\":\"uint256\"}],\"name\":\"AnswerUpdated\",\"type\":\"event\"},{\"inputs\":[],\"name\":\"decimals\",\"outputs\":[{\"internalType\":\"uint8\",\"name\":\"\",\"type\":\"uint8\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"description\",\"outputs\":[{\"internalType\":\"string\",\"name\":\"\",\"type\":\"string\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"latestAnswer\",\"outputs\":[{\"internalType\":\"int256\",\"name\":\"\",\"type\":\"int256\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"latestRoundData\",\"outputs\":[{\"internalType\":\"uint80\",\"name\":\"roundId\",\"type\":\"uint80\"},{\"internalType\":\"int256\",\"name\":\"answer\",\"type\":\"int256\"},{\"internalType\":\"uint256\",\"name\":\"startedAt\",\"type\":\"uint256\"},{\"internalType\":\"uint256\",\"name\":\"updatedAt\",\"type\":\"uint256\"},{\"internalType\":\"uint80\",\"name\":\"answeredInRound\",\"type\":\"uint80\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"owner\",\"outputs\":[{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"int256\",\"name\":\"newAnswer\",\"type\":\"int256\"}],\"name\":\"setAnswer\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"version\",\"outputs\":[{\"internalType\":\"uint256\",\"name\":\"\",\"type\":\"uint256\"}],\"stateMutability\":\"view\",\"type\":\"function\"}]",
	ID:  "DevPriceFeed",
	Bin: "0x60a060405234801561000f575f5ffd5b5060405161071538038061071583398101604081905261002e916100e9565b336080525f61003d8382610221565b506100478161004e565b505061030c565b6001805481905f9061006a9083906001600160501b03166102db565b82546101009290920a6001600160501b038181021990931691831602179091556002839055426003819055600154604051918252909116915082907f0559884fd3a460db3073b7fc896cc77986f16e378210ded43186175bf646fc5f9060200160405180910390a350565b634e487b7160e01b5f52604160045260245ffd5b5f5f604083850312156100fa575f5ffd5b82516001600160401b0381111561010f575f5ffd5b8301601f8101851361011f575f5ffd5b80516001600160401b03811115610138576101386100d5565b604051601f8201601f19908116603f011681016001600160401b0381118282101715610166576101666100d5565b60405281815282820160200187101561017d575f5ffd5b8160208401602083015e5f60209282018301529401519395939450505050565b600181811c908216806101b157607f821691505b6020821081036101cf57634e487b7160e01b5f52602260045260245ffd5b50919050565b601f82111561021c57805f5260205f20601f840160051c810160208510156101fa5750805b601f840160051c820191505b81811015610219575f8155600101610206565b50505b505050565b81516001600160401b0381111561023a5761023a6100d5565b61024e81610248845461019d565b846101d5565b6020601f821160018114610280575f83156102695750848201515b5f19600385901b1c1916600184901b178455610219565b5f84815260208120601f198516915b828110156102af578785015182556020948501946001909201910161028f565b50848210156102cc57868401515f19600387901b60f8161c191681555b50505050600190811b01905550565b6001600160501b03818116838216019081111561030657634e487b7160e01b5f52601160045260245ffd5b92915050565b6080516103eb61032a5f395f818160d101526101f301526103eb5ff3fe608060405234801561000f575f5ffd5b506004361061007a575f3560e01c80637284e416116100585780637284e416146100b75780638da5cb5b146100cc57806399213cd81461010b578063feaf968c14610120575f5ffd5b8063313ce5671461007e57806350d25bcd1461009d57806354fd4d50146100af575b5f5ffd5b610086600881565b60405160ff90911681526020015b60405180910390f35b6002545b604051908152602001610094565b6100a1600481565b6100bf61015d565b60405161009491906102fd565b6100f37f000000000000000000000000000000000000000000000000000000000000000081565b6040516001600160a01b039091168152602001610094565b61011e610119366004610332565b6101e8565b005b6001546002546003546040805169ffffffffffffffffffff909416808552602085019390935283018190526060830152608082015260a001610094565b5f805461016990610349565b80601f016020809104026020016040519081016040528092919081815260200182805461019590610349565b80156101e05780601f106101b7576101008083540402835291602001916101e0565b820191905f5260205f20905b8154815290600101906020018083116101c357829003601f168201915b505050505081565b336001600160a01b037f000000000000000000000000000000000000000000000000000000000000000016146102645760405162461bcd60e51b815260206004820152601760248201527f4465765072696365466565643a206e6f74206f776e6572000000000000000000604482015260640160405180910390fd5b61026d81610270565b50565b6001805481905f9061028f90839069ffffffffffffffffffff16610381565b82546101009290920a69ffffffffffffffffffff8181021990931691831602179091556002839055426003819055600154604051918252909116915082907f0559884fd3a460db3073b7fc896cc77986f16e378210ded43186175bf646fc5f9060200160405180910390a350565b602081525f82518060208401528060208501604085015e5f604082850101526040601f19601f83011684010191505092915050565b5f60208284031215610342575f5ffd5b5035919050565b600181811c9082168061035d57607f821691505b60208210810361037b57634e487b7160e01b5f52602260045260245ffd5b50919050565b69ffffffffffffffffffff81811683821601908111156103af57634e487b7160e01b5f52601160045260245ffd5b9291505056fea264697066735822122038d2539e13d90be7d8da6c16c71417bd9ca272582752f02bc75113daba90a4a164736f6c634300081c0033",
}

// DevPriceFeed is an auto generated Go binding around an Ethereum contract.
type DevPriceFeed struct {
	abi abi.ABI
}

// GetABI returns the ABI associated with this contract binding.
func (c *DevPriceFeed) GetABI() abi.ABI {
	return c.abi
}

// NewDevPriceFeed creates a new instance of DevPriceFeed.
func NewDevPriceFeed() *DevPriceFeed {
	parsed, err := DevPriceFeedMetaData.ParseABI()
	if err != nil {
		panic(errors.New("invalid ABI: " + err.Error()))
	}
	return &DevPriceFeed{abi: *parsed}
}

// Instance creates a wrapper for a deployed contract instance at the given address.
// Use this to create the instance object passed to abigen v2 library functions Call, Transact, etc.
func (c *DevPriceFeed) Instance(backend bind.ContractBackend, addr common.Address) *bind.BoundContract {
	return bind.NewBoundContract(addr, c.abi, backend, backend, backend)
}

// PackConstructor is the Go binding used to pack the parameters required for
// contract deployment.
//
// Solidity: constructor(string description_, int256 initialAnswer) returns()
func (devPriceFeed *DevPriceFeed) PackConstructor(description_ string, initialAnswer *big.Int) []byte {
	enc, err := devPriceFeed.abi.Pack("", description_, initialAnswer)
	if err != nil {
		panic(err)
	}
	return enc
}

// PackDecimals is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x313ce567.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function decimals() view returns(uint8)
func (devPriceFeed *DevPriceFeed) PackDecimals() []byte {
	enc, err := devPriceFeed.abi.Pack("decimals")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackDecimals is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x313ce567.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function decimals() view returns(uint8)
func (devPriceFeed *DevPriceFeed) TryPackDecimals() ([]byte, error) {
	return devPriceFeed.abi.Pack("decimals")
}

// UnpackDecimals is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x313ce567.
//
// Solidity: function decimals() view returns(uint8)
func (devPriceFeed *DevPriceFeed) UnpackDecimals(data []byte) (uint8, error) {
	out, err := devPriceFeed.abi.Unpack("decimals", data)
	if err != nil {
		return *new(uint8), err
	}
	out0 := *abi.ConvertType(out[0], new(uint8)).(*uint8)
	return out0, nil
}

// PackDescription is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x7284e416.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function description() view returns(string)
func (devPriceFeed *DevPriceFeed) PackDescription() []byte {
	enc, err := devPriceFeed.abi.Pack("description")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackDescription is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x7284e416.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function description() view returns(string)
func (devPriceFeed *DevPriceFeed) TryPackDescription() ([]byte, error) {
	return devPriceFeed.abi.Pack("description")
}

// UnpackDescription is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x7284e416.
//
// Solidity: function description() view returns(string)
func (devPriceFeed *DevPriceFeed) UnpackDescription(data []byte) (string, error) {
	out, err := devPriceFeed.abi.Unpack("description", data)
	if err != nil {
		return *new(string), err
	}
	out0 := *abi.ConvertType(out[0], new(string)).(*string)
	return out0, nil
}

// PackLatestAnswer is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x50d25bcd.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function latestAnswer() view returns(int256)
func (devPriceFeed *DevPriceFeed) PackLatestAnswer() []byte {
	enc, err := devPriceFeed.abi.Pack("latestAnswer")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackLatestAnswer is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x50d25bcd.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function latestAnswer() view returns(int256)
func (devPriceFeed *DevPriceFeed) TryPackLatestAnswer() ([]byte, error) {
	return devPriceFeed.abi.Pack("latestAnswer")
}

// UnpackLatestAnswer is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x50d25bcd.
//
// Solidity: function latestAnswer() view returns(int256)
func (devPriceFeed *DevPriceFeed) UnpackLatestAnswer(data []byte) (*big.Int, error) {
	out, err := devPriceFeed.abi.Unpack("latestAnswer", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// PackLatestRoundData is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xfeaf968c.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function latestRoundData() view returns(uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)
func (devPriceFeed *DevPriceFeed) PackLatestRoundData() []byte {
	enc, err := devPriceFeed.abi.Pack("latestRoundData")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackLatestRoundData is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xfeaf968c.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function latestRoundData() view returns(uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)
func (devPriceFeed *DevPriceFeed) TryPackLatestRoundData() ([]byte, error) {
	return devPriceFeed.abi.Pack("latestRoundData")
}

// LatestRoundDataOutput serves as a container for the return parameters of contract
// method LatestRoundData.
type LatestRoundDataOutput struct {
	RoundId         *big.Int
	Answer          *big.Int
	StartedAt       *big.Int
	UpdatedAt       *big.Int
	AnsweredInRound *big.Int
}

// UnpackLatestRoundData is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xfeaf968c.
//
// Solidity: function latestRoundData() view returns(uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)
func (devPriceFeed *DevPriceFeed) UnpackLatestRoundData(data []byte) (LatestRoundDataOutput, error) {
	out, err := devPriceFeed.abi.Unpack("latestRoundData", data)
	outstruct := new(LatestRoundDataOutput)
	if err != nil {
		return *outstruct, err
	}
	outstruct.RoundId = abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	outstruct.Answer = abi.ConvertType(out[1], new(big.Int)).(*big.Int)
	outstruct.StartedAt = abi.ConvertType(out[2], new(big.Int)).(*big.Int)
	outstruct.UpdatedAt = abi.ConvertType(out[3], new(big.Int)).(*big.Int)
	outstruct.AnsweredInRound = abi.ConvertType(out[4], new(big.Int)).(*big.Int)
	return *outstruct, nil
}

// PackOwner is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x8da5cb5b.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function owner() view returns(address)
func (devPriceFeed *DevPriceFeed) PackOwner() []byte {
	enc, err := devPriceFeed.abi.Pack("owner")
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
func (devPriceFeed *DevPriceFeed) TryPackOwner() ([]byte, error) {
	return devPriceFeed.abi.Pack("owner")
}

// UnpackOwner is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x8da5cb5b.
//
// Solidity: function owner() view returns(address)
func (devPriceFeed *DevPriceFeed) UnpackOwner(data []byte) (common.Address, error) {
	out, err := devPriceFeed.abi.Unpack("owner", data)
	if err != nil {
		return *new(common.Address), err
	}
	out0 := *abi.ConvertType(out[0], new(common.Address)).(*common.Address)
	return out0, nil
}

// PackSetAnswer is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x99213cd8.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function setAnswer(int256 newAnswer) returns()
func (devPriceFeed *DevPriceFeed) PackSetAnswer(newAnswer *big.Int) []byte {
	enc, err := devPriceFeed.abi.Pack("setAnswer", newAnswer)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackSetAnswer is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x99213cd8.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function setAnswer(int256 newAnswer) returns()
func (devPriceFeed *DevPriceFeed) TryPackSetAnswer(newAnswer *big.Int) ([]byte, error) {
	return devPriceFeed.abi.Pack("setAnswer", newAnswer)
}

// PackVersion is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x54fd4d50.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function version() view returns(uint256)
func (devPriceFeed *DevPriceFeed) PackVersion() []byte {
	enc, err := devPriceFeed.abi.Pack("version")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackVersion is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x54fd4d50.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function version() view returns(uint256)
func (devPriceFeed *DevPriceFeed) TryPackVersion() ([]byte, error) {
	return devPriceFeed.abi.Pack("version")
}

// UnpackVersion is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x54fd4d50.
//
// Solidity: function version() view returns(uint256)
func (devPriceFeed *DevPriceFeed) UnpackVersion(data []byte) (*big.Int, error) {
	out, err := devPriceFeed.abi.Unpack("version", data)
	if err != nil {
		return new(big.Int), err
	}
	out0 := abi.ConvertType(out[0], new(big.Int)).(*big.Int)
	return out0, nil
}

// DevPriceFeedAnswerUpdated represents a AnswerUpdated event raised by the DevPriceFeed contract.
type DevPriceFeedAnswerUpdated struct {
	Current   *big.Int
	RoundId   *big.Int
	UpdatedAt *big.Int
	Raw       *types.Log // Blockchain specific contextual infos
}

const DevPriceFeedAnswerUpdatedEventName = "AnswerUpdated"

// ContractEventName returns the user-defined event name.
func (DevPriceFeedAnswerUpdated) ContractEventName() string {
	return DevPriceFeedAnswerUpdatedEventName
}

// UnpackAnswerUpdatedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event AnswerUpdated(int256 indexed current, uint256 indexed roundId, uint256 updatedAt)
func (devPriceFeed *DevPriceFeed) UnpackAnswerUpdatedEvent(log *types.Log) (*DevPriceFeedAnswerUpdated, error) {
	event := "AnswerUpdated"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != devPriceFeed.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(DevPriceFeedAnswerUpdated)
	if len(log.Data) > 0 {
		if err := devPriceFeed.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range devPriceFeed.abi.Events[event].Inputs {
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
