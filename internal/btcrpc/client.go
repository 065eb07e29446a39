// Package btcrpc is the engine's connection to Bitcoin nodes (Bitcoin Core
// or btcd) over their JSON-RPC: Client is one node, every call bound to a
// context; Failover is one over several nodes of a network, with the
// calls the engine makes.
//
// btcd's rpcclient takes no context and its HTTP client no timeout, so a
// node that stops answering would hold a scan for good: the calls are made
// here on net/http, with btcjson's error type and wire's decoding.
package btcrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/btcsuite/btcd/btcjson"

	"github.com/paymentsd/paymentsd/internal/redact"
)

// Client makes JSON-RPC calls on one node.
type Client struct {
	url, user, pass string
	http            *http.Client
	id              atomic.Uint64
}

// New is a Client of the node at rawURL, http(s)://user:password@host:port
// (the node's rpcuser and rpcpassword; Bitcoin Core's cookie is
// __cookie__:<the cookie file's value>). An https node's certificate is
// verified against the system's roots.
func New(rawURL string) (*Client, error) {
	redact.RegisterURL(rawURL)
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("bitcoin node URL %q: want http(s)://user:password@host:port", redact.URL(rawURL))
	}
	c := &Client{http: &http.Client{}}
	if u.User != nil {
		c.user = u.User.Username()
		c.pass, _ = u.User.Password()
		u.User = nil
	}
	c.url = u.String()
	return c, nil
}

// String is the node's URL as errors and logs name it: its scheme and
// host, and a fingerprint of its credentials, path and query (redact.URL).
func (c *Client) String() string { return redact.URL(c.url) }

type request struct {
	JSONRPC string `json:"jsonrpc"`
	ID      uint64 `json:"id"`
	Method  string `json:"method"`
	Params  []any  `json:"params"`
}

type response struct {
	Result json.RawMessage   `json:"result"`
	Error  *btcjson.RPCError `json:"error"`
}

// ErrNotAnswered wraps a call's failure to get an answer from the node:
// it could not be reached, it refused the credentials, it answered
// something other than JSON-RPC. A node's answer that is an error is a
// *btcjson.RPCError instead.
var ErrNotAnswered = errors.New("the bitcoin node did not answer")

// Call calls method with params and decodes the result into result (nil
// to drop it). An error the node answers is a *btcjson.RPCError; any other
// wraps ErrNotAnswered.
func (c *Client) Call(ctx context.Context, result any, method string, params ...any) error {
	if params == nil {
		params = []any{}
	}
	body, err := json.Marshal(request{JSONRPC: "1.0", ID: c.id.Add(1), Method: method, Params: params})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.user != "" || c.pass != "" {
		req.SetBasicAuth(c.user, c.pass)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrNotAnswered, method, redact.Error(err))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrNotAnswered, method, redact.Error(err))
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return fmt.Errorf("%w: %s: the node refused the credentials (HTTP %d): check the URL's user and password", ErrNotAnswered, method, resp.StatusCode)
	}
	// Bitcoin Core answers an error with HTTP 500 or 404 and the error in
	// the body; btcd with 200.
	var r response
	if err := json.Unmarshal(raw, &r); err != nil || (r.Error == nil && r.Result == nil) {
		return fmt.Errorf("%w: %s: HTTP %d: %s", ErrNotAnswered, method, resp.StatusCode, snippet(raw))
	}
	if r.Error != nil {
		return r.Error
	}
	if result == nil {
		return nil
	}
	if err := json.Unmarshal(r.Result, result); err != nil {
		return fmt.Errorf("%s: decoding the answer: %w", method, err)
	}
	return nil
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	if s == "" {
		return "(an empty body)"
	}
	return s
}
