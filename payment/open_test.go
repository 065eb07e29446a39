package payment

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

var (
	openedAt = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	usdc     = Asset{ID: "usdc-eth", Symbol: "USDC", Decimals: 6, Network: "ethereum", ChainID: 1,
		TokenAddress: "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"}
	eth = Asset{ID: "eth", Symbol: "ETH", Decimals: 18, Network: "ethereum", ChainID: 1}
	btc = Asset{ID: "btc", Symbol: "BTC", Decimals: 8, Network: "bitcoin"}
)

func fixedPlan(usd string) Plan {
	d := decimal.RequireFromString(usd)
	return Plan{ID: "pp_1", ProjectID: "proj_1", Title: "Order", Status: PlanActive, PricingModel: PricingFixedUSD, AmountUSD: &d}
}

func priced(a Asset, rate string) AssetQuote {
	return AssetQuote{Asset: a, Rate: decimal.RequireFromString(rate), Priced: true}
}

func TestSessionTimes(t *testing.T) {
	for _, tc := range []struct {
		name                       string
		project, deployment, ttl   time.Duration
		late                       time.Duration
		wantExpiresIn, wantLateFor time.Duration
	}{
		{name: "nothing set: the default half hour", wantExpiresIn: DefaultSessionLifetime},
		{name: "the deployment's lifetime", deployment: time.Hour, wantExpiresIn: time.Hour},
		{name: "the project's lifetime over the deployment's", project: 10 * time.Minute, deployment: time.Hour, wantExpiresIn: 10 * time.Minute},
		{name: "a negative project lifetime is not a lifetime", project: -time.Minute, deployment: time.Hour, wantExpiresIn: time.Hour},
		{name: "a negative deployment lifetime falls back to the default", deployment: -time.Hour, wantExpiresIn: DefaultSessionLifetime},
		{name: "the plan's quote TTL replaces the lifetime", project: time.Hour, ttl: 2 * time.Minute, wantExpiresIn: 2 * time.Minute},
		{name: "the late window follows the expiry", project: time.Hour, late: 15 * time.Minute, wantExpiresIn: time.Hour, wantLateFor: 15 * time.Minute},
		{name: "the late window follows a quote TTL", ttl: 5 * time.Minute, late: time.Hour, wantExpiresIn: 5 * time.Minute, wantLateFor: time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := Plan{QuoteTTL: tc.ttl}
			project := Project{SessionLifetime: tc.project, LatePaymentWindow: tc.late}
			expires, late := SessionTimes(plan, project, tc.deployment, openedAt)
			if got := expires.Sub(openedAt); got != tc.wantExpiresIn {
				t.Errorf("the session expires after %v, want %v", got, tc.wantExpiresIn)
			}
			if got := late.Sub(expires); got != tc.wantLateFor {
				t.Errorf("late payments are taken for %v after expiry, want %v", got, tc.wantLateFor)
			}
		})
	}
}

func TestNewSessionRecordsTimesAndInput(t *testing.T) {
	email := "buyer@example.com"
	plan := fixedPlan("25.00")
	plan.QuoteTTL = 3 * time.Minute
	o, err := NewSession(SessionDraft{Input: SessionInput{Email: &email}, Plan: plan,
		Project: Project{LatePaymentWindow: time.Hour}, Quotes: []AssetQuote{priced(usdc, "1")}, Now: openedAt})
	if err != nil {
		t.Fatal(err)
	}
	s := o.Session
	if !s.ExpiresAt.Equal(openedAt.Add(3*time.Minute)) || !s.QuoteExpiresAt.Equal(s.ExpiresAt) || !s.LateUntil.Equal(s.ExpiresAt.Add(time.Hour)) {
		t.Errorf("expires %v, quote expires %v, late until %v", s.ExpiresAt, s.QuoteExpiresAt, s.LateUntil)
	}
	if s.Status != SessionOpen || s.Email != email || !s.AmountUSD.Equal(decimal.RequireFromString("25")) || s.ProjectID != "proj_1" {
		t.Errorf("session %+v", s)
	}
	if !strings.HasPrefix(s.ID, PrefixSession) || !ValidSessionToken(o.Token) || s.TokenHash != HashSecret(o.Token) {
		t.Errorf("id %q, token %q: the token does not open the session", s.ID, o.Token)
	}
}

func TestNewSessionRefuses(t *testing.T) {
	past := openedAt.Add(-time.Minute)
	expired := fixedPlan("10")
	expired.ExpiresAt = &past
	archived := fixedPlan("10")
	archived.Status = PlanArchived
	amount := "5.00"
	shared := Plan{ID: "pp_2", ProjectID: "proj_1", Status: PlanActive, PricingModel: PricingTokenAmount,
		RecipientAddress: "0x1111111111111111111111111111111111111111",
		TokenOptions:     []TokenOption{{AssetID: usdc.ID, AmountBaseUnits: "5000000"}}}
	for _, tc := range []struct {
		name   string
		draft  SessionDraft
		want   error
		wantIn string
	}{
		{name: "an expired plan", draft: SessionDraft{Plan: expired, Quotes: []AssetQuote{priced(usdc, "1")}}, want: ErrPlanExpired},
		{name: "an archived plan", draft: SessionDraft{Plan: archived, Quotes: []AssetQuote{priced(usdc, "1")}}, want: ErrPlanArchived},
		{name: "an amount for a fixed price", draft: SessionDraft{Plan: fixedPlan("10"), Input: SessionInput{AmountUSD: &amount},
			Quotes: []AssetQuote{priced(usdc, "1")}}, wantIn: "fixed price"},
		{name: "no asset quoted now", draft: SessionDraft{Plan: fixedPlan("10")}, wantIn: "no asset that can be quoted now"},
		{name: "a shared recipient's networks not served", draft: SessionDraft{Plan: shared}, wantIn: "not served by this deployment"},
		{name: "a shared recipient's assets without a price", draft: SessionDraft{Plan: shared, Quotes: []AssetQuote{{Asset: usdc}}},
			wantIn: "has a USD price now"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.draft.Now = openedAt
			_, err := NewSession(tc.draft)
			switch {
			case err == nil:
				t.Fatal("the session was opened")
			case tc.want != nil && !errors.Is(err, tc.want):
				t.Errorf("got %v, want %v", err, tc.want)
			case tc.wantIn != "" && !strings.Contains(errText(err), tc.wantIn):
				t.Errorf("got %q, want it to say %q", errText(err), tc.wantIn)
			}
		})
	}
}

// errText is an error with its field messages.
func errText(err error) string {
	var e *Error
	if !errors.As(err, &e) {
		return err.Error()
	}
	text := e.Message
	for _, d := range e.Details {
		text += "; " + d.Field + " " + d.Message
	}
	return text
}

func TestNewSessionOptions(t *testing.T) {
	quotes := []AssetQuote{priced(usdc, "1"), priced(eth, "2500"),
		{Asset: btc, Rate: decimal.RequireFromString("50000"), Priced: true, Confirmations: func(usd decimal.Decimal) int {
			if usd.LessThan(decimal.NewFromInt(100)) {
				return 1
			}
			return 3
		}}}
	for _, tc := range []struct {
		name        string
		quotes      []AssetQuote
		keys        DepositKeys
		wantSymbols string
		wantDeposit bool
		wantBitcoin bool
	}{
		{name: "EVM assets only: a deposit address", quotes: quotes[:2], wantSymbols: "USDC ETH", wantDeposit: true},
		{name: "bitcoin only: a Bitcoin address", quotes: quotes[2:], wantSymbols: "BTC", wantBitcoin: true},
		{name: "both kinds, both keys", quotes: quotes, keys: DepositKeys{EVM: true, Bitcoin: true},
			wantSymbols: "USDC ETH BTC", wantDeposit: true, wantBitcoin: true},
		{name: "both kinds, only a Bitcoin key: bitcoin alone", quotes: quotes, keys: DepositKeys{Bitcoin: true},
			wantSymbols: "BTC", wantBitcoin: true},
		{name: "both kinds, only an EVM key: EVM alone", quotes: quotes, keys: DepositKeys{EVM: true},
			wantSymbols: "USDC ETH", wantDeposit: true},
		// Neither address can be taken; the EVM one, taken first, names its key.
		{name: "both kinds, no key: both asked for", quotes: quotes, wantSymbols: "USDC ETH BTC", wantDeposit: true, wantBitcoin: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := NewSession(SessionDraft{Plan: fixedPlan("50.00"), Quotes: tc.quotes, Keys: tc.keys, Now: openedAt})
			if err != nil {
				t.Fatal(err)
			}
			var symbols []string
			for _, opt := range o.Session.PaymentOptions {
				symbols = append(symbols, opt.Symbol)
			}
			if got := strings.Join(symbols, " "); got != tc.wantSymbols {
				t.Errorf("offered %q, want %q", got, tc.wantSymbols)
			}
			if o.NeedsDepositAddress != tc.wantDeposit || o.NeedsBitcoinAddress != tc.wantBitcoin {
				t.Errorf("needs deposit %v, bitcoin %v", o.NeedsDepositAddress, o.NeedsBitcoinAddress)
			}
		})
	}
}

func TestOpeningWithAddresses(t *testing.T) {
	quotes := []AssetQuote{priced(usdc, "1"), {Asset: btc, Rate: decimal.RequireFromString("50000"), Priced: true,
		Confirmations: func(decimal.Decimal) int { return 2 }}}
	o, err := NewSession(SessionDraft{Plan: fixedPlan("25.00"), Quotes: quotes, Keys: DepositKeys{EVM: true, Bitcoin: true}, Now: openedAt})
	if err != nil {
		t.Fatal(err)
	}
	di, bi := int64(4), int64(9)
	s := o.WithAddresses(SessionAddresses{Deposit: "0x2222222222222222222222222222222222222222", DepositIndex: &di,
		Bitcoin: "bcrt1qexample", BitcoinIndex: &bi})
	if s.DepositAddress == "" || *s.DepositIndex != 4 || s.BitcoinAddress != "bcrt1qexample" || *s.BitcoinIndex != 9 {
		t.Fatalf("addresses %+v", s)
	}
	usdcOpt, btcOpt := s.PaymentOptions[0], s.PaymentOptions[1]
	if usdcOpt.Amount != "25" || usdcOpt.PaymentURI != "ethereum:"+usdc.TokenAddress+"@1/transfer?address="+s.DepositAddress+"&uint256=25000000" {
		t.Errorf("USDC option: %s, %s", usdcOpt.Amount, usdcOpt.PaymentURI)
	}
	if btcOpt.Amount != "0.0005" || btcOpt.DepositAddress != "bcrt1qexample" || btcOpt.PaymentURI != "bitcoin:bcrt1qexample?amount=0.0005&label=Order" ||
		btcOpt.Confirmations != 2 {
		t.Errorf("BTC option: %+v", btcOpt)
	}
	if o.Session.PaymentOptions[0].PaymentURI != "" {
		t.Error("finishing the session changed the decided one's options")
	}
}

func TestOpeningWithHeldAmounts(t *testing.T) {
	plan := Plan{ID: "pp_2", ProjectID: "proj_1", Status: PlanActive, PricingModel: PricingTokenAmount,
		RecipientAddress: "0x1111111111111111111111111111111111111111",
		TokenOptions: []TokenOption{{AssetID: "unserved", AmountBaseUnits: "1"}, {AssetID: eth.ID, AmountBaseUnits: "2000000000000000"},
			{AssetID: usdc.ID, AmountBaseUnits: "5000000"}}}
	// ETH's feed is down: the session's USD amount is USDC's.
	quotes := []AssetQuote{{Asset: eth, WalletAccountOnly: true}, priced(usdc, "1")}
	o, err := NewSession(SessionDraft{Plan: plan, Quotes: quotes, Now: openedAt})
	if err != nil {
		t.Fatal(err)
	}
	s := o.Session
	if !s.SharedRecipient || s.DepositAddress != plan.RecipientAddress || !s.AmountUSD.Equal(decimal.NewFromInt(5)) ||
		len(s.PaymentOptions) != 2 || !s.PaymentOptions[0].WalletAccountOnly {
		t.Fatalf("session %+v", s)
	}
	held := []PaymentOption{s.PaymentOptions[0], s.PaymentOptions[1]}
	held[1].AmountBaseUnits = "5000017" // made unique at the recipient
	s = o.WithHeldAmounts(held)
	if got := s.PaymentOptions[1]; got.Amount != "5.000017" || !strings.HasSuffix(got.PaymentURI, "&uint256=5000017") {
		t.Errorf("held USDC option: %s, %s", got.Amount, got.PaymentURI)
	}
	if got := s.PaymentOptions[0]; got.Amount != "0.002" || got.PaymentURI != "ethereum:"+plan.RecipientAddress+"@1?value=2000000000000000" {
		t.Errorf("held ETH option: %s, %s", got.Amount, got.PaymentURI)
	}
}

func TestSessionDue(t *testing.T) {
	lo, hi := decimal.RequireFromString("5"), decimal.RequireFromString("500")
	variable := Plan{Status: PlanActive, PricingModel: PricingVariableUSD, MinAmountUSD: &lo, MaxAmountUSD: &hi}
	token := Plan{Status: PlanActive, PricingModel: PricingTokenAmount, RecipientAddress: "0x1111111111111111111111111111111111111111"}
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		name    string
		plan    Plan
		amount  *string
		want    string
		refused string
	}{
		{name: "a fixed price is due", plan: fixedPlan("19.99"), want: "19.99"},
		{name: "a variable plan's amount", plan: variable, amount: str("42.50"), want: "42.5"},
		{name: "a variable plan without an amount", plan: variable, refused: "is required"},
		{name: "a variable plan's amount out of bounds", plan: variable, amount: str("600"), refused: "must be between"},
		{name: "a token plan asks nothing in USD", plan: token, want: "0"},
		{name: "a token plan refuses an amount", plan: token, amount: str("10"), refused: "priced in token amounts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			due, err := SessionDue(tc.plan, tc.amount, openedAt)
			if tc.refused != "" {
				if err == nil || !strings.Contains(errText(err), tc.refused) {
					t.Fatalf("got %v, want a refusal saying %q", err, tc.refused)
				}
				return
			}
			if err != nil || due.String() != tc.want {
				t.Errorf("due %s (%v), want %s", due, err, tc.want)
			}
		})
	}
}
