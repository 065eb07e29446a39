package payment

import (
	"slices"
	"testing"
	"time"
)

// The second shape's plan payload: each field checked, the failures
// named by field, token amounts in base units, the native coin as an empty
// or zero token address.
func TestTokenPlanValidation(t *testing.T) {
	str := func(s string) *string { return &s }
	num := func(n int64) *int64 { return &n }
	usdc := "0x5FbDB2315678afecb367f032d93F642f64180aa3"
	catalog := Catalog{Assets: []Asset{
		{ID: "usdc-devnet", Symbol: "USDC", Network: "devnet", ChainID: 1337, Decimals: 6, TokenAddress: usdc},
		{ID: "eth-devnet", Symbol: "ETH", Network: "devnet", ChainID: 1337, Decimals: 18},
		{ID: "usdc-base", Symbol: "USDC", Network: "base", ChainID: 8453, Decimals: 6, IsLive: true, TokenAddress: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"},
	}}
	recipient := "0x52908400098527886E0F7030069857D2E4169EE7" // EIP-55's own example
	opt := func(network, token, amount string) TokenOptionInput {
		return TokenOptionInput{NetworkID: str(network), TokenAddress: str(token), Amount: str(amount)}
	}
	valid := func() TokenPlanInput {
		return TokenPlanInput{Name: str("Sticker pack"), RecipientAddress: str(recipient), OptionsSent: true,
			PaymentOptions: []TokenOptionInput{opt("devnet", usdc, "4.5"), opt("1337", ZeroAddress, "0.002")}, QuoteTTL: num(900)}
	}
	p, err := NewPlan(PlanInput{Token: ptr(valid())}, "proj_x", false, catalog, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if p.PricingModel != PricingTokenAmount || p.RecipientAddress != recipient || p.QuoteTTL != 15*time.Minute || len(p.TokenOptions) != 2 ||
		p.TokenOptions[0].AmountBaseUnits != "4500000" || p.TokenOptions[1].AssetID != "eth-devnet" ||
		p.TokenOptions[1].AmountBaseUnits != "2000000000000000" || !p.SharedRecipient() {
		t.Fatalf("plan %+v", p)
	}
	lower := valid()
	lower.RecipientAddress = str("0x52908400098527886e0f7030069857d2e4169ee7")
	if p, err := NewPlan(PlanInput{Token: &lower}, "proj_x", false, catalog, time.Now()); err != nil || p.RecipientAddress != recipient {
		t.Fatalf("a lowercase address is taken and checksummed: %v %q", err, p.RecipientAddress)
	}

	cases := []struct {
		name  string
		edit  func(*TokenPlanInput)
		field string
	}{
		{"no name", func(in *TokenPlanInput) { in.Name = nil }, "name"},
		{"blank name", func(in *TokenPlanInput) { in.Name = str(" ") }, "name"},
		{"no recipient", func(in *TokenPlanInput) { in.RecipientAddress = nil }, "recipientAddress"},
		{"short recipient", func(in *TokenPlanInput) { in.RecipientAddress = str("0x1234") }, "recipientAddress"},
		{"bad checksum", func(in *TokenPlanInput) { in.RecipientAddress = str("0x52908400098527886e0F7030069857D2E4169EE7") }, "recipientAddress"},
		{"zero recipient", func(in *TokenPlanInput) { in.RecipientAddress = str(ZeroAddress) }, "recipientAddress"},
		{"no options", func(in *TokenPlanInput) { in.PaymentOptions, in.OptionsSent = nil, false }, "paymentOptions"},
		{"empty options", func(in *TokenPlanInput) { in.PaymentOptions = []TokenOptionInput{} }, "paymentOptions"},
		{"unknown network", func(in *TokenPlanInput) { in.PaymentOptions[0] = opt("moonnet", usdc, "1") }, "paymentOptions[0].networkId"},
		{"other environment", func(in *TokenPlanInput) { in.PaymentOptions[0] = opt("base", usdc, "1") }, "paymentOptions[0].networkId"},
		{"unknown token", func(in *TokenPlanInput) { in.PaymentOptions[0] = opt("devnet", recipient, "1") }, "paymentOptions[0].tokenAddress"},
		{"bad token", func(in *TokenPlanInput) { in.PaymentOptions[0] = opt("devnet", "usdc", "1") }, "paymentOptions[0].tokenAddress"},
		{"too fine", func(in *TokenPlanInput) { in.PaymentOptions[0] = opt("devnet", usdc, "1.0000001") }, "paymentOptions[0].amount"},
		{"zero amount", func(in *TokenPlanInput) { in.PaymentOptions[0] = opt("devnet", usdc, "0") }, "paymentOptions[0].amount"},
		{"exponent", func(in *TokenPlanInput) { in.PaymentOptions[0] = opt("devnet", usdc, "1e3") }, "paymentOptions[0].amount"},
		{"negative", func(in *TokenPlanInput) { in.PaymentOptions[0] = opt("devnet", usdc, "-1") }, "paymentOptions[0].amount"},
		{"no amount", func(in *TokenPlanInput) { in.PaymentOptions[0].Amount = nil }, "paymentOptions[0].amount"},
		{"twice", func(in *TokenPlanInput) { in.PaymentOptions[1] = opt("devnet", usdc, "5") }, "paymentOptions[1]"},
		{"short ttl", func(in *TokenPlanInput) { in.QuoteTTL = num(59) }, "quoteTtl"},
		{"long ttl", func(in *TokenPlanInput) { in.QuoteTTL = num(int64(MaxQuoteTTL/time.Second) + 1) }, "quoteTtl"},
		{"javascript redirect", func(in *TokenPlanInput) { in.RedirectURL = str("javascript:alert(1)") }, "redirectUrl"},
	}
	for _, c := range cases {
		in := valid()
		c.edit(&in)
		_, err := NewPlan(PlanInput{Token: &in}, "proj_x", false, catalog, time.Now())
		e, ok := err.(*Error)
		if !ok || e.Kind != KindValidation || !slices.ContainsFunc(e.Details, func(d FieldError) bool { return d.Field == c.field }) {
			t.Errorf("%s: %v, want a detail on %s", c.name, err, c.field)
		}
	}

	// An update changes the name and redirectUrl only.
	if err := ChangePlan(&p, PlanInput{Token: &TokenPlanInput{Name: str("Stickers"), RedirectURL: str("https://x.example")}}, time.Now()); err != nil || p.Title != "Stickers" {
		t.Fatalf("rename: %v %q", err, p.Title)
	}
	err = ChangePlan(&p, PlanInput{Token: &TokenPlanInput{RecipientAddress: str(recipient), QuoteTTL: num(60), OptionsSent: true}}, time.Now())
	if e, ok := err.(*Error); !ok || len(e.Details) != 3 {
		t.Fatalf("fixed fields: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }

func TestChecksumAddress(t *testing.T) {
	for _, a := range []string{"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
		"0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB", "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb"} {
		if got := ChecksumAddress(a); got != a {
			t.Errorf("ChecksumAddress(%s) = %s", a, got)
		}
	}
}
