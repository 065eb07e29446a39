package sweep

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"io"
	"math/big"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/shopspring/decimal"
)

// Chain is what a sweep asks of a node; *ethclient.Client has it all.
type Chain interface {
	ChainID(ctx context.Context) (*big.Int, error)
	HeaderByNumber(ctx context.Context, number *big.Int) (*types.Header, error)
	BalanceAt(ctx context.Context, account common.Address, block *big.Int) (*big.Int, error)
	PendingNonceAt(ctx context.Context, account common.Address) (uint64, error)
	CallContract(ctx context.Context, msg ethereum.CallMsg, block *big.Int) ([]byte, error)
	CodeAt(ctx context.Context, account common.Address, block *big.Int) ([]byte, error)
	EstimateGas(ctx context.Context, msg ethereum.CallMsg) (uint64, error)
	SuggestGasPrice(ctx context.Context) (*big.Int, error)
	SendTransaction(ctx context.Context, tx *types.Transaction) error
	TransactionReceipt(ctx context.Context, hash common.Hash) (*types.Receipt, error)
}

// Method is how a step moves an asset out of a deposit address.
type Method string

const (
	// Authorization: an EIP-3009 transferWithAuthorization signed by the
	// address and sent by the relayer, which pays the gas.
	Authorization Method = "authorization"
	// Permit: an EIP-2612 permit signed by the address letting the relayer
	// spend the balance, then the relayer's transferFrom; it pays both.
	Permit Method = "permit"
	// Transfer: the address's own transfer, paying its gas in the native
	// coin; the relayer sends exactly what is missing first.
	Transfer Method = "transfer"
	// Native: the address sends its native coin, less its own gas.
	Native Method = "native"
)

// topUpGas is a plain native transfer's gas.
const topUpGas = 21_000

// relayedGas bounds the gas of the relayer's transactions for a token
// whose own transfer from the address takes transfer: they cannot be
// estimated before the address has signed, so the plan counts an
// authorisation (the transfer, the signature's check and the used nonce's
// record) as twice the transfer and 30,000 more, and a permit and its
// transferFrom as three transfers. Each is estimated by the node once
// signed, before it is sent, and pays only the gas it uses.
func relayedGas(m Method, transfer uint64) uint64 {
	if m == Permit {
		return 3 * transfer
	}
	return 2*transfer + 30_000
}

// Address is a deposit address to sweep, as the API lists it.
type Address struct {
	Index     uint32
	Address   common.Address
	SessionID string
	// Ended says the address's session is over (completed, expired or
	// canceled). Open sessions are left alone.
	Ended bool
	// LateUntil is when transfers to the address stop counting for its
	// session: until then no gas top-up is sent to it, since it would
	// count as a payment. Zero: no window.
	LateUntil time.Time
}

// Asset is an asset of the network being swept.
type Asset struct {
	ID       string
	Symbol   string
	Decimals int32
	// Token is the ERC-20 contract; the zero address is the native coin.
	Token common.Address
}

// Native reports whether the asset is the network's native coin.
func (a Asset) Native() bool { return a.Token == (common.Address{}) }

// Format writes base units in the asset's units.
func (a Asset) Format(units *big.Int) string {
	return decimal.NewFromBigInt(units, -a.Decimals).String() + " " + a.Symbol
}

// Config is what a sweep needs besides the addresses and assets.
type Config struct {
	Chain  Chain
	Wallet Wallet
	// Destination receives everything.
	Destination common.Address
	// Relayer pays the gas of authorisations and permits and sends gas
	// to addresses that hold a token without either; nil: those steps
	// are skipped unless the address holds the gas itself.
	Relayer *ecdsa.PrivateKey
	// GasPrice is every transaction's (legacy) gas price; nil: the node's
	// suggestion and a quarter more, so a rising base fee does not leave
	// the sweep waiting.
	GasPrice *big.Int
	// Journal is the file every signed transaction is written to before it
	// is sent.
	Journal string
	// Wait bounds each round's wait for its receipts; default 5 minutes.
	Wait time.Duration

	// skip leaves methods out when probing tokens, so that tests reach
	// each path with one token.
	skip map[Method]bool
}

// Step moves one asset out of one address.
type Step struct {
	Index  uint32
	From   common.Address
	Asset  Asset
	Amount *big.Int // what the destination receives (Native: at least)
	Method Method
	Gas    uint64   // of the step's own transactions (the relayer's: planned, estimated when sent)
	Fee    *big.Int // Gas at the plan's gas price
	TopUp  *big.Int // Transfer: what the relayer sends the address first (zero: none)
	// Exact sends Amount of the native coin as it is, not the balance
	// less the gas (PlanTransfer's step).
	Exact bool

	domain common.Hash
}

// PaidByRelayer is what the step costs the relayer: its fee for
// authorisations and permits, the top-up and its gas for transfers.
func (s Step) PaidByRelayer(gasPrice *big.Int) *big.Int {
	switch s.Method {
	case Authorization, Permit:
		return s.Fee
	case Transfer:
		if s.TopUp.Sign() > 0 {
			return new(big.Int).Add(s.TopUp, new(big.Int).Mul(big.NewInt(topUpGas), gasPrice))
		}
	}
	return new(big.Int)
}

// Skip is a balance the plan leaves where it is, and why.
type Skip struct {
	Index  uint32
	From   common.Address
	Asset  Asset
	Amount *big.Int
	Reason string
}

// Plan is what a sweep will do, read from the chain before anything is
// signed.
type Plan struct {
	ChainID        *big.Int
	Destination    common.Address
	GasPrice       *big.Int
	Relayer        common.Address // zero: none
	RelayerBalance *big.Int
	Steps          []Step
	Skipped        []Skip
	// Warnings name assets that could not be read (no contract at the
	// token's address on this chain): nothing of theirs is planned.
	Warnings []string
}

// RelayerCost is what the plan costs the relayer in the native coin.
func (p Plan) RelayerCost() *big.Int {
	total := new(big.Int)
	for _, s := range p.Steps {
		total.Add(total, s.PaidByRelayer(p.GasPrice))
	}
	return total
}

// MakePlan reads each address's balance of each asset and plans how to
// move it. It fails if the wallet does not derive an address as listed:
// the key is then not the project's.
func MakePlan(ctx context.Context, cfg Config, addrs []Address, assets []Asset) (Plan, error) {
	p, chainNow, err := newPlan(ctx, cfg)
	if err != nil {
		return p, err
	}
	pl := &planner{cfg: cfg, p: &p, chainNow: chainNow}
	if err := pl.readAssets(ctx, assets); err != nil {
		return Plan{}, err
	}
	for _, a := range addrs {
		if err := pl.address(ctx, a); err != nil {
			return Plan{}, err
		}
	}
	return p, nil
}

// planner makes a plan (MakePlan): the assets on the chain, sorted as
// they are swept, and how each token moves.
type planner struct {
	cfg      Config
	p        *Plan
	chainNow time.Time
	assets   []Asset
	methods  map[common.Address]Method
	domains  map[common.Address]common.Hash
}

// readAssets keeps the assets on this chain (a token without a contract
// is a warning of the plan) and probes how each token moves.
func (pl *planner) readAssets(ctx context.Context, assets []Asset) error {
	c, cfg, p := pl.cfg.Chain, pl.cfg, pl.p
	pl.methods, pl.domains = map[common.Address]Method{}, map[common.Address]common.Hash{}
	var readable []Asset
	for _, a := range assets {
		if a.Native() {
			readable = append(readable, a)
			continue
		}
		if code, err := c.CodeAt(ctx, a.Token, nil); err != nil {
			return fmt.Errorf("code of %s: %w", a.Symbol, err)
		} else if len(code) == 0 {
			p.Warnings = append(p.Warnings, fmt.Sprintf("%s (%s): no contract at %s on this chain; not swept", a.Symbol, a.ID, a.Token))
			continue
		}
		readable = append(readable, a)
		m, d := probe(ctx, c, p.ChainID, a.Token)
		if m == Authorization && cfg.skip[Authorization] {
			m = Transfer
			if _, err := call[*big.Int](ctx, c, a.Token, "nonces", common.Address{1}); err == nil {
				m = Permit
			}
		}
		if m == Permit && cfg.skip[Permit] {
			m = Transfer
		}
		pl.methods[a.Token], pl.domains[a.Token] = m, d
	}
	// Tokens first, the native coin last: a transfer's gas comes out of
	// the native balance before the rest of it is swept.
	sort.SliceStable(readable, func(i, j int) bool { return !readable[i].Native() && readable[j].Native() })
	pl.assets = readable
	return nil
}

// address plans the steps of address a, one per asset it holds, after
// checking that the wallet derives it.
func (pl *planner) address(ctx context.Context, a Address) error {
	c, cfg := pl.cfg.Chain, pl.cfg
	_, derived, err := cfg.Wallet.Key(a.Index)
	if err != nil {
		return err
	}
	if derived != a.Address {
		return fmt.Errorf("the key derives %s at index %d, not the listed %s: it is not this project's deposit key for this environment (the account key, m/44'/60'/0')", derived, a.Index, a.Address)
	}
	native, err := c.BalanceAt(ctx, a.Address, nil)
	if err != nil {
		return fmt.Errorf("balance of %s: %w", a.Address, err)
	}
	available := new(big.Int).Set(native)
	for _, asset := range pl.assets {
		balance := native
		if !asset.Native() {
			if balance, err = call[*big.Int](ctx, c, asset.Token, "balanceOf", a.Address); err != nil {
				return fmt.Errorf("%s balance of %s: %w", asset.Symbol, a.Address, err)
			}
		}
		if balance.Sign() == 0 {
			continue
		}
		if !a.Ended {
			pl.skip(a, asset, balance, "its session still takes payments: sweep it once the session has ended")
			continue
		}
		step := Step{Index: a.Index, From: a.Address, Asset: asset, Amount: balance, TopUp: new(big.Int)}
		var ok bool
		if asset.Native() {
			step, ok, err = pl.nativeStep(ctx, a, step, available)
		} else {
			step, ok, err = pl.tokenStep(ctx, a, step, available)
		}
		if err != nil {
			return err
		}
		if ok {
			pl.p.Steps = append(pl.p.Steps, step)
		}
	}
	return nil
}

// skip records that amount of asset stays at a, and why.
func (pl *planner) skip(a Address, asset Asset, amount *big.Int, reason string) {
	pl.p.Skipped = append(pl.p.Skipped, Skip{Index: a.Index, From: a.Address, Asset: asset, Amount: amount, Reason: reason})
}

// nativeStep plans the move of what is available of a's native coin,
// less its gas; ok is false when nothing is to move.
func (pl *planner) nativeStep(ctx context.Context, a Address, step Step, available *big.Int) (Step, bool, error) {
	cfg := pl.cfg
	gas, err := cfg.Chain.EstimateGas(ctx, ethereum.CallMsg{From: a.Address, To: &cfg.Destination, Value: big.NewInt(1)})
	if err != nil {
		return step, false, fmt.Errorf("gas of a native transfer to %s: %w", cfg.Destination, err)
	}
	fee := new(big.Int).Mul(new(big.Int).SetUint64(gas), pl.p.GasPrice)
	if available.Sign() == 0 {
		return step, false, nil
	}
	if available.Cmp(fee) <= 0 {
		pl.skip(a, step.Asset, new(big.Int).Set(available), "dust: less than the gas to move it")
		return step, false, nil
	}
	step.Method, step.Gas, step.Fee = Native, gas, fee
	step.Amount = new(big.Int).Sub(available, fee)
	return step, true, nil
}

// tokenStep plans the move of a's balance of a token (step.Amount): by
// the token's own method with a relayer, else a transfer whose gas comes
// out of what is available of the native coin, topped up by the relayer
// when that is short; ok is false when the token stays.
func (pl *planner) tokenStep(ctx context.Context, a Address, step Step, available *big.Int) (Step, bool, error) {
	cfg, asset, balance, gasPrice := pl.cfg, step.Asset, step.Amount, pl.p.GasPrice
	gas, err := cfg.Chain.EstimateGas(ctx, ethereum.CallMsg{From: a.Address, To: &asset.Token, Data: pack("transfer", cfg.Destination, balance)})
	if err != nil {
		pl.skip(a, asset, balance, "its transfer fails on chain: "+err.Error())
		return step, false, nil
	}
	if m := pl.methods[asset.Token]; m != Transfer && cfg.Relayer != nil {
		step.Method, step.domain, step.Gas = m, pl.domains[asset.Token], relayedGas(m, gas)
		step.Fee = new(big.Int).Mul(new(big.Int).SetUint64(step.Gas), gasPrice)
		return step, true, nil
	}
	step.Method, step.Gas = Transfer, gas
	step.Fee = new(big.Int).Mul(new(big.Int).SetUint64(gas), gasPrice)
	switch {
	case available.Cmp(step.Fee) >= 0:
		available.Sub(available, step.Fee)
	case cfg.Relayer == nil:
		pl.skip(a, asset, balance, fmt.Sprintf("needs %s wei of gas the address lacks: give a relayer", new(big.Int).Sub(step.Fee, available)))
		return step, false, nil
	case pl.chainNow.Before(a.LateUntil):
		pl.skip(a, asset, balance, "needs a gas top-up, which would count as a payment of its session until "+
			a.LateUntil.UTC().Format(time.RFC3339)+": sweep it after that")
		return step, false, nil
	default:
		step.TopUp.Sub(step.Fee, available)
		available.SetUint64(0)
	}
	return step, true, nil
}

// newPlan starts a plan: the chain's ID, the gas price, the relayer's
// balance, and the chain's time (lateness is the chain's: a top-up is
// judged by its block's time).
func newPlan(ctx context.Context, cfg Config) (Plan, time.Time, error) {
	c := cfg.Chain
	chainID, err := c.ChainID(ctx)
	if err != nil {
		return Plan{}, time.Time{}, fmt.Errorf("chain ID: %w", err)
	}
	gasPrice := cfg.GasPrice
	if gasPrice == nil {
		suggested, err := c.SuggestGasPrice(ctx)
		if err != nil {
			return Plan{}, time.Time{}, fmt.Errorf("gas price: %w", err)
		}
		gasPrice = new(big.Int).Div(new(big.Int).Mul(suggested, big.NewInt(5)), big.NewInt(4))
	}
	head, err := c.HeaderByNumber(ctx, nil)
	if err != nil {
		return Plan{}, time.Time{}, fmt.Errorf("head: %w", err)
	}
	p := Plan{ChainID: chainID, Destination: cfg.Destination, GasPrice: gasPrice, RelayerBalance: new(big.Int)}
	if cfg.Relayer != nil {
		p.Relayer = crypto.PubkeyToAddress(cfg.Relayer.PublicKey)
		if p.RelayerBalance, err = c.BalanceAt(ctx, p.Relayer, nil); err != nil {
			return Plan{}, time.Time{}, fmt.Errorf("relayer balance: %w", err)
		}
	}
	return p, time.Unix(int64(head.Time), 0), nil
}

// PlanTransfer plans one transfer of exactly amount of asset from a
// deposit address to cfg.Destination (a refund's prepared transfer): the
// address's own transfer, or an authorisation or a permit the relayer
// sends, as a sweep would move it. It fails, saying why, when the address
// holds less than amount, or lacks the gas and no relayer may give it.
func PlanTransfer(ctx context.Context, cfg Config, a Address, asset Asset, amount *big.Int) (Plan, error) {
	c := cfg.Chain
	p, chainNow, err := newPlan(ctx, cfg)
	if err != nil {
		return p, err
	}
	if _, derived, err := cfg.Wallet.Key(a.Index); err != nil {
		return p, err
	} else if derived != a.Address {
		return p, fmt.Errorf("the key derives %s at index %d, not %s: it is not this project's deposit key for this environment (the account key, m/44'/60'/0')", derived, a.Index, a.Address)
	}
	native, err := c.BalanceAt(ctx, a.Address, nil)
	if err != nil {
		return p, fmt.Errorf("balance of %s: %w", a.Address, err)
	}
	step := Step{Index: a.Index, From: a.Address, Asset: asset, Amount: amount, TopUp: new(big.Int), Exact: true}
	if asset.Native() {
		gas, err := c.EstimateGas(ctx, ethereum.CallMsg{From: a.Address, To: &cfg.Destination, Value: amount})
		if err != nil {
			return p, fmt.Errorf("gas of the transfer to %s: %w", cfg.Destination, err)
		}
		step.Method, step.Gas, step.Fee = Native, gas, new(big.Int).Mul(new(big.Int).SetUint64(gas), p.GasPrice)
		if need := new(big.Int).Add(amount, step.Fee); native.Cmp(need) < 0 {
			return p, fmt.Errorf("%s holds %s, less than the transfer and its gas (%s)", a.Address, asset.Format(native), asset.Format(need))
		}
		p.Steps = []Step{step}
		return p, nil
	}
	balance, err := call[*big.Int](ctx, c, asset.Token, "balanceOf", a.Address)
	if err != nil {
		return p, fmt.Errorf("%s balance of %s: %w", asset.Symbol, a.Address, err)
	}
	if balance.Cmp(amount) < 0 {
		return p, fmt.Errorf("%s holds %s, less than the %s to send", a.Address, asset.Format(balance), asset.Format(amount))
	}
	gas, err := c.EstimateGas(ctx, ethereum.CallMsg{From: a.Address, To: &asset.Token, Data: pack("transfer", cfg.Destination, amount)})
	if err != nil {
		return p, fmt.Errorf("the transfer fails on chain: %w", err)
	}
	if m, d := probe(ctx, c, p.ChainID, asset.Token); m != Transfer && cfg.Relayer != nil {
		step.Method, step.domain, step.Gas = m, d, relayedGas(m, gas)
		step.Fee = new(big.Int).Mul(new(big.Int).SetUint64(step.Gas), p.GasPrice)
		p.Steps = []Step{step}
		return p, nil
	}
	step.Method, step.Gas = Transfer, gas
	step.Fee = new(big.Int).Mul(new(big.Int).SetUint64(gas), p.GasPrice)
	switch {
	case native.Cmp(step.Fee) >= 0:
	case cfg.Relayer == nil:
		return p, fmt.Errorf("%s needs %s wei of gas it lacks: give a relayer", a.Address, new(big.Int).Sub(step.Fee, native))
	case chainNow.Before(a.LateUntil):
		return p, fmt.Errorf("%s needs a gas top-up, which would count as a payment of its session until %s: send it after that, "+
			"or from a relayer of a token with authorisations or permits", a.Address, a.LateUntil.UTC().Format(time.RFC3339))
	default:
		step.TopUp.Sub(step.Fee, native)
	}
	p.Steps = []Step{step}
	return p, nil
}

// Print writes the plan for the merchant to read before anything is
// signed: each step, each balance left and why, the totals and the
// relayer's cost. native names the network's native coin.
func (p Plan) Print(w io.Writer, native Asset) {
	fmt.Fprintf(w, "Sweep to %s on chain %d, gas price %s gwei\n", p.Destination, p.ChainID,
		decimal.NewFromBigInt(p.GasPrice, -9).String())
	if len(p.Steps) == 0 {
		fmt.Fprintln(w, "Nothing to move.")
	} else {
		tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "INDEX\tADDRESS\tAMOUNT\tMETHOD\tGAS PAID BY")
		totals := map[string]*big.Int{}
		byAsset := map[string]Asset{}
		var ids []string
		for _, s := range p.Steps {
			payer := "the address"
			switch {
			case s.Method == Authorization || s.Method == Permit:
				payer = "the relayer"
			case s.Method == Transfer && s.TopUp.Sign() > 0:
				payer = "the address, topped up with " + native.Format(s.TopUp)
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", s.Index, s.From, s.Asset.Format(s.Amount), s.Method, payer)
			if totals[s.Asset.ID] == nil {
				totals[s.Asset.ID], byAsset[s.Asset.ID] = new(big.Int), s.Asset
				ids = append(ids, s.Asset.ID)
			}
			totals[s.Asset.ID].Add(totals[s.Asset.ID], s.Amount)
		}
		_ = tw.Flush()
		var parts []string
		for _, id := range ids {
			parts = append(parts, byAsset[id].Format(totals[id]))
		}
		fmt.Fprintf(w, "Total to %s: %s\n", p.Destination, strings.Join(parts, ", "))
	}
	if cost := p.RelayerCost(); cost.Sign() > 0 {
		fmt.Fprintf(w, "The relayer %s pays about %s (it holds %s)\n", p.Relayer, native.Format(cost), native.Format(p.RelayerBalance))
	}
	for _, warning := range p.Warnings {
		fmt.Fprintln(w, "Warning:", warning)
	}
	for _, s := range p.Skipped {
		fmt.Fprintf(w, "Left at index %d (%s): %s, %s\n", s.Index, s.From, s.Asset.Format(s.Amount), s.Reason)
	}
}

// ErrRelayerShort is returned by Execute when the relayer cannot pay
// for the plan.
var ErrRelayerShort = errors.New("the relayer holds less than the plan costs it")

var errNoOutput = errors.New("unexpected output")
