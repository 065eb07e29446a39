package payment

import (
	"regexp"
	"strings"

	"github.com/shopspring/decimal"
)

// USDScale is the number of decimal places a USD amount may carry.
const USDScale = 6

// MaxUSD bounds every USD amount the engine accepts.
var MaxUSD = decimal.New(1, 12) // 1,000,000,000,000

var usdPattern = regexp.MustCompile(`^(0|[1-9][0-9]{0,12})(\.[0-9]{1,6})?$`)

// ParseUSD parses a USD amount: a plain decimal string ("12", "12.50"),
// positive, with at most six decimal places. No exponent, sign or spaces:
// money is never a float, and never guessed.
func ParseUSD(s string) (decimal.Decimal, string) {
	if !usdPattern.MatchString(s) {
		return decimal.Decimal{}, "must be a decimal string such as \"19.99\" with at most 6 decimal places"
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return decimal.Decimal{}, "must be a decimal string"
	}
	if !d.IsPositive() {
		return decimal.Decimal{}, "must be greater than 0"
	}
	if d.GreaterThan(MaxUSD) {
		return decimal.Decimal{}, "must be at most 1000000000000"
	}
	return d, ""
}

// FormatUSD renders a USD amount with two to six decimal places.
func FormatUSD(d decimal.Decimal) string {
	s := d.StringFixed(USDScale)
	for strings.HasSuffix(s, "0") && len(s)-strings.IndexByte(s, '.') > 3 {
		s = s[:len(s)-1]
	}
	return s
}
