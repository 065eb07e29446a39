package devchain

import (
	"context"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/paymentsd/paymentsd/dev/contracts/bindings"
)

// DeployPriceFeed deploys another dev price feed (description such as
// "BTC / USD") answering usd (8 decimals), mined before it returns.
func (c *Chain) DeployPriceFeed(ctx context.Context, description string, usd *big.Int) (common.Address, error) {
	var feed common.Address
	tx, err := c.send(ctx, c.Deployer, func(opts *bind.TransactOpts) (*types.Transaction, error) {
		addr, tx, err := bind.DeployContract(opts, common.FromHex(bindings.DevPriceFeedMetaData.Bin), c.client,
			c.feed.PackConstructor(description, usd))
		feed = addr
		return tx, err
	})
	if err == nil {
		err = c.commitAndCheck(ctx, tx)
	}
	if err != nil {
		return common.Address{}, fmt.Errorf("devchain: deploy the %s feed: %w", description, err)
	}
	return feed, nil
}

// SetETHPrice publishes a new ETH/USD answer (8 decimals) on the price
// feed as a new round, and mines it before returning so the next read sees
// it.
func (c *Chain) SetETHPrice(ctx context.Context, usd *big.Int) error {
	feed := c.feed.Instance(c.client, c.PriceFeed)
	h, err := c.send(ctx, c.Deployer, func(opts *bind.TransactOpts) (*types.Transaction, error) {
		return bind.Transact(feed, opts, c.feed.PackSetAnswer(usd))
	})
	if err != nil {
		return fmt.Errorf("devchain: set eth price: %w", err)
	}
	if err := c.commitAndCheck(ctx, h); err != nil {
		return fmt.Errorf("devchain: set eth price: %w", err)
	}
	return nil
}
