package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"strconv"
	"strings"

	ethaccounts "github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/paymentsd/paymentsd/api"
	"github.com/paymentsd/paymentsd/dev/devchain"
)

// devAccountsSearched is how many dev accounts an address is looked up
// among.
const devAccountsSearched = 64

// runDevVerifyRecipient makes the dev stack's project the verified owner
// of a dev account's address, so that second-shape plans may pay it
// (`paymentsd dev verify-recipient <account index | address> [--project
// ID] [--live]`): it signs in as the dev stack's user (the project's
// owner), claims the address and signs the challenge with the account's
// key (personal_sign), as an owner does in the dashboard. It needs the dev
// stack running.
func runDevVerifyRecipient(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("dev verify-recipient", flag.ContinueOnError)
	apiURL := fs.String("api", "http://"+env("HTTP_ADDR", "127.0.0.1:8080"), "the API's base URL (default from HTTP_ADDR)")
	dataDir := fs.String("data", devDataDir, "the data folder of the running `paymentsd dev` (its user and project)")
	projectID := fs.String("project", "", "the project (default: the dev stack's sandbox project)")
	live := fs.Bool("live", false, "verify it in the live environment (default sandbox)")
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return errors.New("usage: paymentsd dev verify-recipient <dev account index | its address> [--project ID] [--live]")
	}
	who := args[0]
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	key, err := devAccountKey(who)
	if err != nil {
		return err
	}
	state, err := readDevState(*dataDir)
	if err != nil {
		return fmt.Errorf("the dev stack's state (%s): %w; is `paymentsd dev` running with --data %s?", devStateFile(*dataDir), err, *dataDir)
	}
	if *projectID == "" {
		*projectID = state.ProjectID
	}
	jar, _ := cookiejar.New(nil)
	c := &devClient{http: &http.Client{Jar: jar}, base: strings.TrimRight(*apiURL, "/")}
	if *live {
		c.env = "live"
	}
	// A fresh sign-in: claiming and verifying are sensitive actions.
	if _, err := c.call(ctx, http.MethodPost, "/api/v1/auth/login", map[string]string{"email": state.UserEmail, "password": state.UserPassword}); err != nil {
		return fmt.Errorf("sign in as %s: %w", state.UserEmail, err)
	}
	address := crypto.PubkeyToAddress(key.PublicKey).Hex()
	path := "/api/v1/projects/" + *projectID + "/recipients"
	claim, err := c.call(ctx, http.MethodPost, path, map[string]string{"address": address})
	if err != nil {
		return fmt.Errorf("claim %s: %w", address, err)
	}
	if claim["status"] != "verified" {
		challenge, _ := claim["challenge"].(string)
		sig, err := crypto.Sign(ethaccounts.TextHash([]byte(challenge)), key)
		if err != nil {
			return err
		}
		sig[64] += 27
		if _, err := c.call(ctx, http.MethodPost, path+"/"+address+"/verify", map[string]string{"signature": hexutil.Encode(sig)}); err != nil {
			return fmt.Errorf("verify %s: %w", address, err)
		}
	}
	env := "sandbox"
	if *live {
		env = "live"
	}
	fmt.Printf("%s is a verified recipient of project %s (%s): second-shape plans of the project may pay it.\n", address, *projectID, env)
	return nil
}

// devAccountKey is the key of a dev account, given by its index or its
// address.
func devAccountKey(who string) (*ecdsa.PrivateKey, error) {
	if i, err := strconv.Atoi(who); err == nil {
		a, err := devchain.DevAccount(i)
		return a.Key, err
	}
	if !common.IsHexAddress(who) {
		return nil, fmt.Errorf("%q is neither a dev account's index nor an address", who)
	}
	for i := range devAccountsSearched {
		a, err := devchain.DevAccount(i)
		if err != nil {
			return nil, err
		}
		if strings.EqualFold(a.Address.Hex(), who) {
			return a.Key, nil
		}
	}
	return nil, fmt.Errorf("%s is not one of the first %d dev accounts: only their keys are known here (verify other addresses in the dashboard)", who, devAccountsSearched)
}

// devClient calls the API with a session cookie.
type devClient struct {
	http *http.Client
	base string
	env  string // the environment header's value, when not the default
}

// call sends a JSON body and returns the envelope's data, or the API's
// error message.
func (c *devClient) call(ctx context.Context, method, path string, body any) (map[string]any, error) {
	raw, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.env != "" {
		req.Header.Set(api.EnvironmentHeader, c.env)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	var env struct {
		Data  map[string]any
		Error struct {
			Code, Message string
			Details       []struct{ Field, Message string }
		}
	}
	_ = json.Unmarshal(out, &env)
	if res.StatusCode >= 300 {
		msg := env.Error.Message
		for _, d := range env.Error.Details {
			msg += "; " + d.Field + ": " + d.Message
		}
		if msg == "" {
			msg = strings.TrimSpace(string(out))
		}
		return nil, fmt.Errorf("%s: %s", res.Status, msg)
	}
	return env.Data, nil
}
