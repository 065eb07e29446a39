package payment

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

func TestTransactionTransitions(t *testing.T) {
	allowed := map[[2]TransactionStatus]bool{
		{TxPending, TxConfirmed}:   true,
		{TxPending, TxFailed}:      true,
		{TxConfirmed, TxFinalized}: true,
		{TxConfirmed, TxPending}:   true, // its block left the chain
		{TxFinalized, TxReversed}:  true, // its block left the chain past finality
		{TxReversed, TxConfirmed}:  true, // mined again
		{TxReversed, TxFailed}:     true, // reverted or double-spent when mined again
	}
	for _, from := range TransactionStatuses {
		for _, to := range TransactionStatuses {
			err := AdvanceTransaction(from, to)
			if allowed[[2]TransactionStatus{from, to}] != (err == nil) {
				t.Errorf("%s -> %s: err = %v", from, to, err)
			}
		}
	}
	if !TxFinalized.Terminal() || !TxFailed.Terminal() || TxConfirmed.Terminal() {
		t.Error("finalized and failed are the terminal statuses")
	}
}

func TestSessionTransitions(t *testing.T) {
	allowed := map[[2]SessionStatus]bool{
		{SessionOpen, SessionProcessing}: true, {SessionOpen, SessionCompleted}: true,
		{SessionOpen, SessionExpired}: true, {SessionOpen, SessionCanceled}: true,
		{SessionProcessing, SessionCompleted}: true, {SessionProcessing, SessionExpired}: true,
		{SessionProcessing, SessionOpen}: true,
	}
	for _, from := range SessionStatuses {
		for _, to := range SessionStatuses {
			err := AdvanceSession(from, to)
			if allowed[[2]SessionStatus{from, to}] != (err == nil) {
				t.Errorf("%s -> %s: err = %v", from, to, err)
			}
		}
	}
}

func TestQuoteRoundsUp(t *testing.T) {
	usdc := Asset{ID: "usdc", Symbol: "USDC", Decimals: 6, ChainID: 8453, TokenAddress: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"}
	eth := Asset{ID: "eth", Symbol: "ETH", Decimals: 18, ChainID: 1}
	cases := []struct {
		asset     Asset
		usd, rate string
		amount    string
		baseUnits string
		uriPrefix string
	}{
		{usdc, "12.345678", "1", "12.345678", "12345678", "ethereum:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913@8453/transfer?address=0xabc&uint256=12345678"},
		{usdc, "10", "3", "3.333334", "3333334", ""}, // 3.3333333… rounds up
		{eth, "100", "3000", "0.033333333333333334", "33333333333333334", "ethereum:0xabc@1?value=33333333333333334"},
		{eth, "3000", "3000", "1", "1000000000000000000", ""},
	}
	for _, c := range cases {
		o := Quote(c.asset, decimal.RequireFromString(c.usd), decimal.RequireFromString(c.rate), "0xabc")
		if o.Amount != c.amount || o.AmountBaseUnits != c.baseUnits {
			t.Errorf("%s %s USD at %s: %s (%s), want %s (%s)", c.asset.ID, c.usd, c.rate, o.Amount, o.AmountBaseUnits, c.amount, c.baseUnits)
		}
		if c.uriPrefix != "" && o.PaymentURI != c.uriPrefix {
			t.Errorf("uri = %s, want %s", o.PaymentURI, c.uriPrefix)
		}
		paid := decimal.RequireFromString(o.Amount).Mul(decimal.RequireFromString(c.rate))
		if paid.LessThan(decimal.RequireFromString(c.usd)) {
			t.Errorf("%s: paying %s is worth %s < %s USD", c.asset.ID, o.Amount, paid, c.usd)
		}
	}
}

func TestParseAndFormatUSD(t *testing.T) {
	for in, want := range map[string]string{"1": "1.00", "0.5": "0.50", "12.345678": "12.345678", "7.100": "7.10", "1000000000000": "1000000000000.00"} {
		d, msg := ParseUSD(in)
		if msg != "" || FormatUSD(d) != want {
			t.Errorf("%q: %q %q, want %q", in, FormatUSD(d), msg, want)
		}
	}
	for _, bad := range []string{"", "0", "0.0", "-1", "+1", "1e3", "01", "1.", ".5", "1.1234567", " 1", "1000000000000.01", "NaN"} {
		if _, msg := ParseUSD(bad); msg == "" {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestPlanEffectiveStatus(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := Plan{Status: PlanActive, ExpiresAt: &at}
	if p.EffectiveStatus(at.Add(-time.Second)) != PlanActive || p.EffectiveStatus(at) != PlanExpired {
		t.Error("an active plan expires at expiresAt")
	}
	p.Status = PlanArchived
	if p.EffectiveStatus(at.Add(time.Hour)) != PlanArchived {
		t.Error("an archived plan stays archived")
	}
}
