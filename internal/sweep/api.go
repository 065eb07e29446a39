package sweep

import (
	"bytes"
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
	if _, err := GetJSON(ctx, hc, base+"/assets", apiKey, &assets); err != nil {
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
		more, err := GetJSON(ctx, hc, u, apiKey, &items)
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

// GetJSON reads the API envelope at u into data and tells whether a next page
// follows.
func GetJSON(ctx context.Context, hc *http.Client, u, apiKey string, data any) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return false, err
	}
	return do(hc, req, apiKey, data)
}

// do sends req with the API key and reads its envelope's data into data
// (unless nil); it tells whether a next page follows.
func do(hc *http.Client, req *http.Request, apiKey string, data any) (bool, error) {
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
			Code    string `json:"code"`
			Details []struct {
				Field   string `json:"field"`
				Message string `json:"message"`
			} `json:"details"`
		} `json:"error"`
	}
	u := req.URL.String()
	if err := json.NewDecoder(res.Body).Decode(&env); err != nil {
		return false, fmt.Errorf("%s %s: %s, not the API's envelope", req.Method, u, res.Status)
	}
	if !env.Success {
		msg := env.Message
		for _, d := range env.Error.Details {
			msg += "; " + d.Field + " " + d.Message
		}
		return false, fmt.Errorf("%s %s: %s: %s (%s)", req.Method, u, res.Status, msg, env.Error.Code)
	}
	if data != nil {
		if err := json.Unmarshal(env.Data, data); err != nil {
			return false, fmt.Errorf("%s %s: %w", req.Method, u, err)
		}
	}
	return env.Meta.Pagination.HasNextPage, nil
}

// Refund is what the API tells `paymentsd refund send` of a refund: the
// prepared transfer, from a deposit address, of one asset.
type Refund struct {
	ID                string `json:"id"`
	Status            string `json:"status"`
	Network           string `json:"network"`
	ChainID           int64  `json:"chainId"`
	AssetDefinitionID string `json:"assetDefinitionId"`
	TokenAddress      string `json:"tokenAddress"`
	AmountBaseUnits   string `json:"amountBaseUnits"`
	FromAddress       string `json:"fromAddress"`
	ToAddress         string `json:"toAddress"`
	TxHash            string `json:"txHash"`
}

// RefundFromAPI reads a refund of the project's environment (the API
// key's).
func RefundFromAPI(ctx context.Context, hc *http.Client, baseURL, apiKey, projectID, refundID string) (Refund, error) {
	var r Refund
	u := fmt.Sprintf("%s/api/v1/projects/%s/refunds/%s", strings.TrimRight(baseURL, "/"), url.PathEscape(projectID), url.PathEscape(refundID))
	_, err := GetJSON(ctx, hc, u, apiKey, &r)
	return r, err
}

// ReportRefund tells the API the hash of the transaction that pays a
// refund; repeating it changes nothing.
func ReportRefund(ctx context.Context, hc *http.Client, baseURL, apiKey, projectID, refundID string, hash common.Hash) error {
	u := fmt.Sprintf("%s/api/v1/projects/%s/refunds/%s/transaction", strings.TrimRight(baseURL, "/"), url.PathEscape(projectID), url.PathEscape(refundID))
	return postHash(ctx, hc, u, apiKey, hash)
}

// postHash posts {txHash} to u.
func postHash(ctx context.Context, hc *http.Client, u, apiKey string, hash common.Hash) error {
	body, _ := json.Marshal(map[string]string{"txHash": hash.Hex()})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	_, err = do(hc, req, apiKey, nil)
	return err
}

// Batch is what the API tells `paymentsd payout send` of a payout batch:
// its address and its payouts' prepared transfers.
type Batch struct {
	ID          string        `json:"id"`
	Status      string        `json:"status"`
	FromAddress string        `json:"fromAddress"`
	Payouts     []BatchPayout `json:"payouts"`
}

// BatchPayout is one payout of a Batch.
type BatchPayout struct {
	ID                string `json:"id"`
	Line              int    `json:"line"`
	Status            string `json:"status"`
	ChainID           int64  `json:"chainId"`
	Network           string `json:"network"`
	AssetDefinitionID string `json:"assetDefinitionId"`
	Symbol            string `json:"symbol"`
	Decimals          int32  `json:"decimals"`
	TokenAddress      string `json:"tokenAddress"`
	AmountBaseUnits   string `json:"amountBaseUnits"`
	ToAddress         string `json:"toAddress"`
}

// BatchFromAPI reads a payout batch of the project's environment (the API
// key's) with its payouts.
func BatchFromAPI(ctx context.Context, hc *http.Client, baseURL, apiKey, projectID, batchID string) (Batch, error) {
	var b Batch
	u := fmt.Sprintf("%s/api/v1/projects/%s/payout-batches/%s", strings.TrimRight(baseURL, "/"), url.PathEscape(projectID), url.PathEscape(batchID))
	_, err := GetJSON(ctx, hc, u, apiKey, &b)
	return b, err
}

// ReportPayout tells the API the hash of the transaction that pays a
// payout; repeating it changes nothing.
func ReportPayout(ctx context.Context, hc *http.Client, baseURL, apiKey, projectID, payoutID string, hash common.Hash) error {
	u := fmt.Sprintf("%s/api/v1/projects/%s/payouts/%s/transaction", strings.TrimRight(baseURL, "/"), url.PathEscape(projectID), url.PathEscape(payoutID))
	return postHash(ctx, hc, u, apiKey, hash)
}
