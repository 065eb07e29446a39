package sweep

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
)

// Outcome is what became of one step.
type Outcome struct {
	Step   Step
	Amount *big.Int // what was sent to the destination (Native: what the balance allowed when sent)
	Hashes []common.Hash
	Err    error
}

// Execute signs and sends the plan's transactions in three rounds and
// waits for each round's receipts before the next: the relayer's (top-ups,
// authorisations, permits), then the addresses' transfers and the
// permits' transferFrom, then the native coin. Each signed transaction is
// in the journal before it is sent. A step that fails is reported in its
// Outcome and the others go on; an error is returned when the sweep
// could not go on (the journal, the node, a round not mined in time) and
// running it again resumes.
func Execute(ctx context.Context, cfg Config, p Plan, log io.Writer) ([]Outcome, error) {
	if cost := p.RelayerCost(); cost.Sign() > 0 && cost.Cmp(p.RelayerBalance) > 0 {
		return nil, fmt.Errorf("%w: it needs %s wei and holds %s", ErrRelayerShort, cost, p.RelayerBalance)
	}
	j, err := openJournal(cfg.Journal, p.ChainID)
	if err != nil {
		return nil, err
	}
	x := &executor{cfg: cfg, plan: p, j: j, log: log, signer: types.LatestSignerForChainID(p.ChainID)}
	outcomes := make([]Outcome, len(p.Steps))
	for i, s := range p.Steps {
		outcomes[i] = Outcome{Step: s, Amount: new(big.Int)}
	}
	for round := 1; round <= 3; round++ {
		var sent []*Outcome
		for i := range outcomes {
			o := &outcomes[i]
			if o.Err != nil {
				continue
			}
			did, err := x.send(ctx, round, o)
			if err != nil {
				if errors.Is(err, errJournal) || ctx.Err() != nil {
					return outcomes, err
				}
				o.Err = err
				fmt.Fprintf(log, "index %d %s: %v\n", o.Step.Index, o.Step.Asset.Symbol, err)
				continue
			}
			if did {
				sent = append(sent, o)
			}
		}
		if err := x.waitRound(ctx, sent); err != nil {
			return outcomes, err
		}
	}
	return outcomes, nil
}

type executor struct {
	cfg    Config
	plan   Plan
	j      *journal
	log    io.Writer
	signer types.Signer
	nonces map[common.Address]uint64
}

// send sends step o's transaction of round, if it has one.
func (x *executor) send(ctx context.Context, round int, o *Outcome) (bool, error) {
	s := o.Step
	c := x.cfg.Chain
	dest := x.plan.Destination
	switch {
	case round == 1 && s.Method == Authorization:
		key, _, err := x.cfg.Wallet.Key(s.Index)
		if err != nil {
			return false, err
		}
		validBefore, err := x.deadline(ctx)
		if err != nil {
			return false, err
		}
		var nonce [32]byte
		if _, err := rand.Read(nonce[:]); err != nil {
			return false, err
		}
		data, err := authorizationCall(key, s.domain, s.From, dest, s.Amount, validBefore, nonce)
		if err != nil {
			return false, err
		}
		return true, x.relay(ctx, o, s.Asset.Token, data, "authorization")
	case round == 1 && s.Method == Permit:
		key, _, err := x.cfg.Wallet.Key(s.Index)
		if err != nil {
			return false, err
		}
		deadline, err := x.deadline(ctx)
		if err != nil {
			return false, err
		}
		nonce, err := call[*big.Int](ctx, c, s.Asset.Token, "nonces", s.From)
		if err != nil {
			return false, fmt.Errorf("permit nonce: %w", err)
		}
		relayer := crypto.PubkeyToAddress(x.cfg.Relayer.PublicKey)
		data, err := permitCall(key, s.domain, s.From, relayer, s.Amount, nonce, deadline)
		if err != nil {
			return false, err
		}
		return true, x.relay(ctx, o, s.Asset.Token, data, "permit")
	case round == 1 && s.Method == Transfer && s.TopUp.Sign() > 0:
		return true, x.sendTx(ctx, o, x.cfg.Relayer, s.From, s.TopUp, nil, topUpGas, "gas top-up")
	case round == 2 && s.Method == Permit:
		return true, x.relay(ctx, o, s.Asset.Token, pack("transferFrom", s.From, dest, s.Amount), "transferFrom")
	case round == 2 && s.Method == Transfer:
		key, _, err := x.cfg.Wallet.Key(s.Index)
		if err != nil {
			return false, err
		}
		o.Amount.Set(s.Amount)
		return true, x.sendTx(ctx, o, key, s.Asset.Token, nil, pack("transfer", dest, s.Amount), s.Gas, "transfer")
	case round == 3 && s.Method == Native:
		key, _, err := x.cfg.Wallet.Key(s.Index)
		if err != nil {
			return false, err
		}
		// The balance now, after the round's transfers have paid their
		// gas (which may be less than planned).
		balance, err := c.BalanceAt(ctx, s.From, nil)
		if err != nil {
			return false, err
		}
		value := new(big.Int).Sub(balance, s.Fee)
		if s.Exact && value.Cmp(s.Amount) >= 0 {
			value.Set(s.Amount)
		} else if s.Exact {
			return false, fmt.Errorf("the balance (%s wei) no longer covers %s wei and its gas", balance, s.Amount)
		}
		if value.Sign() <= 0 {
			return false, fmt.Errorf("the balance (%s wei) no longer covers its gas", balance)
		}
		o.Amount.Set(value)
		return true, x.sendTx(ctx, o, key, dest, value, nil, s.Gas, "native transfer")
	}
	return false, nil
}

// relay sends data to token from the relayer, with the gas the node
// estimates for it (which also checks the signature it carries).
func (x *executor) relay(ctx context.Context, o *Outcome, token common.Address, data []byte, what string) error {
	relayer := crypto.PubkeyToAddress(x.cfg.Relayer.PublicKey)
	gas, err := x.cfg.Chain.EstimateGas(ctx, ethereum.CallMsg{From: relayer, To: &token, Data: data})
	if err != nil {
		return fmt.Errorf("%s fails on chain: %w", what, err)
	}
	if what != "permit" {
		o.Amount.Set(o.Step.Amount)
	}
	return x.sendTx(ctx, o, x.cfg.Relayer, token, nil, data, gas, what)
}

// deadline is an hour past the chain's head: when signed authorisations
// and permits stop being valid.
func (x *executor) deadline(ctx context.Context) (*big.Int, error) {
	head, err := x.cfg.Chain.HeaderByNumber(ctx, nil)
	if err != nil {
		return nil, err
	}
	return new(big.Int).SetUint64(head.Time + 3600), nil
}

// sendTx signs a legacy transaction at the plan's gas price, writes it to
// the journal and sends it.
func (x *executor) sendTx(ctx context.Context, o *Outcome, key *ecdsa.PrivateKey, to common.Address, value *big.Int, data []byte, gas uint64, what string) error {
	from := crypto.PubkeyToAddress(key.PublicKey)
	if x.nonces == nil {
		x.nonces = map[common.Address]uint64{}
	}
	nonce, ok := x.nonces[from]
	if !ok {
		n, err := x.cfg.Chain.PendingNonceAt(ctx, from)
		if err != nil {
			return fmt.Errorf("nonce of %s: %w", from, err)
		}
		nonce = n
	}
	if value == nil {
		value = new(big.Int)
	}
	tx, err := types.SignNewTx(key, x.signer, &types.LegacyTx{Nonce: nonce, GasPrice: x.plan.GasPrice, Gas: gas, To: &to, Value: value, Data: data})
	if err != nil {
		return err
	}
	raw, err := tx.MarshalBinary()
	if err != nil {
		return err
	}
	desc := fmt.Sprintf("index %d %s: %s", o.Step.Index, o.Step.Asset.Symbol, what)
	if err := x.j.add(journalEntry{Description: desc, From: from, Nonce: nonce, Hash: tx.Hash(), Raw: raw}); err != nil {
		return err
	}
	x.nonces[from] = nonce + 1
	o.Hashes = append(o.Hashes, tx.Hash())
	if err := x.cfg.Chain.SendTransaction(ctx, tx); err != nil && !alreadyKnown(err) {
		// The node refused it: the nonce stays unused, so the next
		// transaction from the same account must take it again.
		delete(x.nonces, from)
		x.j.settle(tx.Hash(), false)
		return fmt.Errorf("%s refused: %w", what, err)
	}
	fmt.Fprintf(x.log, "sent %s: %s\n", desc, tx.Hash())
	return nil
}

// waitRound waits for the receipts of the round's last transactions and
// marks a step whose transaction reverted as failed.
func (x *executor) waitRound(ctx context.Context, sent []*Outcome) error {
	var hashes []common.Hash
	for _, o := range sent {
		if o.Err == nil && len(o.Hashes) > 0 {
			hashes = append(hashes, o.Hashes[len(o.Hashes)-1])
		}
	}
	receipts, err := waitMined(ctx, x.cfg.Chain, hashes, x.cfg.wait())
	for _, r := range receipts {
		x.j.settle(r.TxHash, true)
	}
	if err != nil {
		_ = x.j.save()
		return err
	}
	for _, o := range sent {
		if o.Err != nil || len(o.Hashes) == 0 {
			continue
		}
		if r := receipts[o.Hashes[len(o.Hashes)-1]]; r != nil && r.Status != types.ReceiptStatusSuccessful {
			o.Err = fmt.Errorf("transaction %s reverted", r.TxHash)
			o.Amount.SetUint64(0)
			fmt.Fprintf(x.log, "index %d %s: %v\n", o.Step.Index, o.Step.Asset.Symbol, o.Err)
		}
	}
	return x.j.save()
}

// headReached says whether the node's head is at or past every receipt's
// block.
func headReached(ctx context.Context, c Chain, receipts map[common.Hash]*types.Receipt) (bool, error) {
	head, err := c.HeaderByNumber(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("read the head: %w", err)
	}
	for _, r := range receipts {
		if head.Number.Cmp(r.BlockNumber) < 0 {
			return false, nil
		}
	}
	return true, nil
}

func (c Config) wait() time.Duration {
	if c.Wait > 0 {
		return c.Wait
	}
	return 5 * time.Minute
}

// waitMined polls for the receipts of hashes until all are mined and the
// node's head has reached their blocks, or wait has passed. (A node shows
// a new block's receipts a moment before "latest" names the block, and a
// load-balanced endpoint may answer from a node a block behind: what is
// estimated next must see these transactions' state.)
func waitMined(ctx context.Context, c Chain, hashes []common.Hash, wait time.Duration) (map[common.Hash]*types.Receipt, error) {
	receipts := map[common.Hash]*types.Receipt{}
	deadline := time.Now().Add(wait)
	for {
		for _, h := range hashes {
			if receipts[h] != nil {
				continue
			}
			r, err := c.TransactionReceipt(ctx, h)
			if err == nil {
				receipts[h] = r
			} else if !errors.Is(err, ethereum.NotFound) {
				return receipts, fmt.Errorf("receipt of %s: %w", h, err)
			}
		}
		if len(receipts) == len(hashes) {
			reached, err := headReached(ctx, c, receipts)
			if err != nil || reached {
				return receipts, err
			}
		}
		if time.Now().After(deadline) && len(receipts) == len(hashes) {
			return receipts, fmt.Errorf("the node's head has not reached the blocks of its own receipts within %s: run the sweep again to resume", wait)
		}
		if time.Now().After(deadline) {
			return receipts, fmt.Errorf("%d transactions not mined within %s: run the sweep again to resume (the journal keeps them)", len(hashes)-len(receipts), wait)
		}
		select {
		case <-ctx.Done():
			return receipts, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func alreadyKnown(err error) bool {
	return strings.Contains(err.Error(), "already known")
}

// Resume finishes what an earlier run left in the journal: it sends each
// transaction not known to be mined again (the node takes it once, and
// refuses it if its nonce was used) and waits for them. It returns how
// many it found mined. A sweep resumed this way is then planned anew from
// the balances left.
func Resume(ctx context.Context, cfg Config, log io.Writer) (int, error) {
	chainID, err := cfg.Chain.ChainID(ctx)
	if err != nil {
		return 0, err
	}
	j, err := openJournal(cfg.Journal, chainID)
	if err != nil {
		return 0, err
	}
	var pending []common.Hash
	for _, e := range j.Entries {
		if e.Settled {
			continue
		}
		var tx types.Transaction
		if err := tx.UnmarshalBinary(e.Raw); err != nil || tx.Hash() != e.Hash {
			return 0, fmt.Errorf("journal %s: entry %s is damaged", cfg.Journal, e.Hash)
		}
		if _, err := cfg.Chain.TransactionReceipt(ctx, e.Hash); err == nil {
			pending = append(pending, e.Hash)
			continue
		}
		if err := cfg.Chain.SendTransaction(ctx, &tx); err != nil && !alreadyKnown(err) {
			// Another transaction took its nonce: it will never be mined.
			fmt.Fprintf(log, "resume: %s (%s) dropped: %v\n", e.Description, e.Hash, err)
			j.settle(e.Hash, false)
			continue
		}
		fmt.Fprintf(log, "resume: %s (%s) sent again\n", e.Description, e.Hash)
		pending = append(pending, e.Hash)
	}
	receipts, err := waitMined(ctx, cfg.Chain, pending, cfg.wait())
	for _, r := range receipts {
		j.settle(r.TxHash, true)
	}
	if serr := j.save(); err == nil {
		err = serr
	}
	return len(receipts), err
}

// journal is the sweep's record of every transaction it signed, written
// before each is sent.
type journal struct {
	path    string
	ChainID string         `json:"chainId"`
	Entries []journalEntry `json:"entries"`
}

type journalEntry struct {
	Description string         `json:"description"`
	From        common.Address `json:"from"`
	Nonce       uint64         `json:"nonce"`
	Hash        common.Hash    `json:"hash"`
	Raw         hexutil.Bytes  `json:"raw"`
	// Settled: mined (Mined) or never to be (refused, its nonce taken).
	Settled bool `json:"settled"`
	Mined   bool `json:"mined"`
}

var errJournal = errors.New("journal")

func openJournal(path string, chainID *big.Int) (*journal, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: no file given", errJournal)
	}
	j := &journal{path: path, ChainID: chainID.String()}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return j, nil
	case err != nil:
		return nil, fmt.Errorf("%w: %v", errJournal, err)
	}
	if err := json.Unmarshal(b, j); err != nil {
		return nil, fmt.Errorf("%w %s: %v", errJournal, path, err)
	}
	if j.ChainID != chainID.String() {
		return nil, fmt.Errorf("%w %s is of chain %s, not %s: give another file", errJournal, path, j.ChainID, chainID)
	}
	j.path = path
	return j, nil
}

func (j *journal) add(e journalEntry) error {
	j.Entries = append(j.Entries, e)
	return j.save()
}

func (j *journal) settle(h common.Hash, mined bool) {
	for i := range j.Entries {
		if j.Entries[i].Hash == h {
			j.Entries[i].Settled, j.Entries[i].Mined = true, mined
		}
	}
}

// save writes the journal with SaveJSON. It holds signed transactions,
// so only its owner may read it.
func (j *journal) save() error {
	if err := SaveJSON(j.path, j); err != nil {
		return fmt.Errorf("%w: %v", errJournal, err)
	}
	return nil
}

// SaveJSON writes v as JSON to a new file beside path, only its owner may
// read, syncs it and renames it over path, so a crash leaves the old file
// or the new one whole: how a journal of signed transactions is kept.
func SaveJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".sweep-journal-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err = tmp.Write(b); err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	return err
}

// MinedTransfer returns the hash of the last transfer an earlier run
// recorded in the journal and saw mined (an authorisation, a
// transferFrom, an address's own transfer): a transfer made once must
// not be planned again. Resume first, so that what was sent is settled.
func MinedTransfer(cfg Config, chainID *big.Int) (common.Hash, bool, error) {
	j, err := openJournal(cfg.Journal, chainID)
	if err != nil {
		return common.Hash{}, false, err
	}
	for i := len(j.Entries) - 1; i >= 0; i-- {
		e := j.Entries[i]
		if e.Mined && e.Description != "gas top-up" && e.Description != "permit" {
			return e.Hash, true, nil
		}
	}
	return common.Hash{}, false, nil
}
