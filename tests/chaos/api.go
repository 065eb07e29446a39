package chaos

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum/common"
)

// apiClient calls the engine's REST API as a merchant's backend and a
// payer's wallet do.
type apiClient struct {
	http *http.Client
	// retries counts the requests tried again (postWith).
	retries *atomic.Int64
}

type apiResponse struct {
	Status int
	Header http.Header
	Raw    []byte
	Data   json.RawMessage
}

func (c apiClient) post(ctx context.Context, url, key string, body any) (apiResponse, error) {
	var h map[string]string
	if key != "" {
		h = map[string]string{"Authorization": "Bearer " + key}
	}
	return c.postWith(ctx, url, h, body)
}

// postWith posts body with the headers given (a session's cookie). It
// retries as a merchant's backend does while the engine's infrastructure
// is down: a refused or dropped connection, or an answer of 502, 503 or
// 504, is tried again a second later (or after Retry-After), for up to
// three minutes, under one Idempotency-Key, so that a retry of a request
// the engine did take is answered with its first response; a 409 saying
// the first try is still being processed is waited out likewise.
func (c apiClient) postWith(ctx context.Context, url string, headers map[string]string, body any) (apiResponse, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return apiResponse{}, err
	}
	key := make([]byte, 16)
	_, _ = rand.Read(key)
	idempotency := hex.EncodeToString(key)
	deadline := time.Now().Add(3 * time.Minute)
	for {
		out, err := c.postOnce(ctx, url, idempotency, headers, raw)
		wait := time.Second
		switch {
		case err == nil && !retryable(out):
			return out, nil
		case err == nil:
			if s, e := strconv.Atoi(out.Header.Get("Retry-After")); e == nil && s > 0 {
				wait = time.Duration(min(s, 10)) * time.Second
			}
		case ctx.Err() != nil:
			return out, err
		}
		if time.Now().After(deadline) {
			return out, err
		}
		c.retries.Add(1)
		if err := sleep(ctx, wait); err != nil {
			return out, err
		}
	}
}

// retryable are the answers a client tries again: the engine or what it
// needs is down for now, or the first try of the same request (a try the
// client gave up on) is still running.
func retryable(r apiResponse) bool {
	switch r.Status {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	case http.StatusConflict:
		return bytes.Contains(r.Raw, []byte("still being processed"))
	}
	return false
}

func (c apiClient) postOnce(ctx context.Context, url, idempotency string, headers map[string]string, raw []byte) (apiResponse, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(raw))
	if err != nil {
		return apiResponse{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", idempotency)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return apiResponse{}, err
	}
	defer resp.Body.Close()
	out := apiResponse{Status: resp.StatusCode, Header: resp.Header}
	if out.Raw, err = io.ReadAll(io.LimitReader(resp.Body, 1<<20)); err != nil {
		return out, err
	}
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	_ = json.Unmarshal(out.Raw, &env)
	out.Data = env.Data
	return out, nil
}

// session is a checkout session the run opened, as the API returned it.
type session struct {
	ID        string
	Token     string
	Address   common.Address
	ExpiresAt time.Time
	Short     bool
	Class     string
	Options   map[string]sessionOption // by asset ID
}

type sessionOption struct {
	Due   *big.Int
	Token common.Address // zero for the native coin
	// Address is where the option is paid when it is not the session's
	// deposit address: a Bitcoin address.
	Address string
}

// openSession opens a session for amountUSD on the plan through base, the
// URL of an API whose session lifetime suits the scenario.
func (c apiClient) openSession(ctx context.Context, base, planID, amountUSD string) (*session, error) {
	r, err := c.post(ctx, base+"/api/v1/checkout/sessions", "", map[string]any{"paymentPlanId": planID, "amountUsd": amountUSD})
	if err != nil {
		return nil, fmt.Errorf("open session: %w", err)
	}
	if r.Status != http.StatusCreated {
		return nil, fmt.Errorf("open session: %d %s", r.Status, r.Raw)
	}
	var d struct {
		ID             string    `json:"id"`
		Token          string    `json:"token"`
		DepositAddress string    `json:"depositAddress"`
		ExpiresAt      time.Time `json:"expiresAt"`
		PaymentOptions []struct {
			AssetDefinitionID string `json:"assetDefinitionId"`
			TokenAddress      string `json:"tokenAddress"`
			AmountBaseUnits   string `json:"amountBaseUnits"`
			DepositAddress    string `json:"depositAddress"`
		} `json:"paymentOptions"`
	}
	if err := json.Unmarshal(r.Data, &d); err != nil {
		return nil, fmt.Errorf("open session: %w: %s", err, r.Raw)
	}
	s := &session{ID: d.ID, Token: d.Token, Address: common.HexToAddress(d.DepositAddress), ExpiresAt: d.ExpiresAt,
		Options: map[string]sessionOption{}}
	for _, o := range d.PaymentOptions {
		due, ok := new(big.Int).SetString(o.AmountBaseUnits, 10)
		if !ok {
			return nil, fmt.Errorf("open session: amount due %q", o.AmountBaseUnits)
		}
		opt := sessionOption{Due: due, Address: o.DepositAddress}
		if o.TokenAddress != "" {
			opt.Token = common.HexToAddress(o.TokenAddress)
		}
		s.Options[o.AssetDefinitionID] = opt
	}
	return s, nil
}

// submit posts a transaction hash as the payer's wallet does.
func (c apiClient) submit(ctx context.Context, base string, s *session, txHash common.Hash) (apiResponse, error) {
	return c.post(ctx, base+"/api/v1/checkout/sessions/"+s.Token+"/payments", "",
		map[string]any{"network": network, "txHash": txHash.Hex()})
}
