package sweep

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
)

// Source is what the API tells a sweep: the network's assets and chain,
// and the environment's funded deposit addresses.
type Source struct {
	ChainID   *big.Int
	Assets    []Asset
	Addresses []Address
}

// FromAPI reads a sweep's Source from the API at baseURL (without
// /api/v1) with a secret API key of the environment to sweep: the assets
// of network and every deposit address with a confirmed or finalized
// transfer. Only the key is sent; no private key leaves the machine.
func FromAPI(ctx context.Context, hc *http.Client, baseURL, apiKey, projectID, network string) (Source, error) {
	base := strings.TrimRight(baseURL, "/") + "/api/v1"
	var src Source
	var assets []struct {
		ID           string `json:"id"`
		Symbol       string `json:"symbol"`
		Decimals     int32  `json:"decimals"`
		Network      string `json:"network"`
		ChainID      int64  `json:"chainId"`
		TokenAddress string `json:"tokenAddress"`
	}
	if _, err := getJSON(ctx, hc, base+"/assets", apiKey, &assets); err != nil {
		return src, err
	}
	var known []string
	for _, a := range assets {
		if a.Network != network {
			if !slices.Contains(known, a.Network) {
				known = append(known, a.Network)
			}
			continue
		}
		if a.TokenAddress != "" && !common.IsHexAddress(a.TokenAddress) {
			return src, fmt.Errorf("asset %s: token address %q", a.ID, a.TokenAddress)
		}
		src.ChainID = big.NewInt(a.ChainID)
		src.Assets = append(src.Assets, Asset{ID: a.ID, Symbol: a.Symbol, Decimals: a.Decimals, Token: common.HexToAddress(a.TokenAddress)})
	}
	if len(src.Assets) == 0 {
		return src, fmt.Errorf("the API has no assets on network %q (it has %s)", network, strings.Join(known, ", "))
	}
	for page := 1; ; page++ {
		var items []struct {
			Index         uint32     `json:"index"`
			Address       string     `json:"address"`
			SessionID     string     `json:"checkoutSessionId"`
			SessionStatus string     `json:"sessionStatus"`
			LateUntil     *time.Time `json:"lateUntil"`
		}
		u := fmt.Sprintf("%s/projects/%s/deposit-addresses?funded=true&limit=100&page=%d", base, url.PathEscape(projectID), page)
		more, err := getJSON(ctx, hc, u, apiKey, &items)
		if err != nil {
			return src, err
		}
		for _, d := range items {
			if !common.IsHexAddress(d.Address) {
				return src, fmt.Errorf("deposit address %d: %q", d.Index, d.Address)
			}
			ended := d.SessionStatus == "completed" || d.SessionStatus == "expired" || d.SessionStatus == "canceled"
			a := Address{Index: d.Index, Address: common.HexToAddress(d.Address), SessionID: d.SessionID, Ended: ended}
			if d.LateUntil != nil {
				a.LateUntil = *d.LateUntil
			}
			src.Addresses = append(src.Addresses, a)
		}
		if !more {
			return src, nil
		}
	}
}

// getJSON reads the envelope at u into data and tells whether a next page
// follows.
func getJSON(ctx context.Context, hc *http.Client, u, apiKey string, data any) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Authorization", "Bearer "+apiKey)
	res, err := hc.Do(req)
	if err != nil {
		return false, err
	}
	defer res.Body.Close()
	var env struct {
		Success bool            `json:"success"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
		Meta    struct {
			Pagination struct {
				HasNextPage bool `json:"hasNextPage"`
			} `json:"pagination"`
		} `json:"meta"`
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if err := json.NewDecoder(res.Body).Decode(&env); err != nil {
		return false, fmt.Errorf("GET %s: %s, not the API's envelope", u, res.Status)
	}
	if !env.Success {
		return false, fmt.Errorf("GET %s: %s: %s (%s)", u, res.Status, env.Message, env.Error.Code)
	}
	if err := json.Unmarshal(env.Data, data); err != nil {
		return false, fmt.Errorf("GET %s: %w", u, err)
	}
	return env.Meta.Pagination.HasNextPage, nil
}
