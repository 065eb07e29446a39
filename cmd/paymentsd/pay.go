package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"net/http"
	"strings"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/dev/btcnode"
	"github.com/paymentsd/paymentsd/dev/contracts/bindings"
	"github.com/paymentsd/paymentsd/dev/devchain"
)

// runDevPay pays a checkout session from a funded dev account
// (`paymentsd dev pay <token> [--asset ID] [--amount X]`): the amount due
// by default, or any amount for partial and over-payments, in the asset
// chosen among the session's options. It needs the dev stack running.
func runDevPay(ctx context.Context, args []string) error {
	// The same configuration as `paymentsd dev`: the API at HTTP_ADDR, the
	// chain the dev stack of this folder's data runs.
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet("dev pay", flag.ContinueOnError)
	apiURL := fs.String("api", "http://"+cfg.HTTPAddr, "the API's base URL (default from HTTP_ADDR)")
	rpcURL := fs.String("rpc", "", "the dev chain's JSON-RPC URL (default: the one `paymentsd dev` runs with --data)")
	dataDir := fs.String("data", devDataDir, "the data folder of the running `paymentsd dev`")
	asset := fs.String("asset", "", "asset definition ID (default: the session's first option)")
	amount := fs.String("amount", "", "amount in the asset's units (default: what is still due)")
	account := fs.Int("account", 0, "dev account to pay from")
	bitcoinURL := fs.String("bitcoin-rpc", "", "the Bitcoin node's URL, for a bitcoin option (default: the one `paymentsd dev` runs with --data)")
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return errors.New("usage: paymentsd dev pay <session token> [--asset ID] [--amount X]")
	}
	token := args[0]
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *rpcURL == "" {
		*rpcURL = "http://127.0.0.1:8545"
		if s, err := readDevState(*dataDir); err == nil && s.ChainURL != "" {
			*rpcURL = s.ChainURL
		}
	}
	s, err := readCheckout(*apiURL, token)
	if err != nil {
		return err
	}
	opt, err := s.option(*asset)
	if err != nil {
		return err
	}
	units, err := payAmount(opt.Amount, *amount, s.AmountUSD, s.AmountPaidUSD, opt.Decimals)
	if err != nil {
		return err
	}
	if opt.DepositAddress != "" {
		if *bitcoinURL == "" {
			s, err := readDevState(*dataDir)
			if err != nil || s.BitcoinURL == "" {
				return errors.New("no Bitcoin node: run `paymentsd dev` here, or give --bitcoin-rpc")
			}
			*bitcoinURL = s.BitcoinURL
		}
		return payBitcoin(ctx, *bitcoinURL, opt.DepositAddress, units)
	}
	from, err := devchain.DevAccount(*account)
	if err != nil {
		return err
	}
	c, err := ethclient.DialContext(ctx, *rpcURL)
	if err != nil {
		return err
	}
	defer c.Close()
	to := common.HexToAddress(s.DepositAddress)
	hash, err := send(ctx, c, from, big.NewInt(opt.ChainID), opt.TokenAddress, to, units)
	if err != nil {
		return err
	}
	fmt.Printf("sent %s base units of %s from %s to %s\ntransaction %s\n", units, opt.AssetDefinitionID, from.Address, to, hash)
	return nil
}

// checkoutView is what `dev pay` reads of a session from the checkout
// API.
type checkoutView struct {
	DepositAddress string           `json:"depositAddress"`
	AmountUSD      string           `json:"amountUsd"`
	AmountPaidUSD  string           `json:"amountPaidUsd"`
	PaymentOptions []checkoutOption `json:"paymentOptions"`
}

type checkoutOption struct {
	AssetDefinitionID string `json:"assetDefinitionId"`
	TokenAddress      string `json:"tokenAddress"`
	Decimals          int    `json:"decimals"`
	Amount            string `json:"amount"`
	ChainID           int64  `json:"chainId"`
	DepositAddress    string `json:"depositAddress"`
}

// readCheckout reads the session of token from the checkout API at
// apiURL.
func readCheckout(apiURL, token string) (checkoutView, error) {
	var body struct {
		Data checkoutView `json:"data"`
	}
	res, err := http.Get(apiURL + "/api/v1/checkout/sessions/" + token)
	if err != nil {
		return checkoutView{}, fmt.Errorf("read session: %w", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return checkoutView{}, fmt.Errorf("read session: %s", res.Status)
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		return checkoutView{}, fmt.Errorf("read session: %w", err)
	}
	return body.Data, nil
}

// option is the session's option in asset, its first with asset "".
func (s checkoutView) option(asset string) (checkoutOption, error) {
	if len(s.PaymentOptions) == 0 {
		return checkoutOption{}, errors.New("the session has no payment option")
	}
	opt := s.PaymentOptions[0]
	if asset != "" {
		found := false
		for _, o := range s.PaymentOptions {
			if o.AssetDefinitionID == asset {
				opt, found = o, true
			}
		}
		if !found {
			return checkoutOption{}, fmt.Errorf("the session does not accept %s", asset)
		}
	}
	return opt, nil
}

// payBitcoin pays sats to a bitcoin session's address from the dev
// wallet of the Bitcoin node at nodeURL (btcnode.Attach), with a fee of
// 2,000 sats; the node's next block mines it.
func payBitcoin(ctx context.Context, nodeURL, address string, sats *big.Int) error {
	node, err := btcnode.Attach(nodeURL, "")
	if err != nil {
		return err
	}
	defer node.Stop()
	to, err := btcutil.DecodeAddress(address, btcnode.Params)
	if err != nil {
		return fmt.Errorf("the session's bitcoin address %q: %w", address, err)
	}
	tx, err := node.Send(ctx, []btcnode.Out{{To: to, Sats: sats.Int64()}}, 2_000)
	if err != nil {
		return err
	}
	fmt.Printf("sent %s sats from the dev bitcoin wallet to %s\ntransaction %s\n", sats, address, tx.TxHash())
	return nil
}

// payAmount is the amount to pay in base units: the one given, or what is
// still due at the session's quoted rate.
func payAmount(optionAmount, given, dueUSD, paidUSD string, decimals int) (*big.Int, error) {
	amount, err := decimal.NewFromString(optionAmount)
	if err != nil {
		return nil, err
	}
	if given != "" {
		if amount, err = decimal.NewFromString(given); err != nil || !amount.IsPositive() {
			return nil, fmt.Errorf("--amount: want a positive decimal")
		}
	} else if due, paid := decimal.RequireFromString(dueUSD), decimal.RequireFromString(paidUSD); paid.IsPositive() && paid.LessThan(due) {
		// The option's amount scaled by what is left of the USD due, in
		// base units, rounded up so that it never falls short.
		units := amount.Shift(int32(decimals)).BigInt()
		units.Mul(units, due.Sub(paid).Shift(6).BigInt())
		dueMicro := due.Shift(6).BigInt()
		q, r := new(big.Int).QuoRem(units, dueMicro, new(big.Int))
		if r.Sign() > 0 {
			q.Add(q, big.NewInt(1))
		}
		return q, nil
	}
	return amount.Shift(int32(decimals)).BigInt(), nil
}

func send(ctx context.Context, c *ethclient.Client, from devchain.Account, chainID *big.Int, token string, to common.Address, units *big.Int) (common.Hash, error) {
	opts := bind.NewKeyedTransactor(from.Key, chainID)
	opts.Context = ctx
	if token == "" {
		nonce, err := c.PendingNonceAt(ctx, from.Address)
		if err != nil {
			return common.Hash{}, err
		}
		tip, err := c.SuggestGasTipCap(ctx)
		if err != nil {
			return common.Hash{}, err
		}
		head, err := c.HeaderByNumber(ctx, nil)
		if err != nil {
			return common.Hash{}, err
		}
		gas, err := c.EstimateGas(ctx, ethereum.CallMsg{From: from.Address, To: &to, Value: units})
		if err != nil {
			return common.Hash{}, err
		}
		tx, err := opts.Signer(from.Address, types.NewTx(&types.DynamicFeeTx{ChainID: chainID, Nonce: nonce, GasTipCap: tip,
			GasFeeCap: new(big.Int).Add(tip, new(big.Int).Mul(head.BaseFee, big.NewInt(2))), Gas: gas, To: &to, Value: units}))
		if err != nil {
			return common.Hash{}, err
		}
		return tx.Hash(), c.SendTransaction(ctx, tx)
	}
	usdc := bindings.NewDevUSDC()
	tx, err := bind.Transact(usdc.Instance(c, common.HexToAddress(token)), opts, usdc.PackTransfer(to, units))
	if err != nil {
		return common.Hash{}, err
	}
	return tx.Hash(), nil
}
