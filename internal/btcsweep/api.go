package btcsweep

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"

	"github.com/paymentsd/paymentsd/internal/sweep"
)

// Funded is a deposit address of the account key with the outputs its
// confirmed and finalized payments left there, as the API lists them.
type Funded struct {
	Index     uint32
	Address   string
	SessionID string
	Outputs   []Paid
}

// Paid is a payment's output to a deposit address, or the change of the
// project's own refund or payout; Final when the engine holds the payment
// final (change: once mined).
type Paid struct {
	Out   wire.OutPoint
	Sats  int64
	Final bool
}

// ErrNotBitcoin is FromAPI's answer for a network whose assets are not
// bitcoin: an EVM network, swept by the sweep package.
var ErrNotBitcoin = errors.New("not a Bitcoin network")

// FromAPI lists, through the merchant's API, the project environment's
// funded Bitcoin deposit addresses (the API key's environment) when
// network is a Bitcoin network of the API's assets, and ErrNotBitcoin when
// it is another.
func FromAPI(ctx context.Context, hc *http.Client, baseURL, apiKey, projectID, network string) ([]Funded, error) {
	base := strings.TrimRight(baseURL, "/") + "/api/v1"
	var assets []struct {
		Network string `json:"network"`
		ChainID int64  `json:"chainId"`
	}
	if _, err := sweep.GetJSON(ctx, hc, base+"/assets", apiKey, &assets); err != nil {
		return nil, err
	}
	var known []string
	served := false
	for _, a := range assets {
		if a.Network != network {
			if !slices.Contains(known, a.Network) {
				known = append(known, a.Network)
			}
			continue
		}
		if a.ChainID != 0 {
			return nil, ErrNotBitcoin
		}
		served = true
	}
	if !served {
		return nil, fmt.Errorf("the API has no assets on network %q (it has %s)", network, strings.Join(known, ", "))
	}
	var funded []Funded
	for page := 1; ; page++ {
		var items []struct {
			Index     uint32 `json:"index"`
			Address   string `json:"address"`
			SessionID string `json:"checkoutSessionId"`
			Outputs   []struct {
				TxID   string `json:"txid"`
				Vout   uint32 `json:"vout"`
				Sats   string `json:"amountBaseUnits"`
				Status string `json:"status"`
			} `json:"outputs"`
		}
		u := fmt.Sprintf("%s/projects/%s/deposit-addresses?chain=bitcoin&funded=true&limit=100&page=%d", base, url.PathEscape(projectID), page)
		more, err := sweep.GetJSON(ctx, hc, u, apiKey, &items)
		if err != nil {
			return nil, err
		}
		for _, d := range items {
			f := Funded{Index: d.Index, Address: d.Address, SessionID: d.SessionID}
			for _, o := range d.Outputs {
				hash, err := chainhash.NewHashFromStr(o.TxID)
				if err != nil {
					return nil, fmt.Errorf("deposit address %d: output %s:%d: %w", d.Index, o.TxID, o.Vout, err)
				}
				sats, err := strconv.ParseInt(o.Sats, 10, 64)
				if err != nil || sats <= 0 {
					return nil, fmt.Errorf("deposit address %d: output %s:%d of %q satoshis", d.Index, o.TxID, o.Vout, o.Sats)
				}
				f.Outputs = append(f.Outputs, Paid{Out: *wire.NewOutPoint(hash, o.Vout), Sats: sats, Final: o.Status == "finalized" || o.Status == "change"})
			}
			funded = append(funded, f)
		}
		if !more {
			return funded, nil
		}
	}
}
