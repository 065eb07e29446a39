package chainwatch

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/shopspring/decimal"
)

// aggregatorABI is the part of Chainlink's AggregatorV3Interface the
// engine reads.
var aggregatorABI = func() abi.ABI {
	a, err := abi.JSON(strings.NewReader(`[
	{"name":"decimals","type":"function","stateMutability":"view","inputs":[],"outputs":[{"type":"uint8"}]},
	{"name":"latestRoundData","type":"function","stateMutability":"view","inputs":[],"outputs":[
		{"name":"roundId","type":"uint80"},{"name":"answer","type":"int256"},{"name":"startedAt","type":"uint256"},
		{"name":"updatedAt","type":"uint256"},{"name":"answeredInRound","type":"uint80"}]}]`))
	if err != nil {
		panic(err)
	}
	return a
}()

// LatestPrice reads a Chainlink-style aggregator's latest answer as a USD
// price per whole unit of the asset, with the time it was updated.
func LatestPrice(ctx context.Context, c ethereum.ContractCaller, aggregator common.Address) (decimal.Decimal, time.Time, error) {
	call := func(method string) ([]any, error) {
		data, err := aggregatorABI.Pack(method)
		if err != nil {
			return nil, err
		}
		out, err := c.CallContract(ctx, ethereum.CallMsg{To: &aggregator, Data: data}, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		return aggregatorABI.Unpack(method, out)
	}
	dec, err := call("decimals")
	if err != nil {
		return decimal.Decimal{}, time.Time{}, err
	}
	round, err := call("latestRoundData")
	if err != nil {
		return decimal.Decimal{}, time.Time{}, err
	}
	answer, updated := round[1].(*big.Int), round[3].(*big.Int)
	if answer.Sign() <= 0 {
		return decimal.Decimal{}, time.Time{}, fmt.Errorf("aggregator %s answered %s", aggregator, answer)
	}
	return decimal.NewFromBigInt(answer, -int32(dec[0].(uint8))), time.Unix(updated.Int64(), 0), nil
}
