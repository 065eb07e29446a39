package payment

import (
	"math"
	"strconv"
	"strings"
)

// ParseInteger reads the text of a JSON number as JSON Schema's "integer"
// does: a number whose value is whole, however it is written (900, 900.0,
// 9e2, 9.00e2, 90000e-2, -0). whole is false for text that is not a JSON
// number and for a value with a fraction (900.5, 1e-400). fits is false
// for a whole value beyond int64; n is then its sign's bound. Nothing is
// rounded through a float, and a huge exponent costs no more than a short
// one.
func ParseInteger(s string) (n int64, whole, fits bool) {
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	mantissa, exponent := s, ""
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mantissa, exponent = s[:i], s[i+1:]
	}
	intPart, frac, dot := strings.Cut(mantissa, ".")
	if !digitsOnly(intPart) || len(intPart) > 1 && intPart[0] == '0' || dot && !digitsOnly(frac) {
		return 0, false, false
	}
	expNeg := false
	if exponent != "" || len(mantissa) < len(s) {
		if exponent != "" && (exponent[0] == '+' || exponent[0] == '-') {
			expNeg, exponent = exponent[0] == '-', exponent[1:]
		}
		if !digitsOnly(exponent) {
			return 0, false, false
		}
	}
	// The value is digits × 10^shift.
	digits := strings.TrimLeft(intPart+frac, "0")
	trimmed := strings.TrimRight(digits, "0")
	shift := int64(len(digits)-len(trimmed)) - int64(len(frac))
	digits = trimmed
	if digits == "" {
		return 0, true, true // zero, whatever its exponent
	}
	exponent = strings.TrimLeft(exponent, "0")
	if len(exponent) > 9 { // beyond any fraction or int64: 10^(10^9)
		if expNeg {
			return 0, false, false
		}
		return bound(neg), true, false
	}
	e, _ := strconv.ParseInt("0"+exponent, 10, 64)
	if expNeg {
		e = -e
	}
	shift += e
	switch {
	case shift < 0:
		return 0, false, false
	case int64(len(digits))+shift > 19:
		return bound(neg), true, false
	}
	u, err := strconv.ParseUint(digits+strings.Repeat("0", int(shift)), 10, 64)
	switch {
	case err != nil || !neg && u > math.MaxInt64 || neg && u > 1<<63:
		return bound(neg), true, false
	case neg && u == 1<<63:
		return math.MinInt64, true, true
	case neg:
		return -int64(u), true, true
	}
	return int64(u), true, true
}

func bound(neg bool) int64 {
	if neg {
		return math.MinInt64
	}
	return math.MaxInt64
}

func digitsOnly(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
