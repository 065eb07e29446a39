package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/chainwatch"
	"github.com/paymentsd/paymentsd/internal/keys"
	"github.com/paymentsd/paymentsd/payment"
	"github.com/paymentsd/paymentsd/workflows"
)

// depositAddress takes the next unused address of a project's deposit key
// for the environment, with its derivation index.
func (svc Checkout) depositAddress(ctx context.Context, projectID string, isLive bool) (string, *int64, error) {
	xpub, index, err := svc.store.Chains().NextDepositIndex(ctx, projectID, isLive)
	if errors.Is(err, payment.ErrNotFound) {
		return "", nil, &payment.Error{Kind: payment.KindValidation, Message: "Validation failed", Details: []payment.FieldError{{
			Field: "paymentPlanId", Message: "the plan's project has no deposit key for " + environment(isLive) +
				" (POST …/deposit-key, or paymentsd admin set-deposit-key)"}}}
	}
	if err != nil {
		return "", nil, fmt.Errorf("deposit index: %w", err)
	}
	key, err := keys.ParseKey(xpub)
	if err != nil {
		return "", nil, fmt.Errorf("deposit key of %s: %w", projectID, err)
	}
	// An address that is a verified recipient (of any project) is never a
	// session's deposit address: its transfers would be the session's. Its
	// index is skipped; the next is taken.
	for skipped := 0; ; skipped++ {
		addr, err := key.DeriveAddress(uint32(index))
		if err != nil {
			return "", nil, err
		}
		taken, err := svc.store.Checkout().IsVerifiedRecipient(ctx, addr.Hex())
		if err != nil {
			return "", nil, fmt.Errorf("deposit address: %w", err)
		}
		if !taken {
			return addr.Hex(), &index, nil
		}
		slog.WarnContext(ctx, "deposit address skipped: it is a verified recipient, so whoever verified it holds this deposit key",
			"project", projectID, "index", index, "address", addr.Hex())
		if skipped >= 16 {
			return "", nil, fmt.Errorf("deposit address: %d derived addresses in a row are verified recipients", skipped+1)
		}
		if _, index, err = svc.store.Chains().NextDepositIndex(ctx, projectID, isLive); err != nil {
			return "", nil, fmt.Errorf("deposit index: %w", err)
		}
	}
}

// rate is an asset's USD price for a quote; ok is false when it cannot be
// had now (no chain configured for a price feed, or the feed failing), and
// the asset is then left out of the session's options.
func (svc Checkout) rate(ctx context.Context, a payment.Asset) (decimal.Decimal, bool) {
	if a.Price.Kind == payment.PriceUSDPegged {
		return decimal.NewFromInt(1), true
	}
	if svc.chains[a.Network] == nil {
		return decimal.Decimal{}, false // not offered: its network is not served
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	r, err := chainwatch.Rate(ctx, svc.chains, a, svc.now())
	if err != nil {
		slog.WarnContext(ctx, "price feed unavailable", "asset", a.ID, "err", err)
		return decimal.Decimal{}, false
	}
	return r, true
}

// depositAddressesChecked is how many of a key's first addresses
// SetDepositKey looks up among other environments' sessions.
const depositAddressesChecked = 5

// SetDepositKey sets a project's extended public key for an environment.
// A key is known by its identity (keys.Key.Identity: its public key
// and chain code, what derives its addresses), not by its string: one
// whose identity another project, or the project's other environment, has
// ever set derives that one's addresses and is refused (409), whatever
// its version, depth, parent fingerprint or child number. So is one whose
// first addresses another environment's sessions hold (a key replaced
// before identities were recorded).
func (svc Checkout) SetDepositKey(ctx context.Context, projectID string, isLive bool, xpub string) error {
	key, err := keys.ParseKey(xpub)
	if err != nil {
		var probs payment.Problems
		probs.Add("xpub", err.Error())
		return probs.Err()
	}
	if _, err := svc.store.Checkout().GetProject(ctx, projectID); err != nil {
		return err
	}
	// A key replaced before identities were recorded (migration 00022)
	// is known by its addresses: the first ones, held by another
	// environment's sessions, are its.
	var first []string
	for i := range uint32(depositAddressesChecked) {
		a, err := key.DeriveAddress(i)
		if err != nil {
			return err
		}
		first = append(first, a.Hex())
	}
	_, held, err := svc.store.Chains().DepositAddressHolder(ctx, projectID, isLive, first)
	switch {
	case err != nil:
		return fmt.Errorf("deposit addresses: %w", err)
	case held:
		err = payment.ErrConflict
	default:
		// The key reveals every address it derives: the log names it by
		// its ends and its fingerprint only.
		err = svc.audited(ctx, projectID, isLive, payment.AuditDepositKeySet, "deposit_key", projectID,
			map[string]any{"xpub": xpub[:12] + "…" + xpub[len(xpub)-6:], "fingerprint": key.Identity()},
			func(ctx context.Context) error {
				return svc.store.Chains().SetDepositKey(ctx, projectID, isLive, xpub, key.Identity(), svc.now())
			})
	}
	if errors.Is(err, payment.ErrConflict) {
		return payment.Conflict("This deposit key derives the addresses of a key another project or environment has set " +
			"(the same public key and chain code, whatever its version, depth, parent fingerprint or child number): " +
			"give each project environment a key of its own, e.g. another account (m/44'/60'/1')")
	}
	return err
}

// SubmitPayment registers a transaction hash the payer's wallet sent to a
// session's deposit address, mined or not: the session's workflow records
// it as a claim, pending until the transaction is mined and its transfers
// decide (see payment.MatchTransfers). It returns the session's record of
// that transaction, and never another session's: a hash that pays another
// session helps that session and fails this claim. nil means it was not
// recorded within the request's patience; it will be.
func (svc Payments) SubmitPayment(ctx context.Context, token, network, txHash string) (*payment.Transaction, error) {
	v, err := svc.Checkout().SessionByToken(ctx, token)
	if err != nil {
		return nil, err
	}
	s := v.Session
	var probs payment.Problems
	networks := []string{}
	for _, o := range s.PaymentOptions {
		if !slices.Contains(networks, o.Network) {
			networks = append(networks, o.Network)
		}
	}
	if !slices.Contains(networks, network) {
		probs.Add("network", "must be one of the session's networks: "+strings.Join(networks, ", "))
	}
	if !payment.ValidTxHash(txHash) {
		probs.Add("txHash", payment.TxHashProblem)
	}
	if err := probs.Err(); err != nil {
		return nil, err
	}
	c, ok := svc.chains[network]
	if !ok {
		return nil, &payment.Error{Kind: payment.KindUnavailable, Message: "network " + network + " is not watched by this deployment"}
	}
	if err := svc.Checkout().sessionWorkflow(ctx, s.ID); err != nil {
		return nil, err
	}
	in := workflows.SubmitInput{Network: network, ChainID: c.Network.ChainID, TxHash: strings.ToLower(txHash)}
	ctx, cancel := context.WithTimeout(ctx, submitPatience)
	defer cancel()
	var t payment.Transaction
	err = svc.update(ctx, "submit payment", "network", workflows.SubmitPaymentUpdateOptions(s.ID, in), &t)
	switch {
	case errors.Is(err, errWorkflowEnded):
		return nil, payment.Conflict("The checkout session no longer takes payments")
	case errors.Is(err, context.DeadlineExceeded):
		// The workflow has it and has not recorded it yet: the answer
		// says the submission was accepted.
		return nil, nil
	case err != nil:
		return nil, err
	}
	return &t, nil
}

// submitPatience is how long a payer's submission waits for its record.
const submitPatience = 10 * time.Second

// ResumeTransaction starts again the workflow of an on-chain transaction
// the engine has records of, when it is not running (it failed, or was
// terminated): the new run brings the records in line with the chain and
// tells their sessions, so an operator resumes a stuck payment without
// editing the database. A running workflow is left as it is. It returns the
// workflow's ID.
func (svc Payments) ResumeTransaction(ctx context.Context, chainID int64, txHash string) (string, error) {
	if !payment.ValidTxHash(txHash) {
		var probs payment.Problems
		probs.Add("txHash", payment.TxHashProblem)
		return "", probs.Err()
	}
	records, err := svc.store.Payments().TransactionRecords(ctx, chainID, txHash)
	if err != nil {
		return "", err
	}
	if len(records) == 0 {
		return "", payment.NotFound(fmt.Sprintf("Transaction %s on chain %d", txHash, chainID))
	}
	r := records[0]
	// A transfer to a shared recipient that matched no session has none:
	// its workflow follows it for the project.
	s := payment.Session{ProjectID: r.ProjectID, IsLive: r.IsLive}
	if r.CheckoutSessionID != "" {
		if s, err = svc.store.Checkout().SessionByID(ctx, r.CheckoutSessionID); err != nil {
			return "", err
		}
	}
	p := workflows.SessionTransfer{SessionID: s.ID, Network: r.Network, ChainID: chainID, TxHash: r.TxHash, LogIndex: r.LogIndex,
		To: r.ToAddress, Source: "operator"}
	run, err := svc.temporal.ExecuteWorkflow(ctx, workflows.TransactionStartOptions(s, p), workflows.WorkflowTransaction,
		workflows.TransactionInput{Transfer: p, Session: s})
	if err != nil {
		return "", fmt.Errorf("start transaction workflow: %w", err)
	}
	return run.GetID(), nil
}

// Rescan scans blocks from..to of a network again for transfers to deposit
// addresses, hands them to their sessions the way chainwatch does, and
// waits for the result. It is safe to run twice, or while the network's
// scanner runs: every transfer counts once.
func (svc Chains) Rescan(ctx context.Context, network string, from, to uint64) (workflows.RescanResult, error) {
	var probs payment.Problems
	if network == "" {
		probs.Add("network", "is required")
	}
	if from > to {
		probs.Add("from", "must not be after to")
	}
	if err := probs.Err(); err != nil {
		return workflows.RescanResult{}, err
	}
	in := workflows.RescanInput{Network: network, From: from, To: to, Step: chainwatch.DefaultMaxRange}
	run, err := svc.temporal.ExecuteWorkflow(ctx, workflows.RescanStartOptions(in), workflows.WorkflowRescan, in)
	if err != nil {
		return workflows.RescanResult{}, fmt.Errorf("start rescan: %w", err)
	}
	var res workflows.RescanResult
	if err := run.Get(ctx, &res); err != nil {
		return res, fmt.Errorf("rescan %s: %w", run.GetID(), err)
	}
	return res, nil
}

// Assets lists the deployment's asset definitions.
func (svc *Service) Assets() []payment.Asset { return svc.catalog.Assets }

// ExplorerTxURL is a transaction's page on its network's block explorer,
// "" when the network has none.
func (svc *Service) ExplorerTxURL(network, hash string) string {
	if c, ok := svc.chains[network]; ok {
		return c.Network.TxURL(hash)
	}
	return ""
}

// Catalog returns the deployment's asset catalog.
func (svc *Service) Catalog() payment.Catalog { return svc.catalog }

// bitcoinAddress takes the next address of a project's Bitcoin account
// key for the environment, on the environment's Bitcoin network, with its
// derivation index.
func (svc Checkout) bitcoinAddress(ctx context.Context, projectID string, isLive bool) (string, *int64, error) {
	var family chainwatch.Family
	for _, c := range svc.chains {
		if f := c.Family(); f.Capabilities().AccountKey && c.Network.IsLive == isLive {
			family = f
		}
	}
	if family == nil {
		return "", nil, fmt.Errorf("no Bitcoin network of the session's environment is configured")
	}
	xpub, addressType, index, err := svc.store.Chains().NextBitcoinIndex(ctx, projectID, isLive)
	if errors.Is(err, payment.ErrNotFound) {
		var probs payment.Problems
		probs.Add("paymentPlanId", "the plan's project has no Bitcoin account key for "+environment(isLive)+
			" (POST …/bitcoin-deposit-key, or paymentsd admin set-deposit-key --bitcoin)")
		return "", nil, probs.Err()
	}
	if err != nil {
		return "", nil, fmt.Errorf("bitcoin index: %w", err)
	}
	addr, err := family.DeriveAddress(xpub, addressType, uint32(index))
	if err != nil {
		return "", nil, fmt.Errorf("bitcoin key of %s: %w", projectID, err)
	}
	return addr, &index, nil
}
