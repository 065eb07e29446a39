package payment

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// A plan's update checks every field it shares with creation as creation
// does: the same values are refused, with the same details, and the same
// values are taken.
func TestPlanUpdateChecksAsCreation(t *testing.T) {
	now := time.Now()
	str := func(s string) *string { return &s }
	catalog := Catalog{Assets: []Asset{{ID: "usdc-devnet", Network: "devnet", Decimals: 6, Price: PriceSource{Kind: PriceUSDPegged}},
		{ID: "usdc-base", Network: "base", Decimals: 6, IsLive: true, Price: PriceSource{Kind: PriceUSDPegged}}}}
	long := strings.Repeat("x", MaxTitleLength+1)
	cases := []struct {
		name string
		in   PlanInput
		ok   bool
	}{
		{"title", PlanInput{Title: str("Pro")}, true},
		{"blank title", PlanInput{Title: str("  ")}, false},
		{"long title", PlanInput{Title: str(long)}, false},
		{"redirect", PlanInput{RedirectURL: str("https://shop.example/thanks")}, true},
		{"no redirect", PlanInput{RedirectURL: str("")}, true},
		{"javascript redirect", PlanInput{RedirectURL: str("javascript:alert(1)")}, false},
		{"relative redirect", PlanInput{RedirectURL: str("/thanks")}, false},
		{"long redirect", PlanInput{RedirectURL: str("https://x.example/" + strings.Repeat("a", MaxURLLength))}, false},
		{"merchant info", PlanInput{MerchantInfo: &MerchantInfo{Name: "Shop", Email: "a@shop.example",
			Website: "http://shop.example", LogoURL: "https://shop.example/l.png"}}, true},
		{"javascript website", PlanInput{MerchantInfo: &MerchantInfo{Website: "javascript:alert(1)"}}, false},
		{"data website", PlanInput{MerchantInfo: &MerchantInfo{Website: "data:text/html,<script>alert(1)</script>"}}, false},
		{"long merchant name", PlanInput{MerchantInfo: &MerchantInfo{Name: long}}, false},
		{"bad merchant email", PlanInput{MerchantInfo: &MerchantInfo{Email: "nope"}}, false},
		{"http logo", PlanInput{MerchantInfo: &MerchantInfo{LogoURL: "http://shop.example/l.png"}}, false},
		{"everything wrong", PlanInput{Title: str(""), RedirectURL: str("ftp://x"), ExpiresAt: str("tomorrow"),
			MerchantInfo: &MerchantInfo{Name: long, Email: "x", Website: "javascript:void(0)", LogoURL: "ftp://x"}}, false},
		{"expiry", PlanInput{ExpiresAt: str(now.Add(time.Hour).Format(time.RFC3339))}, true},
		{"past expiry", PlanInput{ExpiresAt: str("2001-01-01T00:00:00Z")}, false},
		{"expiry not a date", PlanInput{ExpiresAt: str("tomorrow")}, false},
	}
	for _, live := range []bool{false, true} {
		for _, c := range cases {
			// Creation needs a title and a price; the update takes neither.
			create := c.in
			if create.Title == nil {
				create.Title = str("Plan")
			}
			create.AmountUSD = str("5")
			created, createErr := NewPlan(create, "proj_x", live, catalog, now)
			plan := Plan{Title: "Plan", IsLive: live, Status: PlanActive}
			updateErr := ChangePlan(&plan, c.in, now)
			if (createErr == nil) != c.ok || (updateErr == nil) != c.ok {
				t.Errorf("%s (live %v): create %v, update %v; want ok %v", c.name, live, createErr, updateErr, c.ok)
				continue
			}
			if !slices.Equal(problems(createErr), problems(updateErr)) {
				t.Errorf("%s (live %v): create refuses %v, update %v", c.name, live, problems(createErr), problems(updateErr))
			}
			if c.ok && (plan.Title != created.Title || plan.RedirectURL != created.RedirectURL ||
				plan.MerchantInfo != created.MerchantInfo || (plan.ExpiresAt == nil) != (created.ExpiresAt == nil)) {
				t.Errorf("%s (live %v): update stored %+v, creation %+v", c.name, live, plan, created)
			}
		}
	}
	// Live plans send payers to https only, whichever way the URL comes.
	plan := Plan{Title: "Plan", IsLive: true}
	if err := ChangePlan(&plan, PlanInput{RedirectURL: str("http://shop.example")}, now); !slices.Equal(problems(err), []FieldError{
		{Field: "redirectUrl", Message: "must be an https URL"}}) {
		t.Errorf("live http redirect on update: %v", err)
	}
}

func problems(err error) []FieldError {
	if err == nil {
		return nil
	}
	return err.(*Error).Details
}
