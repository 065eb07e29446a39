package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"time"
)

// runProbe is `paymentsd probe [--jsonrpc] URL`: a container's health
// check where the image has no shell or HTTP client. It succeeds when URL
// answers 2xx within 3 seconds; with --jsonrpc, when a JSON-RPC node at
// URL answers eth_chainId.
func runProbe(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("probe", flag.ContinueOnError)
	fs.SetOutput(out)
	jsonrpc := fs.Bool("jsonrpc", false, "ask a JSON-RPC node for its chain ID")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("probe: want one URL (paymentsd probe [--jsonrpc] URL)")
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	method, body := http.MethodGet, []byte(nil)
	if *jsonrpc {
		method, body = http.MethodPost, []byte(`{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}`)
	}
	req, err := http.NewRequestWithContext(ctx, method, fs.Arg(0), bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	defer res.Body.Close()
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("probe: %s answered %s", fs.Arg(0), res.Status)
	}
	if *jsonrpc {
		var r struct {
			Result string `json:"result"`
		}
		if err := json.NewDecoder(io.LimitReader(res.Body, 1<<16)).Decode(&r); err != nil || r.Result == "" {
			return fmt.Errorf("probe: %s gave no chain ID", fs.Arg(0))
		}
	}
	return nil
}
